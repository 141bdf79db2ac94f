import Type from 'typebox';
import { AssertionSchema } from './assertion.js';
import type { CheckType } from './enums.js';
import { laneOf, type Lane } from './lanes.js';
import { MAX_SCRIPT_CHARS } from './multistep-settings.js';

export const API_MAX_RESPONSE_TIME_CAP_MS = 30_000;
/** A request body as stored and sent: far beyond what an API check posts, well below a job's size. */
export const MAX_API_BODY_CHARS = 1_048_576;
/** What of a response body a result keeps (and assertions read): the rest is cut off and said so. */
export const MAX_API_RESPONSE_BODY_BYTES = 1_048_576;
/** Each setup or teardown script runs for at most this long. */
export const API_SCRIPT_TIMEOUT_MS = 10_000;

export const API_ASSERTION_SOURCES = ['STATUS_CODE', 'JSON_BODY', 'HEADERS', 'TEXT_BODY', 'RESPONSE_TIME'] as const;
export const API_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export const API_BODY_TYPES = ['NONE', 'JSON', 'FORM', 'RAW', 'GRAPHQL'] as const;

export const ApiAssertionSchema = Type.Object({
  ...AssertionSchema.properties,
  source: Type.Enum(API_ASSERTION_SOURCES),
});

export const KeyValueSchema = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 1024 }),
  value: Type.String({ maxLength: 8192 }),
});
export type KeyValue = Type.Static<typeof KeyValueSchema>;

/**
 * An API check's request as it travels in a job: the group's apiCheckDefaults
 * already applied by the service, `{{VARIABLE}}` placeholders NOT yet
 * replaced. The agent replaces them from the job's environmentVariables, so
 * every secret that ends up in the request is one its scrubber knows.
 */
export const ApiRequestSchema = Type.Object({
  method: Type.Enum(API_METHODS),
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  headers: Type.Array(KeyValueSchema, { maxItems: 100 }),
  queryParameters: Type.Array(KeyValueSchema, { maxItems: 100 }),
  body: Type.String({ maxLength: MAX_API_BODY_CHARS }),
  bodyType: Type.Enum(API_BODY_TYPES),
  basicAuth: Type.Union([
    Type.Object({ username: Type.String({ maxLength: 1024 }), password: Type.String({ maxLength: 1024 }) }),
    Type.Null(),
  ]),
  followRedirects: Type.Boolean(),
  skipSSL: Type.Boolean(),
  ipFamily: Type.Enum(['IPv4', 'IPv6']),
  assertions: Type.Array(ApiAssertionSchema, { maxItems: 50 }),
});
export type ApiRequest = Type.Static<typeof ApiRequestSchema>;

/** One setup or teardown script, in the order it runs: the group's, then the check's (a snippet's code is inlined). */
export const ApiScriptSchema = Type.Object({
  origin: Type.Enum(['group', 'check', 'snippet']),
  script: Type.String({ minLength: 1, maxLength: MAX_SCRIPT_CHARS }),
});
export type ApiScript = Type.Static<typeof ApiScriptSchema>;

/** The API check settings that travel in a job. */
export const ApiSettingsSchema = Type.Object({
  request: ApiRequestSchema,
  setupScripts: Type.Array(ApiScriptSchema, { maxItems: 3 }),
  tearDownScripts: Type.Array(ApiScriptSchema, { maxItems: 3 }),
  degradedResponseTime: Type.Integer({ minimum: 0, maximum: API_MAX_RESPONSE_TIME_CAP_MS }),
  maxResponseTime: Type.Integer({ minimum: 0, maximum: API_MAX_RESPONSE_TIME_CAP_MS }),
  shouldFail: Type.Boolean(),
});
export type ApiSettings = Type.Static<typeof ApiSettingsSchema>;

/**
 * The lane a job runs in. An API check runs in-process with the probes unless
 * it has a setup or teardown script: scripts are hostile, and only the script
 * lane's sandboxes run them. The service stores the lane with each job (the
 * claim asks for room per lane); both sides decide it with this one function.
 */
export function laneOfJob(job: { checkType: CheckType; settings: unknown }): Lane {
  if (job.checkType === 'API') {
    const settings = job.settings as Partial<ApiSettings> | undefined;
    const scripts = (settings?.setupScripts?.length ?? 0) + (settings?.tearDownScripts?.length ?? 0);
    return scripts > 0 ? 'script' : 'uptime';
  }
  return laneOf(job.checkType);
}
