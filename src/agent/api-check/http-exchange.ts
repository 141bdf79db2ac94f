/**
 * Sends an API check's request, one hop per connection (probes/http-hop.ts,
 * timed phase by phase by the URL probe's connector), and keeps the response:
 * status, headers, and the body up to MAX_API_RESPONSE_BODY_BYTES. What is
 * the API check's own: the headers it adds to the user's, and how a redirect
 * changes the method, the body and the credentials sent on.
 */
import { RedirectError } from '../../errors/index.js';
import type { DestinationPolicy } from '../../net-policy/index.js';
import { MAX_API_RESPONSE_BODY_BYTES } from '../../protocol/api-settings.js';
import type { IpFamily } from '../probes/http-connector.js';
import { redirectTarget, sendHop, USER_AGENT, type HttpHop } from '../probes/http-hop.js';
import { MAX_REDIRECTS } from '../probes/url.js';
import { hasHeader, requestUrl, type ApiMethod, type OutgoingRequest } from './request.js';

/** Credentials a redirect to another origin does not carry on, as browsers and fetch do. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);

export interface ExchangeOptions {
  followRedirects: boolean;
  skipSSL: boolean;
  ipFamily: IpFamily;
  signal: AbortSignal;
  /** The location's destination policy, for every hop; undefined: anywhere. */
  destinations?: DestinationPolicy | undefined;
}

/** One request/response on one connection; filled in as it happens, so a failure keeps what was measured. */
export type Hop = HttpHop<ApiMethod>;

/** Sends the request, following redirects when asked; resolves with the last hop. Hops are pushed onto `hops` as they start. */
export async function sendRequest(request: OutgoingRequest, options: ExchangeOptions, hops: Hop[]): Promise<Hop> {
  let url = requestUrl(request);
  let method = request.method;
  let body: string | null = request.body === '' ? null : request.body;
  let headers = { ...request.headers };
  const visited = new Set<string>([url.href]);
  for (;;) {
    const hop = await exchange(url, method, headers, body, options, hops);
    const next = options.followRedirects ? redirectTarget(hop) : null;
    if (next === null) return hop;
    if (visited.has(next.href)) throw new RedirectError(`Redirect loop: ${url.href} redirects back to ${next.href}`);
    if (hops.length > MAX_REDIRECTS) throw new RedirectError(`More than ${MAX_REDIRECTS} redirects; the last one pointed to ${next.href}`);
    visited.add(next.href);
    // 303, and 301/302 after anything but GET/HEAD, turn into a GET without a body (as browsers and fetch do); 307/308 repeat the request.
    const status = hop.statusCode ?? 0;
    if (status === 303 || ((status === 301 || status === 302) && method !== 'GET' && method !== 'HEAD')) {
      method = method === 'HEAD' ? 'HEAD' : 'GET';
      body = null;
      headers = withoutHeaders(headers, (name) => name === 'content-type' || name === 'content-length');
    }
    if (next.origin !== url.origin) headers = withoutHeaders(headers, (name) => CREDENTIAL_HEADERS.has(name));
    url = next;
  }
}

function withoutHeaders(headers: Record<string, string>, drop: (lowerName: string) => boolean): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !drop(name.toLowerCase())));
}

/** One hop: the user's headers over the defaults, connection: close, content-length set for the body if any. */
function exchange(
  url: URL,
  method: ApiMethod,
  requestHeaders: Record<string, string>,
  body: string | null,
  options: ExchangeOptions,
  hops: Hop[],
): Promise<Hop> {
  const payload = body === null ? null : Buffer.from(body, 'utf8');
  const headers: Record<string, string> = {
    host: url.host,
    'user-agent': USER_AGENT,
    accept: '*/*',
    ...requestHeaders,
    connection: 'close',
  };
  if (hasHeader(requestHeaders, 'host')) delete headers.host;
  if (hasHeader(requestHeaders, 'user-agent')) delete headers['user-agent'];
  if (hasHeader(requestHeaders, 'accept')) delete headers.accept;
  for (const name of Object.keys(headers)) if (name.toLowerCase() === 'content-length' || name.toLowerCase() === 'transfer-encoding') delete headers[name];
  if (payload !== null) headers['content-length'] = String(payload.length);
  const { ipFamily, skipSSL, signal, destinations } = options;
  const limit = MAX_API_RESPONSE_BODY_BYTES;
  return sendHop(
    { method, url, headers, body: payload },
    { ipFamily, skipSSL, signal, destinations, readLimit: limit, keepLimit: limit },
    hops,
  );
}
