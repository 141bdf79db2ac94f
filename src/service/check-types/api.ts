import Type from 'typebox';
import {
  API_ASSERTION_SOURCES,
  ApiRequestSchema,
  ApiSettingsSchema,
  type ApiRequest,
  type ApiScript,
  type ApiSettings,
  type KeyValue,
} from '../../protocol/api-settings.js';
import { ASSERTION_COMPARISONS } from '../../protocol/enums.js';
import { findRuntime, isSelectable } from '../../runtimes/catalog.js';
import type { GroupDefinition } from '../check-groups/schema.js';
import { RuntimeIdSchema } from '../schemas/common.js';
import { CheckCommonFields, thresholdProblems, updateSchemaFor, type CheckDefinition, type CheckTypeDefinition } from './common.js';
import {
  environmentVariableProblems,
  jobVariables,
  keepMaskedSecrets,
  type EnvironmentVariable,
} from './environment-variables.js';
import { DEFAULT_RUNTIME_ID } from './multistep.js';
import { orNull, ScriptCheckFields } from './script-check-fields.js';

/** The comparable product's defaults; the cap is the protocol's. */
const DEFAULT_DEGRADED_MS = 5000;
const DEFAULT_MAX_MS = 20_000;
/** What one setup or teardown script may take (reference facts: 10 s), on top of the request's budget. */
const SCRIPT_SECONDS = 10;
/** Group and check scripts are short Node.js code, as the group's own fields are. */
const MAX_CHECK_SCRIPT_CHARS = 100_000;

const P = ApiRequestSchema.properties;
const RequestSchema = Type.Object({
  method: Type.Optional({ ...P.method, default: 'GET' }),
  url: { ...P.url, description: 'Absolute http(s) URL; relative to the group\'s apiCheckDefaults.url in a group; may hold {{VARIABLES}}' },
  headers: Type.Optional({ ...P.headers, default: [] }),
  queryParameters: Type.Optional({ ...P.queryParameters, default: [] }),
  body: Type.Optional({ ...P.body, default: '' }),
  bodyType: Type.Optional({ ...P.bodyType, default: 'NONE' }),
  basicAuth: Type.Optional({ ...P.basicAuth, default: null }),
  followRedirects: Type.Optional({ ...P.followRedirects, default: true }),
  skipSSL: Type.Optional({ ...P.skipSSL, default: false }),
  ipFamily: Type.Optional({ ...P.ipFamily, default: 'IPv4' }),
  assertions: Type.Optional({ ...P.assertions, default: [] }),
});

const createSchema = Type.Object({
  ...CheckCommonFields,
  checkType: Type.Optional(Type.Literal('API', { default: 'API' })),
  request: RequestSchema,
  ...ScriptCheckFields,
  doubleCheck: Type.Optional(
    Type.Boolean({ default: true, deprecated: true, description: 'Deprecated: retryStrategy replaces it' }),
  ),
  runtimeId: orNull(RuntimeIdSchema, { description: `Runtime of the setup and teardown scripts; null: ${DEFAULT_RUNTIME_ID}` }),
  setupScript: orNull(Type.String({ maxLength: MAX_CHECK_SCRIPT_CHARS }), { description: 'Node.js code run before the request' }),
  tearDownScript: orNull(Type.String({ maxLength: MAX_CHECK_SCRIPT_CHARS }), { description: 'Node.js code run after the request' }),
  setupSnippetId: orNull(Type.Integer({ minimum: 1 }), { description: 'This service has no snippets: only null is accepted' }),
  tearDownSnippetId: orNull(Type.Integer({ minimum: 1 }), { description: 'This service has no snippets: only null is accepted' }),
  degradedResponseTime: Type.Optional({ ...ApiSettingsSchema.properties.degradedResponseTime, default: DEFAULT_DEGRADED_MS }),
  maxResponseTime: Type.Optional({ ...ApiSettingsSchema.properties.maxResponseTime, default: DEFAULT_MAX_MS }),
});

