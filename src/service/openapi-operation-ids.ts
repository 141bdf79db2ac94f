/**
 * Code generators name a client's methods after `operationId`s. They are made
 * from the method and the route, so they stay the same as long as the route does,
 * and no route has to remember to set one.
 */

/** Routes whose derived name would read badly; the name is part of the API, so it never changes. */
const NAMED: Record<string, string> = {
  'GET /v1/check-results/{checkId}': 'listCheckResults',
  'GET /v2/check-results/{checkId}': 'listCheckResultsV2',
  'GET /v1/check-results/{checkId}/{checkResultId}': 'getCheckResult',
  'GET /v1/check-results/{checkId}/{checkResultId}/assets': 'listCheckResultAssets',
  'GET /v1/error-groups/checks/{checkId}': 'listErrorGroupsOfCheck',
  'GET /v1/checks/{checkId}/error-groups': 'listCheckErrorGroups',
  'GET /v1/check-statuses/{checkId}': 'getCheckStatus',
  'GET /v1/alert-notifications': 'listAlertNotifications',
  'POST /v1/analytics/checks': 'getChecksAnalytics',
  'GET /next/users/me': 'getCurrentUser',
  'GET /next/accounts': 'listAccounts',
  'GET /v1/accounts/me/entitlements': 'getAccountEntitlements',
  'GET /v1/accounts/me/alert-settings': 'getAccountAlertSettings',
  'PUT /v1/accounts/me/alert-settings': 'updateAccountAlertSettings',
  'POST /v1/accounts/me/service-api-keys': 'createServiceApiKey',
  'POST /v1/code-bundles': 'uploadCodeBundle',
  'POST /next/checkly-storage/upload-code-bundle': 'uploadChecklyCodeBundle',
  'POST /v1/test-sessions/run': 'runTestSession',
  'POST /next/test-sessions/trigger': 'triggerTestSession',
  'POST /v2/check-sessions/trigger': 'triggerCheckSession',
  'POST /v1/check-groups/{id}/trigger': 'triggerCheckGroup',
  'POST /v1/projects/deploy': 'deployProject',
  'GET /next/test-sessions/{id}/link': 'getTestSessionLink',
  'GET /next/test-sessions/{id}/results/{resultId}/links': 'getTestResultLinks',
  'GET /v1/projects/{logicalId}/deployments/{id}/events': 'followDeploymentEvents',
  'POST /v1/checks/{checkId}/error-groups/{errorGroupId}/root-cause-analyses': 'analyseCheckErrorGroup',
  'POST /v1/root-cause-analyses/error-groups/{errorGroupId}': 'analyseErrorGroup',
  'POST /v1/check-sessions/{checkSessionId}/error-groups/{errorGroupId}/root-cause-analyses': 'analyseCheckSessionErrorGroup',
  'POST /v1/agent/leases': 'renewAgentLeases',
  'POST /v1/agent/results': 'submitAgentResults',
  'POST /v1/agent/jobs/{jobId}/result': 'submitAgentJobResult',
  'POST /v1/agent/jobs/{jobId}/lease': 'renewAgentJobLease',
  'POST /v1/agent/jobs/release': 'releaseAgentJobs',
  'POST /v1/agent/jobs/{jobId}/release': 'releaseAgentJob',
  'POST /v1/agent/jobs/claim': 'claimAgentJobs',
  'PUT /v1/agent/jobs/{jobId}/artifacts/{name}': 'uploadAgentJobArtifact',
  'GET /v1/agent/code-bundles/{id}': 'downloadAgentCodeBundle',
  'POST /v1/agent/error-events/api/{projectId}/envelope/': 'sendAgentErrorEnvelope',
};

/** A last segment that names what a POST does rather than what it creates. */
const ACTIONS = new Set(['cancel', 'hello', 'goodbye', 'trigger', 'run', 'deploy', 'claim', 'release']);

const VERSION_SEGMENT = /^(v\d+|next)$/;

function isParam(segment: string): boolean {
  return segment.startsWith('{');
}

