import type { RunSource } from '../protocol/enums.js';
import { laneOf } from '../protocol/lanes.js';
import type { ServiceContext } from './context.js';
import { withAccountVariables } from './check-types/environment-variables.js';
import { checkTypeDefinition } from './check-types/index.js';
import type { CheckRow } from './store/checks.js';
import { privateLocationIdsBySlug } from './store/private-locations.js';
import { startSession, type SessionRow } from './store/sessions.js';
import { allVariables } from './store/variables.js';

export type RunStart = { session: SessionRow } | { refused: string };

/**
 * Starts one run of a check: a session, and a job at each of its private
 * locations. This installation has no data-center runners, so a check with no
 * private location has nowhere to run and is refused.
 */
export async function startRun(ctx: ServiceContext, check: CheckRow, runSource: RunSource): Promise<RunStart> {
  const type = checkTypeDefinition(check.check_type);
  if (!type) return { refused: `checks of type ${check.check_type} cannot be run by this service yet` };
  const locations = await privateLocationIdsBySlug(ctx.db, check.account_id, check.private_locations);
  if (locations.size === 0) {
    return { refused: `check ${check.id} is assigned to no existing private location` };
  }
  const spec = type.jobSpec(check.definition);
  // Scripts read variables; uptime probes have nothing to read them with.
  if (laneOf(check.check_type) === 'script') {
    spec.environmentVariables = withAccountVariables(await allVariables(ctx.db, check.account_id), spec.environmentVariables);
  }
  const session = await ctx.db.transaction((tx) => startSession(tx, check, runSource, locations, spec));
  for (const locationId of new Set(locations.values())) ctx.events.emit('jobsQueued', locationId);
  return { session };
}
