import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import type { Job, Result } from '../../protocol/agent-api.js';
import type { CheckType, RunSource } from '../../protocol/enums.js';
import { laneOf } from '../../protocol/lanes.js';
import { refreshSessionStatuses, type SessionRow } from './sessions.js';

/** A job is tried at most this many times when its agent vanishes mid-run. */
export const MAX_ATTEMPTS = 2;
/** A job no agent picked up within this long is given up: its location times out. */
export const UNCLAIMED_EXPIRY_SECONDS = 360;

interface JobRow {
  id: string;
  session_id: string;
  check_id: string;
  check_type: CheckType;
  run_location: string;
  runtime_id: string | null;
  state: 'queued' | 'leased' | 'done';
  attempt: number;
  agent_id: string | null;
  claimed_by: string[];
  lease_expires_at: Date | null;
  scheduled_at: Date;
  timeout_seconds: number;
  payload: {
    name: string;
    runSource: RunSource;
    environmentVariables: Job['environmentVariables'];
    settings: Record<string, unknown>;
  };
}

export interface ClaimQuery {
  privateLocationId: string;
  agentId: string;
  checkTypes: readonly string[];
  runtimes: readonly string[];
  max: number;
  /** Room per lane, when the agent said; within `max` in all. */
  lanes?: { uptime: number; script: number };
  leaseSeconds: number;
}

/**
 * Leases up to `max` queued jobs the agent declared it can run, oldest first;
 * with `lanes`, at most that many of each lane, so an agent with one free
 * sandbox is not handed ten script jobs to sit on. One statement either way:
 * every claim of a busy agent pays for it.
 */
export async function claimJobs(db: Database, query: ClaimQuery): Promise<Job[]> {
  return db.transaction((tx) => claim(tx, query));
}