/** Words that end in "s" but are not plurals. */
const NOT_PLURAL = new Set(['dns', 'analytics', 'status']);

function singular(word: string): string {
  if (NOT_PLURAL.has(word)) return word;
  if (word.endsWith('analyses')) return `${word.slice(0, -'analyses'.length)}analysis`;
  if (word.endsWith('statuses')) return word.slice(0, -2);
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

function pascal(segment: string): string {
  return segment
    .split(/[-_]/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

/** `listChecks`, `getCheck`, `createUrlCheck`, `cancelCheckSession`… for one method and OpenAPI path. */
export function operationIdFor(method: string, path: string): string {
  const verbAndPath = `${method.toUpperCase()} ${path}`;
  const named = NAMED[verbAndPath];
  if (named) return named;

  const segments = path.split('/').filter(Boolean);
  if (segments[0] && VERSION_SEGMENT.test(segments[0])) segments.shift();
  const endsInParam = isParam(segments.at(-1) ?? '');
  let statics = segments
    .map((segment, index) => ({ segment, next: segments[index + 1] }))
    .filter(({ segment }) => !isParam(segment))
    .map(({ segment, next }) => (next !== undefined && (isParam(next) || next === 'me') ? singular(segment) : segment))
    .filter((segment) => segment !== 'me');

  let verb: string;
  const upper = method.toUpperCase();
  const last = statics.at(-1) ?? '';
  if (upper === 'POST' && !endsInParam && ACTIONS.has(last)) {
    verb = last;
    statics = statics.slice(0, -1).map((segment, index, all) => (index === all.length - 1 ? singular(segment) : segment));
  } else if (upper === 'GET' && !endsInParam && last === 'completion') {
    verb = 'waitFor';
    statics = statics.slice(0, -1).map((segment, index, all) => (index === all.length - 1 ? singular(segment) : segment));
  } else if (upper === 'GET') {
    verb = endsInParam ? 'get' : 'list';
  } else if (upper === 'POST') {
    verb = 'create';
    // POST /checks/url creates a URL check: the kind reads before the noun.
    if (!endsInParam && statics.length >= 2 && statics.at(-2) === 'checks') statics = [...statics.slice(0, -2), last, 'check'];
    else statics = statics.map((segment, index, all) => (index === all.length - 1 ? singular(segment) : segment));
  } else if (upper === 'PUT' || upper === 'PATCH') {
    verb = 'update';
    if (statics.length >= 2 && statics.at(-2) === 'checks' && endsInParam) statics = [...statics.slice(0, -2), last, 'check'];
  } else if (upper === 'DELETE') {
    verb = 'delete';
  } else {
    verb = upper.toLowerCase();
  }
  return verb + statics.map(pascal).join('');
}

interface OperationObject {
  operationId?: string;
  summary?: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Names every operation of the document. A name already set by a route wins;
 * two routes that would share a name (a v1 and a v2 of one resource) keep it
 * apart with their version. Operations without a summary get one from their name,
 * since linters and generated docs list operations by it.
 */
export function nameOperations<T extends { paths?: object }>(document: T): T {
  const taken = new Set<string>();
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Record<string, unknown> | undefined>)) {
    for (const method of METHODS) {
      const operation = item?.[method] as OperationObject | undefined;
      if (!operation) continue;
      let id = operation.operationId ?? operationIdFor(method, path);
      if (taken.has(id)) {
        const version = /^\/(v\d+|next)\//.exec(path)?.[1];
        const base = version ? `${id}${pascal(version)}` : id;
        id = base;
        for (let n = 2; taken.has(id); n++) id = `${base}${n}`;
      }
      taken.add(id);
      operation.operationId = id;
      operation.summary ??= sentenceFrom(id);
    }
  }
  return document;
}

function sentenceFrom(id: string): string {
  const words = id.replace(/([A-Z])/g, ' $1').toLowerCase().trim();
  return words[0]!.toUpperCase() + words.slice(1);
}
