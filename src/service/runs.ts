import type { RunSource } from '../protocol/enums.js';
import { laneOfJob } from '../protocol/api-settings.js';
import type { ServiceContext } from './context.js';
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
  const type = checkTypeDefinition(check.check_type);
  if (!type) return { refused: `checks of type ${check.check_type} cannot be run by this service yet` };
  const group = await groupOfCheck(ctx.db, check);
  const { definition, privateLocations } = runDefinition(check, group);
  const locations = await privateLocationIdsBySlug(ctx.db, check.account_id, privateLocations);
  if (locations.size === 0) {
    return { refused: `check ${check.id} is assigned to no existing private location` };
  }
  const spec = type.jobSpec(definition, group?.definition);
  // Scripts read variables, API checks their {{VARIABLES}}; uptime probes have nothing to read them with.
  if (check.check_type === 'API' || laneOfJob({ checkType: check.check_type, settings: spec.settings }) === 'script') {
    const shared = overlayVariables(await allVariables(ctx.db, check.account_id), group?.definition.environmentVariables ?? []);
    spec.environmentVariables = withAccountVariables(shared, spec.environmentVariables);
  }
  const retryStrategy = effectiveRetryStrategy(check.definition, group?.definition);
  const session = await ctx.db.transaction((tx) => startSession(tx, check, runSource, locations, { ...spec, retryStrategy }, groupRun));
  if (!groupRun) for (const locationId of new Set(locations.values())) ctx.events.emit('jobsQueued', locationId);
  return { session };
}
