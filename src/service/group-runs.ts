import { randomUUID } from 'node:crypto';
import type { ServiceContext } from './context.js';
import type { Queryable } from './db/database.js';
import { startRun } from './runs.js';
import type { GroupRow } from './store/check-groups.js';
import type { CheckRow } from './store/checks.js';
import type { SessionRow } from './store/sessions.js';

export interface GroupRunStart {
  sessions: SessionRow[];
  /** Checks that could not run, by id, with why. */
  refused: Record<string, string>;
}

/**
 * Runs every check of a group now (runSource GROUP_RUN_ALL), in the order
 * given, at most `concurrency` sessions at a time: all sessions are made at
 * once, and those past the first places hold their jobs until a session
 * before them finishes.
 */
export async function startGroupRun(ctx: ServiceContext, group: GroupRow, checks: readonly CheckRow[]): Promise<GroupRunStart> {
  const runId = randomUUID();
  await ctx.db.query('INSERT INTO group_runs (id, account_id, group_id, concurrency) VALUES ($1, $2, $3, $4)', [
    runId,
    group.account_id,
    group.id,
    group.definition.concurrency,
  ]);
  const sessions: SessionRow[] = [];
  const refused: Record<string, string> = {};
  for (const [position, check] of checks.entries()) {
    const started = await startRun(ctx, check, 'GROUP_RUN_ALL', { runId, position });
    if ('refused' in started) refused[check.id] = started.refused;
    else sessions.push(started.session);
  }
  await releaseGroupRuns(ctx, [runId]);
  return { sessions, refused };
}

const FINAL = "('PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED')";

/**
 * Lets the next held sessions of group runs go, as far as each run's
 * concurrency allows, and wakes the agents at their locations. Runs are
 * locked while counted, so a completion and the scheduler's tick never
 * release the same place twice. `runIds` narrows it to those runs.
 */
export async function releaseGroupRuns(ctx: ServiceContext, runIds?: readonly string[]): Promise<void> {
  const woken = await ctx.db.transaction(async (tx) => {
    const runs = await tx.query<{ id: string; concurrency: number }>(
      `SELECT r.id, r.concurrency FROM group_runs r
       WHERE ($1::uuid[] IS NULL OR r.id = ANY($1::uuid[]))
         AND EXISTS (SELECT 1 FROM check_sessions s JOIN jobs j ON j.session_id = s.id
                     WHERE s.group_run_id = r.id AND j.state = 'held')
       ORDER BY r.id FOR UPDATE OF r`,
      [runIds ?? null],
    );
    const locations = new Set<string>();
    for (const run of runs) for (const location of await releaseRun(tx, run.id, run.concurrency)) locations.add(location);
    return locations;
  });
  for (const locationId of woken) ctx.events.emit('jobsQueued', locationId);
}

async function releaseRun(tx: Queryable, runId: string, concurrency: number): Promise<string[]> {
  const [active] = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM check_sessions s
     WHERE s.group_run_id = $1 AND s.status NOT IN ${FINAL}
       AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.session_id = s.id AND j.state = 'held')`,
    [runId],
  );
  const room = concurrency - active!.n;
  if (room <= 0) return [];
  // Queued a millisecond apart in run order (what a Date keeps): agents are offered them in that order.
  const released = await tx.query<{ private_location_id: string }>(
    `UPDATE jobs j SET state = 'queued', scheduled_at = now() + s.group_position * interval '1 millisecond'
     FROM check_sessions s
     WHERE j.session_id = s.id AND j.state = 'held' AND s.id IN (
       SELECT n.id FROM check_sessions n
       WHERE n.group_run_id = $1 AND EXISTS (SELECT 1 FROM jobs h WHERE h.session_id = n.id AND h.state = 'held')
       ORDER BY n.group_position LIMIT $2)
     RETURNING j.private_location_id`,
    [runId, room],
  );
  return released.map((row) => row.private_location_id);
}
