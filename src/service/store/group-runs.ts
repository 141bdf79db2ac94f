/**
 * Group runs (runSource GROUP_RUN_ALL): a run's sessions hold their jobs
 * until the run's concurrency leaves room for them.
 */
import type { Queryable } from '../db/database.js';

export interface NewGroupRun {
  id: string;
  accountId: string;
  groupId: number;
  concurrency: number;
}

export async function insertGroupRun(db: Queryable, run: NewGroupRun): Promise<void> {
  await db.query('INSERT INTO group_runs (id, account_id, group_id, concurrency) VALUES ($1, $2, $3, $4)', [
    run.id,
    run.accountId,
    run.groupId,
    run.concurrency,
  ]);
}

export interface HeldGroupRunRow {
  id: string;
  concurrency: number;
}

/**
 * The runs with held jobs (of `runIds` only, when given), locked in id order
 * until the transaction ends, so two releases never count the same run at once.
 */
export async function lockGroupRunsWithHeldJobs(tx: Queryable, runIds?: readonly string[]): Promise<HeldGroupRunRow[]> {
  return tx.query<HeldGroupRunRow>(
    `SELECT r.id, r.concurrency FROM group_runs r
     WHERE ($1::uuid[] IS NULL OR r.id = ANY($1::uuid[]))
       AND EXISTS (SELECT 1 FROM check_sessions s JOIN jobs j ON j.session_id = s.id
                   WHERE s.group_run_id = r.id AND j.state = 'held')
     ORDER BY r.id FOR UPDATE OF r`,
    [runIds ?? null],
  );
}

const FINAL = "('PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED')";

/** Sessions of a run that were let go and have not finished. */
export async function countActiveGroupRunSessions(tx: Queryable, runId: string): Promise<number> {
  const [active] = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM check_sessions s
     WHERE s.group_run_id = $1 AND s.status NOT IN ${FINAL}
       AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.session_id = s.id AND j.state = 'held')`,
    [runId],
  );
  return active!.n;
}

/**
 * Queues the held jobs of a run's next `sessions` sessions, in run order;
 * answers the private location of each job it queued.
 */
export async function queueNextHeldGroupRunJobs(tx: Queryable, runId: string, sessions: number): Promise<string[]> {
  // Queued a millisecond apart in run order (what a Date keeps): agents are offered them in that order.
  const released = await tx.query<{ private_location_id: string }>(
    `UPDATE jobs j SET state = 'queued', scheduled_at = now() + s.group_position * interval '1 millisecond'
     FROM check_sessions s
     WHERE j.session_id = s.id AND j.state = 'held' AND s.id IN (
       SELECT n.id FROM check_sessions n
       WHERE n.group_run_id = $1 AND EXISTS (SELECT 1 FROM jobs h WHERE h.session_id = n.id AND h.state = 'held')
       ORDER BY n.group_position LIMIT $2)
     RETURNING j.private_location_id`,
    [runId, sessions],
  );
  return released.map((row) => row.private_location_id);
}
