/**
 * An API check's request, from the job's settings to what is sent: `{{VAR}}`
 * placeholders replaced from the job's variables, the body encoded by its
 * type with a content type to match, basic auth as an Authorization header.
 * The result is what setup scripts see and may change (`OutgoingRequest`),
 * and what the agent sends once they are done.
 */
import { ApiRequestInvalidError } from '../../errors/index.js';
import { API_METHODS, MAX_API_BODY_CHARS, type ApiRequest } from '../../protocol/api-settings.js';

export type ApiMethod = (typeof API_METHODS)[number];

/** The request as setup scripts see it and the agent sends it: plain objects, every value a string. */
export interface OutgoingRequest {
  method: ApiMethod;
  url: string;
  headers: Record<string, string>;
  queryParameters: Record<string, string>;
  body: string;
}

type Variables = readonly { key: string; value: string; secret?: boolean }[];

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** `{{NAME}}` replaced by the variable's value; a name the job has no variable for stays as written. */
export function replacePlaceholders(text: string, variables: ReadonlyMap<string, string>): string {
  if (!text.includes('{{')) return text;
  return text.replace(PLACEHOLDER, (whole, name: string) => variables.get(name) ?? whole);
}

export function variableMap(variables: Variables): Map<string, string> {
  return new Map(variables.map((variable) => [variable.key, variable.value]));
}

/** The job's request with its variables applied and its body encoded: what the first setup script gets. */
export function prepareRequest(request: ApiRequest, variables: Variables): OutgoingRequest {
  const vars = variableMap(variables);
  const fill = (text: string) => replacePlaceholders(text, vars);
  const headers: Record<string, string> = {};
  for (const header of request.headers) headers[fill(header.key)] = fill(header.value);
  const queryParameters: Record<string, string> = {};
  for (const parameter of request.queryParameters) queryParameters[fill(parameter.key)] = fill(parameter.value);
  const encoded = encodeBody(request.bodyType, fill(request.body));
  if (encoded.contentType && !hasHeader(headers, 'content-type')) headers['Content-Type'] = encoded.contentType;
  if (request.basicAuth && (request.basicAuth.username !== '' || request.basicAuth.password !== '') && !hasHeader(headers, 'authorization')) {
    const credentials = `${fill(request.basicAuth.username)}:${fill(request.basicAuth.password)}`;
    headers.Authorization = `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
  }
  return { method: request.method, url: fill(request.url), headers, queryParameters, body: encoded.body };
}

/**
 * JSON: sent as written, application/json. FORM: a JSON object is encoded as
 * key=value pairs (nested values as JSON), anything else is taken as already
 * encoded (`a=1&b=2`). GRAPHQL: a JSON document with a `query` is sent as is,
 * any other text is the query itself, sent as `{"query": …}`. RAW: as written,
 * no content type added.
 */
export function encodeBody(bodyType: ApiRequest['bodyType'], body: string): { body: string; contentType?: string } {
  switch (bodyType) {
    case 'NONE':
      return { body: '' };
    case 'JSON':
      return { body, contentType: 'application/json' };
    case 'FORM': {
      const object = parseObject(body);
      if (object === undefined) return { body, contentType: 'application/x-www-form-urlencoded' };
      const form = new URLSearchParams();
      for (const [key, value] of Object.entries(object)) {
        if (Array.isArray(value)) for (const item of value) form.append(key, formValue(item));
        else form.append(key, formValue(value));
      }
      return { body: form.toString(), contentType: 'application/x-www-form-urlencoded' };
    }
    case 'GRAPHQL': {
      const object = parseObject(body);
      const document = object !== undefined && typeof object.query === 'string' ? body : JSON.stringify({ query: body });
      return { body: document, contentType: 'application/json' };
    }
    case 'RAW':
      return { body };
  }
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (!text.trimStart().startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function formValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

export function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

/** Assertions with `{{VAR}}` filled in their property and target, as the request's fields are. */
export function resolveAssertions<A extends { property?: string; target?: string }>(assertions: readonly A[], variables: Variables): A[] {
  const vars = variableMap(variables);
  return assertions.map((assertion) => ({
    ...assertion,
    ...(assertion.property !== undefined ? { property: replacePlaceholders(assertion.property, vars) } : {}),
    ...(assertion.target !== undefined ? { target: replacePlaceholders(assertion.target, vars) } : {}),
  }));
}

/** The URL with the query parameters appended to any it already has. */
export function requestUrl(request: OutgoingRequest): URL {
  const url = URL.parse(request.url);
  if (url === null) throw new ApiRequestInvalidError(`The request URL is not a valid URL: ${request.url}`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ApiRequestInvalidError(`The request URL must be http: or https:, not ${url.protocol}`);
  }
  for (const [key, value] of Object.entries(request.queryParameters)) url.searchParams.append(key, value);
  return url;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * A request a setup script handed back, checked field by field: scripts may
 * put numbers where strings go, and objects in the body (sent as JSON), but
 * nothing node:http would refuse or could be smuggled through.
 */
export function checkScriptRequest(value: unknown): OutgoingRequest {
  if (typeof value !== 'object' || value === null) throw new ApiRequestInvalidError('The setup scripts left no request object');
  const raw = value as Record<string, unknown>;
  const method = typeof raw.method === 'string' ? raw.method.toUpperCase() : '';
  if (!(API_METHODS as readonly string[]).includes(method)) {
    throw new ApiRequestInvalidError(`request.method must be one of ${API_METHODS.join(', ')}, not ${JSON.stringify(raw.method)}`);
  }
  if (typeof raw.url !== 'string') throw new ApiRequestInvalidError('request.url must be a string');
  const headers = stringRecord(raw.headers, 'request.headers');
  for (const [name, headerValue] of Object.entries(headers)) {
    if (!TOKEN.test(name)) throw new ApiRequestInvalidError(`request.headers: ${JSON.stringify(name)} is not a valid header name`);
    if (/[\r\n\0]/.test(headerValue)) throw new ApiRequestInvalidError(`request.headers.${name}: line breaks are not allowed in a header value`);
  }
  const body = raw.body === undefined || raw.body === null ? '' : typeof raw.body === 'string' ? raw.body : JSON.stringify(raw.body);
  if (body.length > MAX_API_BODY_CHARS) throw new ApiRequestInvalidError(`request.body is longer than ${MAX_API_BODY_CHARS} characters`);
  const request: OutgoingRequest = {
    method: method as ApiMethod,
    url: raw.url,
    headers,
    queryParameters: stringRecord(raw.queryParameters, 'request.queryParameters'),
    body,
  };
  requestUrl(request);
  return request;
}

function stringRecord(value: unknown, field: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ApiRequestInvalidError(`${field} must be an object of names and values`);
  const record: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || item === null) continue;
    if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean') {
      throw new ApiRequestInvalidError(`${field}.${key} must be a string`);
    }
    record[key] = String(item);
  }
  return record;
}
