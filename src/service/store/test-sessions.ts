import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { CheckType, RunSource, SessionStatus } from '../../protocol/enums.js';
import { laneOfJob } from '../../protocol/api-settings.js';
import type { JobSpec } from '../check-types/index.js';
import type { RetryStrategy } from '../retry-strategy.js';
import type { ResultRow } from './sessions.js';

export type TestSessionProvider = 'API' | 'TRIGGER';

export interface TestSessionRow {
  id: string;
  account_id: string;
  name: string;
  provider: TestSessionProvider;
  check_run_suite_id: string;
  private_location_id: string | null;
  run_location: string;
  recorded: boolean;
  project_logical_id: string | null;
  repo_info: Record<string, unknown> | null;
  environment: string | null;
  started_at: Date;
}

export type TestSessionStatus = 'RUNNING' | 'PASSED' | 'FAILED' | 'CANCELLED';

/** A test session with what its check sessions say of it. */
export interface TestSessionSummaryRow extends TestSessionRow {
  status: TestSessionStatus;
  /** When its last check session stopped; null while one runs. */
  stopped_at: Date | null;
  checks: { name: string; status: SessionStatus }[];
}

export interface TestSessionCheckRow {
  sequence_id: string;
  check_run_id: string;
  check_session_id: string;
  check_id: string | null;
  name: string;
  check_type: CheckType;
  status: SessionStatus;
  claimed: boolean;
}

export interface TestResultRow extends ResultRow {
  sequence_id: string;
  check_run_id: string;
}

export async function insertTestSession(
  tx: Queryable,
  session: {
    accountId: string;
    name: string;
    provider: TestSessionProvider;
    checkRunSuiteId: string;
    privateLocationId: string;
    runLocation: string;
    recorded: boolean;
    projectLogicalId: string | null;
    repoInfo: unknown;
    environment: string | null;
  },
): Promise<TestSessionRow> {
  const [row] = await tx.query<TestSessionRow>(
    `INSERT INTO test_sessions (id, account_id, name, provider, check_run_suite_id, private_location_id, run_location,
                                recorded, project_logical_id, repo_info, environment)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [
      randomUUID(),
      session.accountId,
      session.name,
      session.provider,
      session.checkRunSuiteId,
      session.privateLocationId,
      session.runLocation,
      session.recorded,
      session.projectLogicalId,
      session.repoInfo === null || session.repoInfo === undefined ? null : JSON.stringify(session.repoInfo),
      session.environment,
    ],
  );
  return row!;
}

export interface TestCheckRun {
  testSession: TestSessionRow;
  sequenceId: string;
  checkRunId: string;
  /** The stored check a trigger runs; null for a definition only the CLI has. */
  checkId: string | null;
  logicalId: string | null;
  filePath: string | null;
  position: number;
  checkType: CheckType;
  name: string;
  runSource: RunSource;
  spec: JobSpec & { retryStrategy: RetryStrategy | null };
}

/**
 * One check of a test session: its check session, one job at the session's
 * private location, and its place in the test session. The job and its
 * results name the stored check, or else the sequence id.
 */
export async function insertTestCheckRun(tx: Queryable, run: TestCheckRun): Promise<void> {
  const session = run.testSession;
  const checkSessionId = randomUUID();
  await tx.query(
    `INSERT INTO check_sessions (id, account_id, check_id, check_type, name, status, run_source, run_locations)
     VALUES ($1, $2, $3, $4, $5, 'STARTED', $6, $7)`,
    [checkSessionId, session.account_id, run.checkId, run.checkType, run.name, run.runSource, JSON.stringify([session.run_location])],
  );
  const payload = {
    name: run.name,
    runSource: run.runSource,
    environmentVariables: run.spec.environmentVariables,
    settings: run.spec.settings,
    retryStrategy: run.spec.retryStrategy,
  };
  await tx.query(
    `INSERT INTO jobs (id, session_id, account_id, check_id, private_location_id, run_location, check_type,
                       runtime_id, state, timeout_seconds, payload, lane)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'queued', $9, $10, $11)`,
    [
      randomUUID(),
      checkSessionId,
      session.account_id,
      run.checkId ?? run.sequenceId,
      session.private_location_id,
      session.run_location,
      run.checkType,
      run.spec.runtimeId,
      run.spec.timeoutSeconds,
      JSON.stringify(payload),
      laneOfJob({ checkType: run.checkType, settings: run.spec.settings }),
    ],
  );
  await tx.query(
    `INSERT INTO test_session_checks (sequence_id, test_session_id, check_session_id, check_run_id, check_id, logical_id,
                                      file_path, position)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [run.sequenceId, session.id, checkSessionId, run.checkRunId, run.checkId, run.logicalId, run.filePath, run.position],
  );
}