async function claim(db: Queryable, q: ClaimQuery): Promise<Job[]> {
  const uptimeTypes = q.checkTypes.filter((type) => laneOf(type as CheckType) === 'uptime');
  const scriptTypes = q.checkTypes.filter((type) => laneOf(type as CheckType) === 'script');
  // Script room (a few sandboxes at most) is served first, so a full `max` of
  // uptime room never crowds out the one script job an idle sandbox could take.
  const scriptRoom = q.lanes ? Math.min(q.lanes.script, q.max) : q.max;
  const uptimeRoom = q.lanes ? Math.min(q.lanes.uptime, q.max - scriptRoom) : q.max;
  const rows = await db.query<JobRow>(
    `WITH uptime AS (
       SELECT id, scheduled_at FROM jobs
       WHERE private_location_id = $3 AND state = 'queued' AND check_type = ANY($4::text[])
         AND (runtime_id IS NULL OR runtime_id = ANY($5::text[]))
       ORDER BY scheduled_at, id LIMIT $6 FOR UPDATE SKIP LOCKED
     ), script AS (
       SELECT id, scheduled_at FROM jobs
       WHERE private_location_id = $3 AND state = 'queued' AND check_type = ANY($7::text[])
         AND (runtime_id IS NULL OR runtime_id = ANY($5::text[]))
       ORDER BY scheduled_at, id LIMIT $8 FOR UPDATE SKIP LOCKED
     ), chosen AS (
       SELECT id FROM (SELECT * FROM uptime UNION ALL SELECT * FROM script) lanes
       ORDER BY scheduled_at, id LIMIT $9
     )
     UPDATE jobs j SET state = 'leased', agent_id = $1::uuid,
       claimed_by = CASE WHEN j.claimed_by ? $10::text THEN j.claimed_by ELSE j.claimed_by || to_jsonb($10::text) END,
       lease_expires_at = now() + make_interval(secs => $2)
     WHERE j.id IN (SELECT id FROM chosen)
     RETURNING j.*`,
    [q.agentId, q.leaseSeconds, q.privateLocationId, uptimeTypes, q.runtimes, Math.max(0, uptimeRoom), scriptTypes, Math.max(0, scriptRoom), q.max, q.agentId],
  );
  if (rows.length === 0) return [];
  // RETURNING follows no order; the agent runs what it gets in the order given, oldest first.
  rows.sort((a, b) => a.scheduled_at.getTime() - b.scheduled_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  await db.query(
    `UPDATE check_sessions SET status = 'PROGRESS' WHERE status = 'STARTED' AND id = ANY($1::uuid[])`,
    [[...new Set(rows.map((row) => row.session_id))]],
  );
  return rows.map(toJob);
}

function toJob(row: JobRow): Job {
  return {
    jobId: row.id,
    checkSessionId: row.session_id,
    checkId: row.check_id,
    checkType: row.check_type,
    name: row.payload.name,
    runLocation: row.run_location,
    runSource: row.payload.runSource,
    attempt: row.attempt,
    leaseExpiresAt: row.lease_expires_at!.toISOString(),
    timeoutSeconds: row.timeout_seconds,
    runtimeId: row.runtime_id,
    environmentVariables: row.payload.environmentVariables,
    settings: row.payload.settings,
  };
}

export async function extendLease(
  db: Queryable,
  privateLocationId: string,
  jobId: string,
  agentId: string,
  leaseSeconds: number,
): Promise<Date | undefined> {
  const rows = await db.query<{ lease_expires_at: Date }>(
    `UPDATE jobs SET lease_expires_at = now() + make_interval(secs => $4)
     WHERE id = $1 AND private_location_id = $2 AND state = 'leased' AND agent_id = $3
     RETURNING lease_expires_at`,
    [jobId, privateLocationId, agentId, leaseSeconds],
  );
  return rows[0]?.lease_expires_at;
}

/** Puts a leased job back in the queue, as it was; a release is not a failed attempt. */
export async function releaseJob(
  db: Queryable,
  privateLocationId: string,
  jobId: string,
  agentId: string,
): Promise<boolean> {
  const rows = await db.query(
    // Queued anew from now: a long job released late must not look unclaimed for hours.
    `UPDATE jobs SET state = 'queued', agent_id = NULL, lease_expires_at = NULL, scheduled_at = now()
     WHERE id = $1 AND private_location_id = $2 AND state = 'leased' AND agent_id = $3
     RETURNING id`,
    [jobId, privateLocationId, agentId],
  );
  return rows.length > 0;
}

export type RecordOutcome =
  | { kind: 'recorded' }
  | { kind: 'duplicate' }
  | { kind: 'conflict'; reason: string }
  | { kind: 'not-found' };

export interface RecordedBatch {
  /** In the order the results were given. */
  outcomes: RecordOutcome[];
  /** Sessions these results completed, each announced exactly once. */
  completedSessions: SessionRow[];
}

/**
 * Records results in one transaction. First result wins: an agent whose
 * lease ran out may still report, as long as nobody else has, since the work
 * was done and is worth keeping. Sessions are locked before jobs, each in id
 * order, so concurrent batches touching the same sessions cannot deadlock.
 */
export async function recordResults(
  tx: Queryable,
  privateLocationId: string,
  results: readonly Result[],
): Promise<RecordedBatch> {
  const jobIds = results.map((result) => result.jobId);
  await tx.query(
    `SELECT id FROM check_sessions WHERE id IN (
       SELECT session_id FROM jobs WHERE id = ANY($1::uuid[]) AND private_location_id = $2)
     ORDER BY id FOR UPDATE`,
    [jobIds, privateLocationId],
  );
  const jobs = await tx.query<JobRow & { account_id: string; recorded_by: string | null }>(
    `SELECT j.*, r.agent_id AS recorded_by FROM jobs j LEFT JOIN check_results r ON r.job_id = j.id
     WHERE j.id = ANY($1::uuid[]) AND j.private_location_id = $2 ORDER BY j.id FOR UPDATE OF j`,
    [jobIds, privateLocationId],
  );
  const byId = new Map(jobs.map((job) => [job.id, job]));
  const outcomes: RecordOutcome[] = [];
  const accepted: { job: JobRow & { account_id: string }; fields: ResultFields }[] = [];
  for (const result of results) {
    const job = byId.get(result.jobId);
    let outcome: RecordOutcome;
    if (!job) outcome = { kind: 'not-found' };
    else if (job.state === 'done') {
      outcome =
        job.recorded_by === result.agentId
          ? { kind: 'duplicate' }
          : { kind: 'conflict', reason: 'the job was already completed by another agent' };
    } else if (!job.claimed_by.includes(result.agentId)) {
      outcome = { kind: 'conflict', reason: 'the job is not leased to this agent' };
    } else {
      outcome = { kind: 'recorded' };
      accepted.push({ job, fields: fieldsOf(result) });
      // A second result for the same job in one batch is then a duplicate, not a second write.
      job.state = 'done';
      job.recorded_by = result.agentId;
    }
    outcomes.push(outcome);
  }
  await insertResults(tx, accepted);
  if (accepted.length > 0) {
    await tx.query(
      `UPDATE jobs SET state = 'done', completed_at = now(), lease_expires_at = NULL WHERE id = ANY($1::uuid[])`,
      [accepted.map(({ job }) => job.id)],
    );
  }
  const completedSessions = await refreshSessionStatuses(tx, [...new Set(accepted.map(({ job }) => job.session_id))]);
  return { outcomes, completedSessions };
}

function fieldsOf(result: Result): ResultFields {
  return {
    agentId: result.agentId,
    hasErrors: result.hasErrors,
    hasFailures: result.hasFailures,
    isDegraded: result.isDegraded,
    aborted: result.aborted,
    isCancelled: result.isCancelled,
    timedOut: false,
    responseTime: result.responseTime,
    statusCode: result.statusCode ?? null,
    timings: result.timings ?? null,
    error: result.error,
    assertions: result.assertions,
    details: result.details,
    logs: result.logs,
    artifacts: result.artifacts,
    startedAt: result.startedAt,
    stoppedAt: result.stoppedAt,
  };
}

export interface SweepOutcome {
  /** Locations whose jobs went back into the queue. */
  requeuedAt: Set<string>;
  completedSessions: SessionRow[];
}

/**
 * Re-offers jobs whose lease ran out (their agent died or lost the network),
 * and gives up on jobs past their last attempt or never picked up in time.
 */
export async function sweepJobs(tx: Queryable): Promise<SweepOutcome> {
  const requeued = await tx.query<{ private_location_id: string }>(
    `UPDATE jobs SET state = 'queued', agent_id = NULL, lease_expires_at = NULL, attempt = attempt + 1,
       scheduled_at = now()
     WHERE state = 'leased' AND lease_expires_at < now() AND attempt < $1
     RETURNING private_location_id`,
    [MAX_ATTEMPTS],
  );
  const givenUp = await tx.query<JobRow & { account_id: string; reason: string }>(
    `UPDATE jobs SET state = 'done', completed_at = now(), lease_expires_at = NULL
     WHERE (state = 'leased' AND lease_expires_at < now() AND attempt >= $1)
        OR (state = 'queued' AND scheduled_at < now() - make_interval(secs => $2))
     RETURNING *, CASE WHEN agent_id IS NULL THEN 'unclaimed' ELSE 'lease' END AS reason`,
    [MAX_ATTEMPTS, UNCLAIMED_EXPIRY_SECONDS],
  );
  await insertResults(
    tx,
    givenUp.map((job) => ({
      job,
      fields: {
        agentId: null,
        hasErrors: true,
        hasFailures: false,
        isDegraded: false,
        aborted: false,
        isCancelled: false,
        timedOut: true,
        responseTime: null,
        statusCode: null,
        timings: null,
        error: {
          code: 'TIMED_OUT',
          message:
            job.reason === 'unclaimed'
              ? `No agent at private location "${job.run_location}" picked the job up within ${UNCLAIMED_EXPIRY_SECONDS} s`
              : `The agent running the job stopped reporting ${job.attempt} times; giving up`,
        },
        assertions: [],
        details: {},
        logs: [],
        artifacts: [],
        startedAt: null,
        stoppedAt: new Date().toISOString(),
      },
    })),
  );
  const completedSessions = await refreshSessionStatuses(tx, [...new Set(givenUp.map((job) => job.session_id))]);
  return { requeuedAt: new Set(requeued.map((row) => row.private_location_id)), completedSessions };
}

/**
 * Cancels what is left of a session: every job not done yet is done, with a
 * cancelled result for its location. An agent running one learns it on its
 * next lease extension (409) and stops; its late result is then a conflict.
 * Undefined when the session is not the account's.
 */
export async function cancelSessionJobs(
  tx: Queryable,
  accountId: string,
  sessionId: string,
): Promise<{ cancelled: number; completedSessions: SessionRow[] } | undefined> {
  const [session] = await tx.query<{ id: string }>(
    'SELECT id FROM check_sessions WHERE id = $1 AND account_id = $2 FOR UPDATE',
    [sessionId, accountId],
  );
  if (!session) return undefined;
  const ended = await tx.query<JobRow & { account_id: string }>(
    `UPDATE jobs SET state = 'done', completed_at = now(), lease_expires_at = NULL
     WHERE session_id = $1 AND state <> 'done' RETURNING *`,
    [sessionId],
  );
  const stoppedAt = new Date().toISOString();
  await insertResults(
    tx,
    ended.map((job) => ({
      job,
      fields: {
        // The service ended it, not the agent: the agent's own result for it is then a conflict, not a duplicate.
        agentId: null,
        hasErrors: false,
        hasFailures: false,
        isDegraded: false,
        aborted: true,
        isCancelled: true,
        timedOut: false,
        responseTime: null,
        statusCode: null,
        timings: null,
        error: {
          code: 'CANCELLED',
          message: job.state === 'leased' ? 'Cancelled while an agent was running it' : 'Cancelled before any agent ran it',
        },
        assertions: [],
        details: {},
        logs: [],
        artifacts: [],
        startedAt: null,
        stoppedAt,
      },
    })),
  );
  return { cancelled: ended.length, completedSessions: await refreshSessionStatuses(tx, [sessionId]) };
}

interface ResultFields {
  agentId: string | null;
  hasErrors: boolean;
  hasFailures: boolean;
  isDegraded: boolean;
  aborted: boolean;
  isCancelled: boolean;
  timedOut: boolean;
  responseTime: number | null;
  statusCode: number | null;
  timings: Result['timings'];
  error: Result['error'];
  assertions: Result['assertions'];
  details: Result['details'];
  logs: Result['logs'];
  artifacts: Result['artifacts'];
  startedAt: string | null;
  stoppedAt: string | null;
}

/** The one place location results are written, whether an agent sent them or the service gave up. */
async function insertResults(
  tx: Queryable,
  rows: readonly { job: JobRow & { account_id: string }; fields: ResultFields }[],
): Promise<void> {
  if (rows.length === 0) return;
  const records = rows.map(({ job, fields }) => ({
    id: randomUUID(),
    session_id: job.session_id,
    job_id: job.id,
    account_id: job.account_id,
    check_id: job.check_id,
    check_type: job.check_type,
    name: job.payload.name,
    run_location: job.run_location,
    has_errors: fields.hasErrors,
    has_failures: fields.hasFailures,
    is_degraded: fields.isDegraded,
    aborted: fields.aborted,
    is_cancelled: fields.isCancelled,
    timed_out: fields.timedOut,
    response_time: fields.responseTime,
    status_code: fields.statusCode,
    timings: fields.timings,
    error: fields.error,
    assertions: fields.assertions,
    details: fields.details,
    logs: fields.logs,
    artifacts: fields.artifacts,
    agent_id: fields.agentId,
    attempt: job.attempt,
    started_at: fields.startedAt,
    stopped_at: fields.stoppedAt,
  }));
  // One statement for the whole batch: the rows travel as one JSON document.
  await tx.query(
    `INSERT INTO check_results (id, session_id, job_id, account_id, check_id, check_type, name, run_location,
        has_errors, has_failures, is_degraded, aborted, is_cancelled, timed_out, response_time, status_code, timings,
        error, assertions, details, logs, artifacts, agent_id, attempt, started_at, stopped_at)
     SELECT id, session_id, job_id, account_id, check_id, check_type, name, run_location,
        has_errors, has_failures, is_degraded, aborted, is_cancelled, timed_out, response_time, status_code, timings,
        error, COALESCE(assertions, '[]'), COALESCE(details, '{}'), COALESCE(logs, '[]'), COALESCE(artifacts, '[]'),
        agent_id, attempt, started_at, stopped_at
     FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, session_id uuid, job_id uuid, account_id uuid, check_id uuid,
        check_type text, name text, run_location text, has_errors boolean, has_failures boolean, is_degraded boolean,
        aborted boolean, is_cancelled boolean, timed_out boolean, response_time double precision, status_code integer,
        timings jsonb, error jsonb, assertions jsonb, details jsonb, logs jsonb, artifacts jsonb, agent_id uuid,
        attempt integer, started_at timestamptz, stopped_at timestamptz)`,
    [JSON.stringify(records)],
  );
}
