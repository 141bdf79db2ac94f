import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import type { Job, Result } from '../../protocol/agent-api.js';
import type { CheckType, RunSource } from '../../protocol/enums.js';
import { retryDelay, type RetryStrategy } from '../retry-strategy.js';
import type { DestinationPolicyLists } from './private-locations.js';
import { refreshSessionStatuses, type SessionRow } from './sessions.js';

/** A job is tried at most this many times when its agent vanishes mid-run. */
export const MAX_ATTEMPTS = 2;
/** A job no agent picked up within this long is given up: its location times out. */
export const UNCLAIMED_EXPIRY_SECONDS = 360;
/** An agent seen this recently (a claim or a heartbeat) and not stopped is at its location now. */
const LIVE_AGENT_SECONDS = 90;
/** How long a job no live agent can run waits anyway: an agent with what it needs may be saying hello right now. */
const UNRUNNABLE_GRACE_SECONDS = 10;

interface JobRow {
  id: string;
  session_id: string;
  check_id: string;
  check_type: CheckType;
  run_location: string;
  runtime_id: string | null;
  state: 'queued' | 'leased' | 'done';
  /** Lease attempt: an agent that vanished mid-run spent one. */
  attempt: number;
  /** Retries of this location before this job: 0 for the first run. */
  retry: number;
  lane: 'uptime' | 'script';
  private_location_id: string;
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
    /** The service's own: never part of what the agent gets. */
    retryStrategy?: RetryStrategy | null;
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
export async function claimJobs(
  db: Database,
  query: ClaimQuery,
): Promise<{ jobs: Job[]; destinationPolicy: DestinationPolicyLists } | undefined> {
  return db.transaction(async (tx) => {
    // Shared with other claims, exclusive with a goodbye: a goodbye waits for a
    // claim in flight to commit, then releases what it leased too. The
    // location's destination policy comes along, as stored now (a long poll
    // that started before a change must not hand out the old one).
    const [agent] = await tx.query<{ allowed_destinations: string[] | null; denied_destinations: string[] | null }>(
      `SELECT pl.allowed_destinations, pl.denied_destinations
       FROM agents a JOIN private_locations pl ON pl.id = a.private_location_id
       WHERE a.id = $1 AND a.private_location_id = $2 AND a.stopped_at IS NULL FOR SHARE OF a`,
      [query.agentId, query.privateLocationId],
    );
    if (!agent) return undefined;
    return {
      jobs: await claim(tx, query),
      destinationPolicy: { allowed: agent.allowed_destinations ?? [], denied: agent.denied_destinations ?? [] },
    };
  });
}

async function claim(db: Queryable, q: ClaimQuery): Promise<Job[]> {
  // Script room (a few sandboxes at most) is served first, so a full `max` of
  // uptime room never crowds out the one script job an idle sandbox could take.
  const scriptRoom = q.lanes ? Math.min(q.lanes.script, q.max) : q.max;
  const uptimeRoom = q.lanes ? Math.min(q.lanes.uptime, q.max - scriptRoom) : q.max;
  // Each job carries its lane (laneOfJob when it was made: an API check with
  // scripts is a script job); the agent's check types and runtimes still
  // decide what it may run. A retry waits for its backoff to pass.
  const rows = await db.query<JobRow>(
    `WITH uptime AS (
       SELECT id, scheduled_at FROM jobs
       WHERE private_location_id = $3 AND state = 'queued' AND lane = 'uptime' AND check_type = ANY($4::text[])
         AND (runtime_id IS NULL OR runtime_id = ANY($5::text[]))
         AND (retry = 0 OR scheduled_at <= now())
       ORDER BY scheduled_at, id LIMIT $6 FOR UPDATE SKIP LOCKED
     ), script AS (
       SELECT id, scheduled_at FROM jobs
       WHERE private_location_id = $3 AND state = 'queued' AND lane = 'script' AND check_type = ANY($4::text[])
         AND (runtime_id IS NULL OR runtime_id = ANY($5::text[]))
         AND (retry = 0 OR scheduled_at <= now())
       ORDER BY scheduled_at, id LIMIT $7 FOR UPDATE SKIP LOCKED
     ), chosen AS (
       SELECT id FROM (SELECT * FROM uptime UNION ALL SELECT * FROM script) lanes
       ORDER BY scheduled_at, id LIMIT $8
     )
     UPDATE jobs j SET state = 'leased', agent_id = $1::uuid, started_at = NULL,
       claimed_by = CASE WHEN j.claimed_by ? $9::text THEN j.claimed_by ELSE j.claimed_by || to_jsonb($9::text) END,
       lease_expires_at = now() + make_interval(secs => $2)
     WHERE j.id IN (SELECT id FROM chosen)
     RETURNING j.*`,
    [q.agentId, q.leaseSeconds, q.privateLocationId, [...q.checkTypes], q.runtimes, Math.max(0, uptimeRoom), Math.max(0, scriptRoom), q.max, q.agentId],
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
    // An agent extends the lease of a job it runs: the job has started.
    `UPDATE jobs SET lease_expires_at = now() + make_interval(secs => $4), started_at = coalesce(started_at, now())
     WHERE id = $1 AND private_location_id = $2 AND state = 'leased' AND agent_id = $3
     RETURNING lease_expires_at`,
    [jobId, privateLocationId, agentId, leaseSeconds],
  );
  return rows[0]?.lease_expires_at;
}

export interface Heartbeat {
  agentId: string;
  running: readonly string[];
  waiting: readonly string[];
}

/**
 * Extends the lease of every job the agent names that is still its own, and
 * marks the running ones started. Answers the new expiry and the ids named
 * that are no longer the agent's (cancelled, given up, offered again).
 */
export async function renewLeases(
  db: Queryable,
  privateLocationId: string,
  beat: Heartbeat,
  leaseSeconds: number,
): Promise<{ expires: Date; lost: string[]; cancelled: string[] }> {
  const named = [...new Set([...beat.running, ...beat.waiting].map((id) => id.toLowerCase()))];
  const rows = await db.query<{ id: string; expires: Date }>(
    `UPDATE jobs SET lease_expires_at = now() + make_interval(secs => $4),
       started_at = CASE WHEN id = ANY($5::uuid[]) THEN coalesce(started_at, now()) ELSE started_at END
     WHERE id = ANY($3::uuid[]) AND private_location_id = $1 AND state = 'leased' AND agent_id = $2
     RETURNING id, lease_expires_at AS expires`,
    [privateLocationId, beat.agentId, named, leaseSeconds, beat.running],
  );
  const kept = new Set(rows.map((row) => row.id));
  const expires = rows[0]?.expires ?? new Date(Date.now() + leaseSeconds * 1000);
  const lost = named.filter((id) => !kept.has(id));
  // So the agent can say why a job was taken from it: a cancel is a user's doing, not a fault.
  const cancelled =
    lost.length === 0
      ? []
      : await db.query<{ job_id: string }>(
          `SELECT r.job_id FROM check_results r JOIN jobs j ON j.id = r.job_id
           WHERE r.job_id = ANY($1::uuid[]) AND j.private_location_id = $2 AND r.is_cancelled`,
          [lost, privateLocationId],
        );
  return { expires, lost, cancelled: cancelled.map((row) => row.job_id) };
}

/**
 * What a job goes back to the queue as. A release is not a failed attempt.
 * A job that started is queued anew from now (a long job released late must
 * not look unclaimed for hours); one that never started keeps its time, so a
 * job no agent gets going still expires as unclaimed.
 */
const REQUEUED = `state = 'queued', agent_id = NULL, lease_expires_at = NULL, started_at = NULL,
  scheduled_at = CASE WHEN started_at IS NULL THEN scheduled_at ELSE now() END`;

/** Puts leased jobs back in the queue; answers how many were the agent's. */
export async function releaseJobs(
  db: Queryable,
  privateLocationId: string,
  agentId: string,
  jobIds: readonly string[],
): Promise<number> {
  const rows = await db.query(
    `UPDATE jobs SET ${REQUEUED}
     WHERE id = ANY($1::uuid[]) AND private_location_id = $2 AND state = 'leased' AND agent_id = $3
     RETURNING id`,
    [jobIds, privateLocationId, agentId],
  );
  return rows.length;
}

/**
 * An agent leaving: it claims nothing more until it says hello again, and
 * every job leased to it but `keep` is queued again, those of a claim still
 * in flight included (the agent row's lock orders this after such a claim).
 * Undefined when the agent is not one of this location's.
 */
export async function sayGoodbye(
  db: Database,
  privateLocationId: string,
  agentId: string,
  keep: readonly string[],
): Promise<number | undefined> {
  return db.transaction(async (tx) => {
    const [agent] = await tx.query(
      'UPDATE agents SET stopped_at = now(), last_seen = now() WHERE id = $1 AND private_location_id = $2 RETURNING id',
      [agentId, privateLocationId],
    );
    if (!agent) return undefined;
    const rows = await tx.query(
      `UPDATE jobs SET ${REQUEUED}
       WHERE agent_id = $1 AND private_location_id = $2 AND state = 'leased' AND NOT (id = ANY($3::uuid[]))
       RETURNING id`,
      [agentId, privateLocationId, keep],
    );
    return rows.length;
  });
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
  /** Retries these results queued: where, and in how many seconds they may be claimed. */
  retriesQueued: { privateLocationId: string; delaySeconds: number }[];
}

/**
 * Records results in one transaction. First result wins: an agent whose
 * lease ran out may still report, as long as nobody else has, since the work
 * was done and is worth keeping. Sessions are locked before jobs, each in id
 * order, so concurrent batches touching the same sessions cannot deadlock.
 *
 * A failed result its job's retry strategy retries (src/service/retry-strategy.ts)
 * is stored as an ATTEMPT and a new job for the same session and location is
 * queued after the backoff; only FINAL results decide the session.
 */
export async function recordResults(
  tx: Queryable,
  privateLocationId: string,
  results: readonly Result[],
): Promise<RecordedBatch> {
  const jobIds = results.map((result) => result.jobId);
  const sessions = await tx.query<{ id: string; elapsed: number }>(
    `SELECT id, extract(epoch FROM now() - started_at)::float8 AS elapsed FROM check_sessions WHERE id IN (
       SELECT session_id FROM jobs WHERE id = ANY($1::uuid[]) AND private_location_id = $2)
     ORDER BY id FOR UPDATE`,
    [jobIds, privateLocationId],
  );
  const elapsedBySession = new Map(sessions.map((session) => [session.id, Number(session.elapsed)]));
  const jobs = await tx.query<JobRow & { account_id: string; recorded_by: string | null }>(
    `SELECT j.*, r.agent_id AS recorded_by FROM jobs j LEFT JOIN check_results r ON r.job_id = j.id
     WHERE j.id = ANY($1::uuid[]) AND j.private_location_id = $2 ORDER BY j.id FOR UPDATE OF j`,
    [jobIds, privateLocationId],
  );
  const byId = new Map(jobs.map((job) => [job.id, job]));
  const outcomes: RecordOutcome[] = [];
  const accepted: ResultInsert[] = [];
  const retries: { job: JobRow; delaySeconds: number }[] = [];
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
      const delaySeconds = retryDelay(
        job.payload.retryStrategy ?? null,
        { hasErrors: result.hasErrors, hasFailures: result.hasFailures, isCancelled: result.isCancelled, errorCode: result.error?.code ?? null },
        job.retry,
        elapsedBySession.get(job.session_id) ?? 0,
      );
      if (delaySeconds !== undefined) retries.push({ job, delaySeconds });
      accepted.push({ job, fields: fieldsOf(result), resultType: delaySeconds === undefined ? 'FINAL' : 'ATTEMPT' });
      // A second result for the same job in one batch is then a duplicate, not a second write.
      job.state = 'done';
      job.recorded_by = result.agentId;
    }
    outcomes.push(outcome);
  }
  await insertResults(tx, accepted, { finishJobs: true });
  const retriesQueued = await queueRetries(tx, retries);
  const completedSessions = await refreshSessionStatuses(tx, [...new Set(accepted.map(({ job }) => job.session_id))]);
  return {
    outcomes,
    completedSessions,
    retriesQueued,
  };
}