export async function testSessionBySuite(
  db: Queryable,
  accountId: string,
  checkRunSuiteId: string,
): Promise<TestSessionRow | undefined> {
  const [row] = await db.query<TestSessionRow>(
    'SELECT * FROM test_sessions WHERE account_id = $1 AND check_run_suite_id = $2',
    [accountId, checkRunSuiteId],
  );
  return row;
}

/** Each check of the session, in the order it was sent, with whether an agent took its job. */
export async function testSessionChecks(db: Queryable, testSessionId: string): Promise<TestSessionCheckRow[]> {
  return db.query<TestSessionCheckRow>(
    `SELECT t.sequence_id, t.check_run_id, t.check_session_id, t.check_id, s.name, s.check_type, s.status,
            EXISTS (SELECT 1 FROM jobs j WHERE j.session_id = s.id AND j.claimed_by <> '[]'::jsonb) AS claimed
       FROM test_session_checks t JOIN check_sessions s ON s.id = t.check_session_id
      WHERE t.test_session_id = $1
      ORDER BY t.position`,
    [testSessionId],
  );
}

/** The session's results, attempts included, but those whose ids are in `except`. */
export async function testSessionResults(
  db: Queryable,
  testSessionId: string,
  except: readonly string[] = [],
): Promise<TestResultRow[]> {
  return db.query<TestResultRow>(
    `SELECT r.*, t.sequence_id, t.check_run_id
       FROM test_session_checks t JOIN check_results r ON r.session_id = t.check_session_id
      WHERE t.test_session_id = $1 AND NOT (r.id = ANY($2::uuid[]))
      ORDER BY r.created_at, r.id`,
    [testSessionId, except],
  );
}

export async function testSessionResult(
  db: Queryable,
  accountId: string,
  testSessionId: string,
  resultId: string,
): Promise<TestResultRow | undefined> {
  const [row] = await db.query<TestResultRow>(
    `SELECT r.*, t.sequence_id, t.check_run_id
       FROM test_sessions ts
       JOIN test_session_checks t ON t.test_session_id = ts.id
       JOIN check_results r ON r.session_id = t.check_session_id
      WHERE ts.id = $1 AND ts.account_id = $2 AND ts.recorded AND r.id = $3`,
    [testSessionId, accountId, resultId],
  );
  return row;
}

/**
 * RUNNING while a check session is not final; CANCELLED when all were
 * cancelled; FAILED when one failed or timed out; else PASSED (degraded
 * checks passed).
 */
const SUMMARY = `SELECT * FROM (
  SELECT ts.*, agg.checks,
    CASE WHEN agg.running THEN 'RUNNING' WHEN agg.all_cancelled THEN 'CANCELLED' WHEN agg.failed THEN 'FAILED' ELSE 'PASSED' END AS status,
    CASE WHEN agg.running THEN NULL ELSE agg.last_stop END AS stopped_at
  FROM test_sessions ts
  CROSS JOIN LATERAL (
    SELECT COALESCE(jsonb_agg(jsonb_build_object('name', s.name, 'status', s.status) ORDER BY t.position), '[]'::jsonb) AS checks,
           COALESCE(bool_or(s.status NOT IN ('PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED')), false) AS running,
           COALESCE(bool_and(s.status = 'CANCELLED'), false) AS all_cancelled,
           COALESCE(bool_or(s.status IN ('FAILED', 'TIMED_OUT')), false) AS failed,
           max(s.stopped_at) AS last_stop
      FROM test_session_checks t JOIN check_sessions s ON s.id = t.check_session_id
     WHERE t.test_session_id = ts.id
  ) agg
) summary`;

