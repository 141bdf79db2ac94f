import { randomUUID } from 'node:crypto';
import type { ServiceContext } from './context.js';
import type { Queryable } from './db/database.js';
import { startRun } from './runs.js';
import type { GroupRow } from './store/check-groups.js';
import type { CheckRow } from './store/checks.js';
import {
  countActiveGroupRunSessions,
  insertGroupRun,
  lockGroupRunsWithHeldJobs,
  queueNextHeldGroupRunJobs,
} from './store/group-runs.js';
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
  await insertGroupRun(ctx.db, {
    id: runId,
    accountId: group.account_id,
    groupId: group.id,
    concurrency: group.definition.concurrency,
  });
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

/**
 * Lets the next held sessions of group runs go, as far as each run's
 * concurrency allows, and wakes the agents at their locations. Runs are
 * locked while counted, so a completion and the scheduler's tick never
 * release the same place twice. `runIds` narrows it to those runs.
 */
export async function releaseGroupRuns(ctx: ServiceContext, runIds?: readonly string[]): Promise<void> {
  const woken = await ctx.db.transaction(async (tx) => {
    const runs = await lockGroupRunsWithHeldJobs(tx, runIds);
    const locations = new Set<string>();
    for (const run of runs) for (const location of await releaseRun(tx, run.id, run.concurrency)) locations.add(location);
    return locations;
  });
  for (const locationId of woken) ctx.events.emit('jobsQueued', locationId);
}

async function releaseRun(tx: Queryable, runId: string, concurrency: number): Promise<string[]> {
  const room = concurrency - (await countActiveGroupRunSessions(tx, runId));
  if (room <= 0) return [];
  return queueNextHeldGroupRunJobs(tx, runId, room);
}