interface ApiDefinition extends CheckDefinition {
  request: ApiRequest;
  runtimeId: string | null;
  setupScript: string | null;
  tearDownScript: string | null;
  setupSnippetId: number | null;
  tearDownSnippetId: number | null;
  degradedResponseTime: number;
  maxResponseTime: number;
  environmentVariables: EnvironmentVariable[];
  groupId: number | null;
}

const api = (definition: CheckDefinition) => definition as ApiDefinition;

const ABSOLUTE = /^https?:\/\//i;
const PLACEHOLDER_START = /^\{\{/;

function requestProblems(check: ApiDefinition): Record<string, string> {
  const problems: Record<string, string> = {};
  const url = check.request.url.trim();
  if (!ABSOLUTE.test(url) && !PLACEHOLDER_START.test(url)) {
    if (check.groupId === null || check.groupId === undefined) {
      problems['request.url'] = 'must be an absolute http:// or https:// URL (a relative one needs a groupId whose apiCheckDefaults.url is its base)';
    } else if (/^[a-z][a-z0-9+.-]*:/i.test(url)) {
      problems['request.url'] = 'must use http or https';
    }
  }
  check.request.assertions.forEach((assertion, index) => {
    const property = assertion.property ?? '';
    if (assertion.source === 'HEADERS' && property.trim() === '') {
      problems[`request.assertions.${index}.property`] = 'must name the header for a HEADERS assertion';
    }
    if (assertion.source === 'JSON_BODY' && property !== '' && !property.startsWith('$')) {
      problems[`request.assertions.${index}.property`] = 'must be a JSON path starting with $ (or empty for the whole body)';
    }
  });
  if (check.request.bodyType === 'NONE' && check.request.body !== '') {
    problems['request.bodyType'] = 'must name the body\'s type (JSON, FORM, RAW, GRAPHQL) when a body is given';
  }
  return problems;
}

function runtimeProblem(id: string | null): string | undefined {
  if (id === null) return undefined;
  const runtime = findRuntime(id);
  if (!runtime) return `runtime ${id} is not available on this service`;
  if (!isSelectable(runtime)) return `runtime ${id} was removed on ${runtime.runtimeEndOfLife}`;
  return undefined;
}

/** Joins a group's base URL and a check's relative one with exactly one slash between. */
function joinUrl(base: string, path: string): string {
  if (base === '') return path;
  if (path === '') return base;
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

interface ApiCheckDefaults {
  url?: string;
  headers?: KeyValue[];
  queryParameters?: KeyValue[];
  assertions?: { source: string; comparison: string; target: string }[];
  basicAuth?: { username: string; password: string };
}

const SOURCES = new Set<string>(API_ASSERTION_SOURCES);
const COMPARISONS = new Set<string>(ASSERTION_COMPARISONS);

/**
 * The request a job carries: the group's apiCheckDefaults applied as the
 * comparable product applies them: a relative URL is put after the group's
 * base, the group's headers and query parameters are added where the check
 * sets none of the same key, its assertions are added to the check's, and its
 * basic auth serves a check with none. `{{VARIABLES}}` stay for the agent.
 */
export function requestWithGroupDefaults(request: ApiRequest, defaults: ApiCheckDefaults | undefined): ApiRequest {
  if (!defaults) return request;
  const url = ABSOLUTE.test(request.url) || PLACEHOLDER_START.test(request.url) ? request.url : joinUrl(defaults.url ?? '', request.url);
  const headerKeys = new Set(request.headers.map((header) => header.key.toLowerCase()));
  const queryKeys = new Set(request.queryParameters.map((parameter) => parameter.key));
  const groupAuth = defaults.basicAuth && defaults.basicAuth.username !== '' ? defaults.basicAuth : null;
  const ownAuth = request.basicAuth && request.basicAuth.username !== '' ? request.basicAuth : null;
  return {
    ...request,
    url,
    headers: [...(defaults.headers ?? []).filter((header) => !headerKeys.has(header.key.toLowerCase())), ...request.headers],
    queryParameters: [...(defaults.queryParameters ?? []).filter((parameter) => !queryKeys.has(parameter.key)), ...request.queryParameters],
    assertions: [
      ...request.assertions,
      ...(defaults.assertions ?? [])
        .filter((assertion) => SOURCES.has(assertion.source) && COMPARISONS.has(assertion.comparison))
        .map((assertion) => ({
          source: assertion.source as ApiRequest['assertions'][number]['source'],
          comparison: assertion.comparison as ApiRequest['assertions'][number]['comparison'],
          property: '',
          target: assertion.target,
        })),
    ].slice(0, 50),
    basicAuth: ownAuth ?? groupAuth ?? request.basicAuth,
  };
}

function scripts(group: string | null | undefined, check: string | null | undefined): ApiScript[] {
  const list: ApiScript[] = [];
  if (group && group.trim() !== '') list.push({ origin: 'group', script: group });
  if (check && check.trim() !== '') list.push({ origin: 'check', script: check });
  return list;
}

export const apiCheck: CheckTypeDefinition = {
  checkType: 'API',
  path: 'api',
  summary: 'API check: one HTTP request with optional setup and teardown scripts, assertions on status, headers, body and time',
  createSchema,
  updateSchema: updateSchemaFor(createSchema),
  bodyLimit: 4 * 1024 * 1024,
  requestOnlyFields: [],
  mergeUpdate: (stored, changes) => {
    const merged: Record<string, unknown> = {
      ...stored,
      ...changes,
      request: { ...(stored.request as object), ...(changes.request as object | undefined) },
    };
    if (Array.isArray(changes.environmentVariables)) {
      merged.environmentVariables = keepMaskedSecrets(
        changes.environmentVariables as Partial<EnvironmentVariable>[],
        api(stored).environmentVariables,
      );
    }
    return merged;
  },
  crossFieldProblems: (definition) => {
    const check = api(definition);
    const problems: Record<string, string> = {
      ...thresholdProblems(definition, 'degradedResponseTime', 'maxResponseTime'),
      ...environmentVariableProblems(check.environmentVariables),
      ...requestProblems(check),
    };
    // This service keeps no snippets: any id names none.
    if (typeof check.setupSnippetId === 'number') problems.setupSnippetId = `unknown snippet: ${check.setupSnippetId} (this service has no snippets; use setupScript)`;
    if (typeof check.tearDownSnippetId === 'number') problems.tearDownSnippetId = `unknown snippet: ${check.tearDownSnippetId} (this service has no snippets; use tearDownScript)`;
    const runtime = runtimeProblem(check.runtimeId);
    if (runtime) problems.runtimeId = runtime;
    return problems;
  },
  jobSpec: (definition, group?: GroupDefinition) => {
    const check = api(definition);
    const settings: ApiSettings = {
      request: requestWithGroupDefaults(check.request, group?.apiCheckDefaults as ApiCheckDefaults | undefined),
      setupScripts: scripts(group?.localSetupScript as string | null | undefined, check.setupScript),
      tearDownScripts: scripts(group?.localTearDownScript as string | null | undefined, check.tearDownScript),
      degradedResponseTime: check.degradedResponseTime,
      maxResponseTime: check.maxResponseTime,
      shouldFail: check.shouldFail,
    };
    const scriptCount = settings.setupScripts.length + settings.tearDownScripts.length;
    return {
      settings,
      // Past maxResponseTime the run has failed anyway (at most 30 s, as the reference's API checks); 10 s per script.
      timeoutSeconds: Math.ceil(check.maxResponseTime / 1000) + 5 + SCRIPT_SECONDS * scriptCount,
      // Only scripts need a runtime; a plain request runs on any agent that runs API checks.
      runtimeId: scriptCount > 0 ? (check.runtimeId ?? DEFAULT_RUNTIME_ID) : null,
      environmentVariables: jobVariables(check.environmentVariables),
    };
  },
};
