import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { RunSource, SessionStatus } from '../../protocol/enums.js';
import { FINAL_STATUSES, sessionStatus, type ResultFlags } from '../session-status.js';
import type { JobSpec } from '../check-types/index.js';
import { laneOfJob } from '../../protocol/api-settings.js';
import type { RetryStrategy } from '../retry-strategy.js';
import { CHECK_MAY_ALERT, type CheckRow } from './checks.js';

export interface SessionRow {
  id: string;
  account_id: string;
  check_id: string;
  check_type: string;
  name: string;
  status: SessionStatus;
  run_source: RunSource;
  run_locations: string[];
  started_at: Date;
  stopped_at: Date | null;
  /** Set for the sessions of a group run, with their place in its order. */
  group_run_id: string | null;
  group_position: number | null;
  /**
   * Set on the sessions refreshSessionStatuses completes: whether the check
   * may alert (checksThatMayAlert), read in the same statement, so that the
   * many runs of checks that alert nowhere cost the alert judgement no query.
   */
  may_alert?: boolean;
}

export interface ResultRow extends ResultFlags {
  id: string;
  session_id: string;
  job_id: string;
  check_id: string;
  check_type: string;
  name: string;
  run_location: string;
  result_type: string;
  aborted: boolean;
  response_time: number | null;
  status_code: number | null;
  timings: Record<string, number | null> | null;
  error: { code: string; message: string } | null;
  assertions: unknown[];
  details: Record<string, unknown>;
  logs: unknown[];
  artifacts: unknown[];
  attempt: number;
  /** Retries before this result: 0 for a first run. */
  retries: number;
  started_at: Date | null;
  stopped_at: Date | null;
  created_at: Date;
}

export interface CheckSessionRecord {
  checkSessionId: string;
  checkSessionLink: string;
  checkId: string;
  checkType: string;
  name: string;
  status: SessionStatus;
  runSource: RunSource;
  runLocations: string[];
  startedAt: string;
  stoppedAt: string | null;
  timeElapsed: number;
  results: ResultSummary[];
}

/** Where a session stands in a group run: its jobs are held until the run gets to it. */
export interface GroupRunPlace {
  runId: string;
  position: number;
}

/**
 * A session with one job per private location, all in the caller's
 * transaction: queued, or held when the session is part of a group run.
 */
export async function startSession(
  tx: Queryable,
  check: CheckRow,
  runSource: RunSource,
  locations: ReadonlyMap<string, string>,
  spec: JobSpec & { retryStrategy?: RetryStrategy | null },
  groupRun?: GroupRunPlace,
): Promise<SessionRow> {
  const sessionId = randomUUID();
  const [session] = await tx.query<SessionRow>(
    `INSERT INTO check_sessions (id, account_id, check_id, check_type, name, status, run_source, run_locations,
                                 group_run_id, group_position)
     VALUES ($1, $2, $3, $4, $5, 'STARTED', $6, $7, $8, $9) RETURNING *`,
    [
      sessionId,
      check.account_id,
      check.id,
      check.check_type,
      check.name,
      runSource,
      JSON.stringify([...locations.keys()]),
      groupRun?.runId ?? null,
      groupRun?.position ?? null,
    ],
  );
  // The retry strategy travels with the job for the service's own use; the agent never gets it (toJob).
  const payload = {
    name: check.name,
    runSource,
    environmentVariables: spec.environmentVariables,
    settings: spec.settings,
    retryStrategy: spec.retryStrategy ?? null,
  };
  const lane = laneOfJob({ checkType: check.check_type, settings: spec.settings });
  for (const [slug, locationId] of locations) {
    await tx.query(
      `INSERT INTO jobs (id, session_id, account_id, check_id, private_location_id, run_location, check_type,
                         runtime_id, state, timeout_seconds, payload, lane)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $11, $9, $10, $12)`,
      [
        randomUUID(),
        sessionId,
        check.account_id,
        check.id,
        locationId,
        slug,
        check.check_type,
        spec.runtimeId,
        spec.timeoutSeconds,
        JSON.stringify(payload),
        groupRun ? 'held' : 'queued',
        lane,
      ],
    );
  }
  return session!;
}

/**
 * Recomputes the status of each session from its final results (a retried
 * attempt is no verdict: a retry of its location is under way), in two statements
 * whatever their number. Returns the rows this call moved to a final status,
 * so each completion is announced exactly once. Locks the sessions in id order.
 */
export async function refreshSessionStatuses(tx: Queryable, sessionIds: readonly string[]): Promise<SessionRow[]> {
  if (sessionIds.length === 0) return [];
  const current = await tx.query<{
    id: string;
    status: SessionStatus;
    total: number;
    claimed: boolean;
    results: ResultFlags[];
    last_stop: string | null;
  }>(
    `SELECT s.id, s.status,
            (SELECT count(*)::int FROM jobs j WHERE j.session_id = s.id AND j.retry = 0) AS total,
            EXISTS (SELECT 1 FROM jobs j WHERE j.session_id = s.id AND j.claimed_by <> '[]'::jsonb) AS claimed,
            COALESCE((SELECT jsonb_agg(jsonb_build_object('has_errors', r.has_errors, 'has_failures', r.has_failures,
                        'is_degraded', r.is_degraded, 'is_cancelled', r.is_cancelled, 'timed_out', r.timed_out))
                      FROM check_results r WHERE r.session_id = s.id AND r.result_type = 'FINAL'), '[]'::jsonb) AS results,
            (SELECT max(r.stopped_at) FROM check_results r WHERE r.session_id = s.id)::text AS last_stop
     FROM check_sessions s WHERE s.id = ANY($1::uuid[]) ORDER BY s.id FOR UPDATE`,
    [sessionIds],
  );
  const changes = current
    .filter((row) => !FINAL_STATUSES.has(row.status))
    .map((row) => ({ row, status: sessionStatus(row.total, row.results, row.claimed) }))
    .filter(({ row, status }) => status !== row.status);
  if (changes.length === 0) return [];
  const updated = await tx.query<SessionRow>(
    `UPDATE check_sessions s SET status = v.status,
       stopped_at = CASE WHEN v.final THEN GREATEST(s.started_at, COALESCE(v.last_stop, now())) END
     FROM unnest($1::uuid[], $2::text[], $3::boolean[], $4::timestamptz[]) AS v(id, status, final, last_stop)
     WHERE s.id = v.id
     RETURNING s.*, EXISTS (SELECT 1 FROM checks c WHERE c.id = s.check_id AND ${CHECK_MAY_ALERT}) AS may_alert`,
    [
      changes.map(({ row }) => row.id),
      changes.map(({ status }) => status),
      changes.map(({ status }) => FINAL_STATUSES.has(status)),
      changes.map(({ row }) => row.last_stop),
    ],
  );
  return updated.filter((row) => FINAL_STATUSES.has(row.status));
}