/** A recorded test session of the account. */
export async function getTestSessionSummary(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<TestSessionSummaryRow | undefined> {
  const [row] = await db.query<TestSessionSummaryRow>(`${SUMMARY} WHERE id = $1 AND account_id = $2 AND recorded`, [id, accountId]);
  return row;
}

export interface TestSessionPage {
  limit: number;
  /** Sessions started before this one (the previous page's last). */
  after?: { startedAt: Date; id: string } | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  statuses?: readonly TestSessionStatus[] | undefined;
  providers?: readonly TestSessionProvider[] | undefined;
  branches?: readonly string[] | undefined;
  /** Commit owners; `noUsers` adds sessions with none. */
  users?: readonly string[] | undefined;
  noUsers?: boolean | undefined;
  search?: string | undefined;
}

/** Recorded sessions, newest first; one more than `limit` tells the caller a next page exists. */
export async function listTestSessionSummaries(
  db: Queryable,
  accountId: string,
  page: TestSessionPage,
): Promise<TestSessionSummaryRow[]> {
  const people = page.users !== undefined || page.noUsers === true;
  return db.query<TestSessionSummaryRow>(
    `${SUMMARY}
     WHERE account_id = $1 AND recorded
       AND ($2::timestamptz IS NULL OR (started_at, id) < ($2::timestamptz, $3::uuid))
       AND ($4::timestamptz IS NULL OR started_at >= $4::timestamptz)
       AND ($5::timestamptz IS NULL OR started_at < $5::timestamptz)
       AND ($6::text[] IS NULL OR status = ANY($6::text[]))
       AND ($7::text[] IS NULL OR provider = ANY($7::text[]))
       AND ($8::text[] IS NULL OR repo_info ->> 'branchName' = ANY($8::text[]))
       AND (NOT $9::boolean OR repo_info ->> 'commitOwner' = ANY($10::text[])
            OR ($11::boolean AND repo_info ->> 'commitOwner' IS NULL))
       AND ($12::text IS NULL OR strpos(lower(name), lower($12::text)) > 0)
     ORDER BY started_at DESC, id DESC
     LIMIT $13`,
    [
      accountId,
      page.after?.startedAt ?? null,
      page.after?.id ?? null,
      page.from ?? null,
      page.to ?? null,
      page.statuses ? [...page.statuses] : null,
      page.providers ? [...page.providers] : null,
      page.branches ? [...page.branches] : null,
      people,
      [...(page.users ?? [])],
      page.noUsers === true,
      page.search ?? null,
      page.limit + 1,
    ],
  );
}

export async function testSessionStart(db: Queryable, accountId: string, id: string): Promise<Date | undefined> {
  const [row] = await db.query<{ started_at: Date }>('SELECT started_at FROM test_sessions WHERE id = $1 AND account_id = $2', [
    id,
    accountId,
  ]);
  return row?.started_at;
}

/** The check sessions of a test session of the account, for cancelling; undefined when it is not the account's. */
export async function testSessionCheckSessionIds(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<string[] | undefined> {
  const rows = await db.query<{ check_session_id: string | null }>(
    `SELECT t.check_session_id FROM test_sessions ts LEFT JOIN test_session_checks t ON t.test_session_id = ts.id
      WHERE ts.id = $1 AND ts.account_id = $2`,
    [id, accountId],
  );
  if (rows.length === 0) return undefined;
  return rows.flatMap((row) => (row.check_session_id ? [row.check_session_id] : []));
}

/**
 * Forgets a session that was not to be recorded: its runs of definitions only
 * the CLI had go with it (jobs and results too); runs of stored checks stay
 * in those checks' history.
 */
export async function deleteUnrecordedTestSession(tx: Queryable, id: string): Promise<void> {
  await tx.query(
    `DELETE FROM check_sessions WHERE check_id IS NULL AND id IN (
       SELECT t.check_session_id FROM test_session_checks t JOIN test_sessions ts ON ts.id = t.test_session_id
        WHERE ts.id = $1 AND NOT ts.recorded)`,
    [id],
  );
  await tx.query('DELETE FROM test_sessions WHERE id = $1 AND NOT recorded', [id]);
}
