import type { ChannelSubscription } from '../alerts/subscriptions.js';
import type { CheckTypeDefinition } from '../check-types/index.js';
import type { SharedFile } from './payload.js';

/** What the construct's links resolved to in this account. */
export interface ResolvedCheckLinks {
  groupId: number | null;
  privateLocations: string[];
  alertChannelSubscriptions: ChannelSubscription[];
  /** The status page service an incident is opened on, when the check names one. */
  serviceId?: string | undefined;
}

/** Fields the CLI sends that only the hosted product reads; the check routes would drop them too. */
const HOSTED_ONLY = ['frequencyOffset', 'intent', 'aiAutoRepairEnabled', 'sslCheckDomain', 'snapshots', 'v'];

/**
 * A check construct's payload as the body of POST /v1/checks/{type}: the
 * links resolved, API check scripts under the API's names, a script check's
 * shared files inlined as its dependencies. Anything else the API would not
 * accept is left for its validation to name.
 */
export function checkBody(
  type: CheckTypeDefinition,
  payload: Record<string, unknown>,
  links: ResolvedCheckLinks,
  sharedFiles: readonly SharedFile[],
): { body: Record<string, unknown> } | { problem: string } {
  const body: Record<string, unknown> = structuredClone(payload);
  for (const field of HOSTED_ONLY) delete body[field];
  body.privateLocations = links.privateLocations;
  body.alertChannelSubscriptions = links.alertChannelSubscriptions;
  if (links.groupId !== null && !('groupId' in type.createSchema.properties)) {
    return { problem: `Outpost does not run ${type.checkType} checks in check groups` };
  }
  body.groupId = links.groupId;
  if (body.triggerIncident && typeof body.triggerIncident === 'object') {
    body.triggerIncident = { ...body.triggerIncident, serviceId: links.serviceId };
  }
  if (type.checkType === 'API') {
    for (const phase of ['setup', 'tearDown'] as const) {
      const dependencies = body[`${phase}ScriptDependencies`];
      if (Array.isArray(dependencies) && dependencies.length > 0) {
        return { problem: `its ${phase} script imports other files, which Outpost's API check scripts cannot` };
      }
      body[`${phase}Script`] = body[`local${phase[0]!.toUpperCase()}${phase.slice(1)}Script`] ?? null;
      delete body[`local${phase[0]!.toUpperCase()}${phase.slice(1)}Script`];
      delete body[`${phase}ScriptPath`];
      delete body[`${phase}ScriptDependencies`];
    }
  }
  if (type.checkType === 'MULTI_STEP' || type.checkType === 'BROWSER') {
    const refs = Array.isArray(body.dependencies) ? (body.dependencies as unknown[]) : [];
    const files: SharedFile[] = [];
    for (const ref of refs) {
      const file = typeof ref === 'number' ? sharedFiles[ref] : undefined;
      if (!file) return { problem: `its dependency ${JSON.stringify(ref)} names no shared file of the project` };
      files.push({ path: file.path, content: file.content });
    }
    body.dependencies = files;
  }
  return { body };
}