export async function getSessionRow(
  db: Queryable,
  accountId: string,
  sessionId: string,
): Promise<SessionRow | undefined> {
  const rows = await db.query<SessionRow>('SELECT * FROM check_sessions WHERE account_id = $1 AND id = $2', [
    accountId,
    sessionId,
  ]);
  return rows[0];
}

export async function getSessionRecord(
  db: Queryable,
  accountId: string,
  sessionId: string,
  baseUrl: string,
): Promise<CheckSessionRecord | undefined> {
  const session = await getSessionRow(db, accountId, sessionId);
  return session && sessionRecord(db, session, baseUrl);
}

export async function sessionRecord(db: Queryable, session: SessionRow, baseUrl: string): Promise<CheckSessionRecord> {
  const results = await db.query<ResultRow>(
    // Attempts a retry followed (resultType ATTEMPT) are shown too, before the location's FINAL result.
    'SELECT * FROM check_results WHERE session_id = $1 ORDER BY created_at, id',
    [session.id],
  );
  return buildSessionRecord(session, results, baseUrl);
}

/** What a session summary shows of its results: everything but the bulky detail. */
const SUMMARY_COLUMNS = `id, session_id, check_id, check_type, run_location, result_type, has_errors, has_failures,
  is_degraded, aborted, is_cancelled, name, response_time, status_code, timings, error, attempt, retries, started_at, stopped_at`;

/** One page of a check's sessions, newest first, each with its results so far: two statements. */
export async function listSessionRecords(
  db: Queryable,
  accountId: string,
  checkId: string,
  page: { limit: number; page: number },
  baseUrl: string,
): Promise<CheckSessionRecord[]> {
  const sessions = await db.query<SessionRow>(
    `SELECT * FROM check_sessions WHERE account_id = $1 AND check_id = $2
     ORDER BY started_at DESC, id DESC LIMIT $3 OFFSET $4`,
    [accountId, checkId, page.limit, (page.page - 1) * page.limit],
  );
  if (sessions.length === 0) return [];
  const results = await db.query<ResultRow>(
    `SELECT ${SUMMARY_COLUMNS} FROM check_results WHERE session_id = ANY($1::uuid[]) ORDER BY created_at, id`,
    [sessions.map((session) => session.id)],
  );
  return sessions.map((session) =>
    buildSessionRecord(
      session,
      results.filter((result) => result.session_id === session.id),
      baseUrl,
    ),
  );
}

function buildSessionRecord(session: SessionRow, results: readonly ResultRow[], baseUrl: string): CheckSessionRecord {
  const stoppedAt = session.stopped_at;
  return {
    checkSessionId: session.id,
    checkSessionLink: `${baseUrl}/v1/check-sessions/${session.id}`,
    checkId: session.check_id,
    checkType: session.check_type,
    name: session.name,
    status: session.status,
    runSource: session.run_source,
    runLocations: session.run_locations,
    startedAt: session.started_at.toISOString(),
    stoppedAt: stoppedAt?.toISOString() ?? null,
    timeElapsed: Math.max(0, (stoppedAt ?? new Date()).getTime() - session.started_at.getTime()),
    results: results.map((result) => resultSummary(result, baseUrl)),
  };
}

export interface ResultSummary {
  checkResultId: string;
  checkResultLink: string;
  checkId: string;
  checkType: string;
  runLocation: string;
  resultType: string;
  hasErrors: boolean;
  hasFailures: boolean;
  isDegraded: boolean;
  aborted: boolean;
  isCancelled: boolean;
  name: string;
  responseTime: number | null;
  statusCode: number | null;
  timings: Record<string, number | null> | null;
  error: { code: string; message: string } | null;
  attempt: number;
  retries: number;
  startedAt: string | null;
  stoppedAt: string | null;
}

export function resultSummary(result: ResultRow, baseUrl: string): ResultSummary {
  return {
    checkResultId: result.id,
    checkResultLink: `${baseUrl}/v1/check-sessions/${result.session_id}/results/${result.id}`,
    checkId: result.check_id,
    checkType: result.check_type,
    runLocation: result.run_location,
    resultType: result.result_type,
    hasErrors: result.has_errors,
    hasFailures: result.has_failures,
    isDegraded: result.is_degraded,
    aborted: result.aborted,
    isCancelled: result.is_cancelled,
    name: result.name,
    responseTime: result.response_time,
    statusCode: result.status_code,
    timings: result.timings,
    error: result.error,
    attempt: result.attempt,
    retries: result.retries,
    startedAt: result.started_at?.toISOString() ?? null,
    stoppedAt: result.stopped_at?.toISOString() ?? null,
  };
}