/**
 * A new job per retried one: same session, check and settings, claimable once
 * its backoff has passed. At the same location, unless the strategy says
 * sameRegion: false and the session runs at other locations too: then at one
 * of those, picked at random, as the comparable product retries elsewhere.
 */
async function queueRetries(
  tx: Queryable,
  retries: readonly { job: JobRow; delaySeconds: number }[],
): Promise<{ privateLocationId: string; delaySeconds: number }[]> {
  if (retries.length === 0) return [];
  const queued = await tx.query<{ private_location_id: string; delay: number }>(
    `INSERT INTO jobs (id, session_id, account_id, check_id, private_location_id, run_location, check_type, runtime_id,
                       state, timeout_seconds, payload, lane, retry, scheduled_at)
     SELECT v.new_id, j.session_id, j.account_id, j.check_id, COALESCE(other.id, j.private_location_id),
            COALESCE(other.slug_name, j.run_location), j.check_type, j.runtime_id,
            'queued', j.timeout_seconds, j.payload, j.lane, j.retry + 1, now() + make_interval(secs => v.delay)
     FROM unnest($1::uuid[], $2::uuid[], $3::float8[], $4::boolean[]) AS v(old_id, new_id, delay, elsewhere)
     JOIN jobs j ON j.id = v.old_id
     JOIN check_sessions s ON s.id = j.session_id
     LEFT JOIN LATERAL (
       SELECT pl.id, pl.slug_name FROM private_locations pl
       WHERE v.elsewhere AND pl.account_id = j.account_id AND pl.slug_name <> j.run_location
         AND s.run_locations @> to_jsonb(pl.slug_name)
       ORDER BY random() LIMIT 1
     ) other ON true
     RETURNING private_location_id, extract(epoch FROM scheduled_at - now())::float8 AS delay`,
    [
      retries.map(({ job }) => job.id),
      retries.map(() => randomUUID()),
      retries.map(({ delaySeconds }) => delaySeconds),
      retries.map(({ job }) => job.payload.retryStrategy?.sameRegion === false),
    ],
  );
  // Where each retry went, for waking that location's waiting agents when it is due.
  return queued.map((row) => ({ privateLocationId: row.private_location_id, delaySeconds: Math.max(0, Number(row.delay)) }));
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

export interface SweepOptions {
  /**
   * Leases are first extended to at least this many seconds from now: after
   * the service itself could not sweep (it was down, paused, or without its
   * database), agents get one lease length to renew before their jobs are
   * taken from them.
   */
  graceSeconds?: number;
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
export async function sweepJobs(tx: Queryable, options: SweepOptions = {}): Promise<SweepOutcome> {
  if (options.graceSeconds) {
    await tx.query(
      `UPDATE jobs SET lease_expires_at = GREATEST(lease_expires_at, now() + make_interval(secs => $1))
       WHERE state = 'leased'`,
      [options.graceSeconds],
    );
  }
  // A job that never started spent no attempt: it is offered again as it was.
  const requeued = await tx.query<{ private_location_id: string }>(
    `UPDATE jobs SET ${REQUEUED}, attempt = CASE WHEN started_at IS NULL THEN attempt ELSE attempt + 1 END
     WHERE state = 'leased' AND lease_expires_at < now() AND (attempt < $1 OR started_at IS NULL)
     RETURNING private_location_id`,
    [MAX_ATTEMPTS],
  );
  const givenUp = await tx.query<JobRow & { account_id: string; reason: string; offered?: string[] | null }>(
    `UPDATE jobs SET state = 'done', completed_at = now(), lease_expires_at = NULL
     WHERE (state = 'leased' AND lease_expires_at < now() AND attempt >= $1)
        OR (state = 'queued' AND scheduled_at < now() - make_interval(secs => $2))
     RETURNING *, CASE WHEN agent_id IS NOT NULL THEN 'lease'
       WHEN jsonb_array_length(claimed_by) > 0 THEN 'unstarted' ELSE 'unclaimed' END AS reason`,
    [MAX_ATTEMPTS, UNCLAIMED_EXPIRY_SECONDS],
  );
  // Waiting is for agents that may come; a job that the location's live agents
  // all cannot run (its type, its runtime, or a script lane they lack) would
  // only wait out the expiry, so it fails now, saying what it needed.
  const unrunnable = await tx.query<JobRow & { account_id: string; reason: string; offered?: string[] | null }>(
    `WITH live AS (
       SELECT private_location_id, check_types, runtimes, capacity FROM agents
       WHERE stopped_at IS NULL AND last_seen > now() - make_interval(secs => $1)
     ), stuck AS (
       SELECT j.id FROM jobs j
       WHERE j.state = 'queued' AND j.retry = 0 AND j.created_at < now() - make_interval(secs => $2)
         AND EXISTS (SELECT 1 FROM live a WHERE a.private_location_id = j.private_location_id)
         AND NOT EXISTS (
           SELECT 1 FROM live a WHERE a.private_location_id = j.private_location_id
             AND a.check_types ? j.check_type
             AND (j.runtime_id IS NULL OR a.runtimes ? j.runtime_id)
             AND (j.lane = 'uptime' OR (a.capacity->>'script')::int > 0))
       FOR UPDATE SKIP LOCKED
     )
     UPDATE jobs SET state = 'done', completed_at = now(), lease_expires_at = NULL
     WHERE id IN (SELECT id FROM stuck)
     RETURNING *, 'unrunnable' AS reason,
       (SELECT array_agg(DISTINCT runtime ORDER BY runtime) FROM live a, jsonb_array_elements_text(a.runtimes) runtime
        WHERE a.private_location_id = jobs.private_location_id) AS offered`,
    [LIVE_AGENT_SECONDS, UNRUNNABLE_GRACE_SECONDS],
  );
  await insertResults(
    tx,
    [...givenUp, ...unrunnable].map((job) => ({
      job,
      fields: {
        agentId: null,
        hasErrors: true,
        hasFailures: false,
        isDegraded: false,
        aborted: false,
        isCancelled: false,
        // A job no agent there can run is a failure of the check's set-up, which alerts; the others only ran out of time.
        timedOut: job.reason !== 'unrunnable',
        responseTime: null,
        statusCode: null,
        timings: null,
        error: {
          code: job.reason === 'unrunnable' ? 'NO_CAPABLE_AGENT' : 'TIMED_OUT',
          message:
            job.reason === 'unrunnable'
              ? unrunnableMessage(job)
              : job.reason === 'unclaimed'
              ? `No agent at private location "${job.run_location}" picked the job up within ${UNCLAIMED_EXPIRY_SECONDS} s${
                  job.runtime_id ? ` (it needs runtime ${job.runtime_id})` : ''
                }`
              : job.reason === 'unstarted'
                ? `Agents at private location "${job.run_location}" claimed the job but none started it within ${UNCLAIMED_EXPIRY_SECONDS} s`
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
  const completedSessions = await refreshSessionStatuses(tx, [...new Set([...givenUp, ...unrunnable].map((job) => job.session_id))]);
  return { requeuedAt: new Set(requeued.map((row) => row.private_location_id)), completedSessions };
}

function unrunnableMessage(job: JobRow & { offered?: string[] | null }): string {
  const at = `private location "${job.run_location}"`;
  if (job.runtime_id) {
    const offered = job.offered && job.offered.length > 0 ? job.offered.join(', ') : 'none';
    return `No agent at ${at} runs ${job.check_type} checks on runtime ${job.runtime_id}; its agents offer runtimes: ${offered}`;
  }
  return `No agent at ${at} runs ${job.check_type} checks${job.lane === 'script' ? ' with scripts' : ''}`;
}

const CANCEL_MESSAGES = {
  queued: 'Cancelled before any agent took it',
  claimed: 'Cancelled after an agent took it, before it started',
  running: 'Cancelled while an agent was running it',
} as const;

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
  // The state before the cancel says what the cancel stopped (RETURNING sees the row after it).
  const ended = await tx.query<JobRow & { account_id: string; was: 'queued' | 'claimed' | 'running' }>(
    `WITH before AS (
       SELECT id, CASE WHEN state = 'queued' THEN 'queued' WHEN started_at IS NULL THEN 'claimed' ELSE 'running' END AS was
       FROM jobs WHERE session_id = $1 AND state <> 'done' FOR UPDATE
     )
     UPDATE jobs j SET state = 'done', completed_at = now(), lease_expires_at = NULL
     FROM before WHERE j.id = before.id RETURNING j.*, before.was`,
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
          message: CANCEL_MESSAGES[job.was],
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

interface ResultInsert {
  job: JobRow & { account_id: string };
  fields: ResultFields;
  /** FINAL unless a retry follows it. */
  resultType?: 'FINAL' | 'ATTEMPT';
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

/**
 * The one place location results are written, whether an agent sent them or
 * the service gave up. `finishJobs`: the same statement marks their jobs done
 * (each statement is a round trip, and every result batch pays for them).
 */
async function insertResults(tx: Queryable, rows: readonly ResultInsert[], options: { finishJobs?: boolean } = {}): Promise<void> {
  if (rows.length === 0) return;
  const records = rows.map(({ job, fields, resultType }) => ({
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
    result_type: resultType ?? 'FINAL',
    retries: job.retry,
    started_at: fields.startedAt,
    stopped_at: fields.stoppedAt,
  }));
  // One statement for the whole batch: the rows travel as one JSON document.
  const insert = `INSERT INTO check_results (id, session_id, job_id, account_id, check_id, check_type, name, run_location,
        has_errors, has_failures, is_degraded, aborted, is_cancelled, timed_out, response_time, status_code, timings,
        error, assertions, details, logs, artifacts, agent_id, attempt, result_type, retries, started_at, stopped_at)
     SELECT id, session_id, job_id, account_id, check_id, check_type, name, run_location,
        has_errors, has_failures, is_degraded, aborted, is_cancelled, timed_out, response_time, status_code, timings,
        error, COALESCE(assertions, '[]'), COALESCE(details, '{}'), COALESCE(logs, '[]'), COALESCE(artifacts, '[]'),
        agent_id, attempt, result_type, retries, started_at, stopped_at
     FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, session_id uuid, job_id uuid, account_id uuid, check_id uuid,
        check_type text, name text, run_location text, has_errors boolean, has_failures boolean, is_degraded boolean,
        aborted boolean, is_cancelled boolean, timed_out boolean, response_time double precision, status_code integer,
        timings jsonb, error jsonb, assertions jsonb, details jsonb, logs jsonb, artifacts jsonb, agent_id uuid,
        attempt integer, result_type text, retries integer, started_at timestamptz, stopped_at timestamptz)`;
  await tx.query(
    options.finishJobs
      ? `WITH inserted AS (${insert} RETURNING job_id)
         UPDATE jobs SET state = 'done', completed_at = now(), lease_expires_at = NULL
         WHERE id IN (SELECT job_id FROM inserted)`
      : insert,
    [JSON.stringify(records)],
  );
}

export type ArtifactWriteAccess = 'allowed' | 'not-found' | 'not-leased';

/**
 * Whether the agent may write the job's artifacts: the job is this location's,
 * not yet done, and the agent has claimed it; the same rule a result of
 * the job is accepted by, so an agent's artifacts and its result stand or fall together.
 */
export async function artifactWriteAccess(
  db: Queryable,
  jobId: string,
  privateLocationId: string,
  agentId: string,
): Promise<ArtifactWriteAccess> {
  const [job] = await db.query<{ allowed: boolean }>(
    `SELECT (state <> 'done' AND claimed_by ? $3::text) AS allowed FROM jobs WHERE id = $1 AND private_location_id = $2`,
    [jobId, privateLocationId, agentId],
  );
  if (!job) return 'not-found';
  return job.allowed ? 'allowed' : 'not-leased';
}
