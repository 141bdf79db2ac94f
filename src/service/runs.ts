import type { RunSource } from '../protocol/enums.js';
import { laneOfJob } from '../protocol/api-settings.js';
import type { ServiceContext } from './context.js';
import type { Queryable } from './db/database.js';
import { overlayVariables, withAccountVariables } from './check-types/environment-variables.js';
import { checkTypeDefinition, type CheckDefinition } from './check-types/index.js';
import { groupOfCheck, type GroupRow } from './store/check-groups.js';
import type { CheckRow } from './store/checks.js';
import { privateLocationIdsBySlug } from './store/private-locations.js';
import { effectiveRetryStrategy } from './retry-strategy.js';
import { startSession, type GroupRunPlace, type SessionRow } from './store/sessions.js';
import { allVariables } from './store/variables.js';

export type RunStart = { session: SessionRow } | { refused: string };

/**
 * What a run of the check uses once its group has had its say: the group's
 * private locations replace the check's when it names any, and its runtime
 * serves a check that names none. Variables are layered in startRun.
 */
function runDefinition(check: CheckRow, group: GroupRow | undefined): { definition: CheckDefinition; privateLocations: string[] } {
  if (!group) return { definition: check.definition, privateLocations: check.private_locations };
  const fromGroup = group.definition;
  const privateLocations = fromGroup.privateLocations.length > 0 ? fromGroup.privateLocations : check.private_locations;
  const runtimeId = (check.definition.runtimeId as string | null | undefined) ?? fromGroup.runtimeId;
  return {
    definition: { ...check.definition, privateLocations, ...(runtimeId === undefined ? {} : { runtimeId }) },
    privateLocations,
  };
}

/**
 * Starts one run of a check: a session, and a job at each of its private
 * locations. This installation has no data-center runners, so a check with no
 * private location has nowhere to run and is refused. In a group run the jobs
 * are held until the run reaches the session (see group-runs.ts).
 */
export async function startRun(
  ctx: ServiceContext,
  check: CheckRow,
  runSource: RunSource,
  groupRun?: GroupRunPlace,
): Promise<RunStart> {
  const started = await ctx.db.transaction((tx) => createRun(tx, check, runSource, groupRun));
  announceRun(ctx, started);
  return started.run;
}

/** A run made in a transaction, and where its queued jobs wait, to announce once it is committed. */
export interface CreatedRun {
  run: RunStart;
  /** Private locations with new queued jobs; none for a held group-run session or a refusal. */
  queuedAt: string[];
}

/**
 * The run of startRun, every read and write in the caller's transaction: the
 * scheduler commits it together with the claim of the check's turn, so a
 * crash leaves either both or neither.
 */
export async function createRun(
  tx: Queryable,
  check: CheckRow,
  runSource: RunSource,
  groupRun?: GroupRunPlace,
): Promise<CreatedRun> {
  const type = checkTypeDefinition(check.check_type);
  if (!type) return { run: { refused: `checks of type ${check.check_type} cannot be run by this service yet` }, queuedAt: [] };
  const group = await groupOfCheck(tx, check);
  const { definition, privateLocations } = runDefinition(check, group);
  const locations = await privateLocationIdsBySlug(tx, check.account_id, privateLocations);
  if (locations.size === 0) {
    return { run: { refused: `check ${check.id} is assigned to no existing private location` }, queuedAt: [] };
  }
  const spec = type.jobSpec(definition, group?.definition);
  // Scripts read variables, API checks their {{VARIABLES}}; uptime probes have nothing to read them with.
  if (check.check_type === 'API' || laneOfJob({ checkType: check.check_type, settings: spec.settings }) === 'script') {
    const shared = overlayVariables(await allVariables(tx, check.account_id), group?.definition.environmentVariables ?? []);
    spec.environmentVariables = withAccountVariables(shared, spec.environmentVariables);
  }
  const retryStrategy = effectiveRetryStrategy(check.definition, group?.definition);
  const session = await startSession(tx, check, runSource, locations, { ...spec, retryStrategy }, groupRun);
  return { run: { session }, queuedAt: groupRun ? [] : [...new Set(locations.values())] };
}

/** Wakes the agents waiting where a committed run queued jobs. */
export function announceRun(ctx: ServiceContext, created: CreatedRun): void {
  for (const locationId of created.queuedAt) ctx.events.emit('jobsQueued', locationId);
}
