/**
 * One HTTP request and its response on a fresh connection from the timed
 * connector (http-connector.ts): a hop of a URL monitor or an API check,
 * timed phase by phase, its status and headers kept, its body read up to a
 * limit and kept up to another. Redirects are the caller's: each follows them
 * by its own rules, one hop at a time.
 */
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import { HttpError } from '../../errors/index.js';
import type { ResultError, Timings } from '../../protocol/agent-api.js';
import type { DestinationPolicy } from '../../net-policy/index.js';
import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders } from '../../node-http.js';
import { createTimedConnector, type ConnectionPhases, type IpFamily } from './http-connector.js';
import { roundMs } from './probe-failure.js';

export const USER_AGENT = 'Outpost (synthetic monitoring agent)';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface HopRequest<Method extends string = string> {
  method: Method;
  url: URL;
  /** Sent as given, in this order: the caller sets host, connection and content-length. */
  headers: Record<string, string>;
  body: Buffer | null;
}

export interface HopOptions {
  ipFamily: IpFamily;
  skipSSL: boolean;
  /** Aborting it ends the hop with the signal's reason and tears the connection down. */
  signal: AbortSignal;
  /** Past this many body bytes the connection is dropped and the body is marked truncated. */
  readLimit: number;
  /** How much of the body `body` keeps; 0 keeps none (the bytes are still read and counted). */
  keepLimit: number;
  /** Every hop, redirects included, connects only where this allows; undefined: anywhere. */
  destinations?: DestinationPolicy | undefined;
}

/** One request/response on one connection; filled in as it happens, so a failure keeps what was measured. */
export interface HttpHop<Method extends string = string> {
  method: Method;
  url: URL;
  phases: ConnectionPhases;
  firstByte: number | null;
  download: number | null;
  statusCode: number | null;
  statusText: string;
  /** Names in lower case; repeated headers joined as HTTP allows (`set-cookie` lines with a newline). */
  headers: Record<string, string>;
  /** Up to keepLimit bytes of the body. */
  body: Buffer;
  bodyBytes: number;
  bodyTruncated: boolean;
}

/** The hop timings are summed from. */
export type TimedHop = Pick<HttpHop, 'phases' | 'firstByte' | 'download'>;

/**
 * One request on one fresh connection, closed before this returns whatever
 * happens. The hop is pushed onto `hops` before anything is sent. node:http
 * rather than undici: a client per run is the point here, and undici's costs
 * more CPU per run and builds an error, stack trace included, for every
 * connection it closes (docs/performance.md).
 */
export async function sendHop<Method extends string>(
  request: HopRequest<Method>,
  options: HopOptions,
  hops: HttpHop<Method>[],
): Promise<HttpHop<Method>> {
  const { url } = request;
  const { signal } = options;
  signal.throwIfAborted();
  const connector = createTimedConnector({
    ipFamily: options.ipFamily,
    skipSSL: options.skipSSL,
    signal,
    destinations: options.destinations,
  });
  const hop: HttpHop<Method> = {
    method: request.method,
    url,
    phases: connector.phases,
    firstByte: null,
    download: null,
    statusCode: null,
    statusText: '',
    headers: {},
    body: EMPTY,
    bodyBytes: 0,
    bodyTruncated: false,
  };
  hops.push(hop);
  let outgoing: ClientRequest | undefined;
  let onAbort = (): void => undefined;
  try {
    return await new Promise<HttpHop<Method>>((resolve, reject) => {
      let requestAt = 0;
      let headersAt = 0;
      let done = false;
      const chunks: Buffer[] = [];
      let kept = 0;
      const settle = (error?: Error): void => {
        if (done) return;
        done = true;
        if (kept > 0) hop.body = Buffer.concat(chunks, kept);
        if (error) reject(error);
        else {
          hop.download = performance.now() - headersAt;
          resolve(hop);
        }
      };
      onAbort = () => settle(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        outgoing = httpRequest({
          method: request.method,
          path: `${url.pathname}${url.search}`,
          headers: request.headers,
          setHost: false,
          // No agent: with createConnection alone, node:http uses exactly this socket, once.
          createConnection: (_options, ready: (error: Error | null, socket: Duplex) => void) => {
            connector.open(url).then(
              (socket) => {
                // The request is written on this socket as soon as it is handed over.
                requestAt = performance.now();
                ready(null, socket);
              },
              // With an error node:http never looks at the socket; its type just has no room for none.
              (error: unknown) => ready(error instanceof Error ? error : new Error(String(error)), undefined as never),
            );
            return undefined;
          },
        });
      } catch (error) {
        // node:http refuses a header it cannot send (a character out of range) before anything is opened.
        settle(new HttpError(`The request could not be sent: ${(error as Error).message}`));
        return;
      }
      outgoing.on('error', (error) => settle(error));
      outgoing.on('response', (response) => {
        headersAt = performance.now();
        hop.firstByte = headersAt - requestAt;
        hop.statusCode = response.statusCode ?? null;
        hop.statusText = response.statusMessage ?? '';
        hop.headers = flattenHeaders(response.headers);
        response.on('data', (chunk: Buffer) => {
          hop.bodyBytes += chunk.length;
          const room = options.keepLimit - kept;
          if (room > 0) {
            const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
            chunks.push(part);
            kept += part.length;
          }
          if (hop.bodyBytes > options.readLimit && !done) {
            hop.bodyTruncated = true;
            settle();
          }
        });
        response.on('end', () => settle());
        // The connection ended before the body did ('close' comes after 'end' otherwise).
        response.on('error', (error) => settle(error));
        // Only when it is news: an error with its stack is built per check otherwise.
        response.on('close', () => {
          if (!done) settle(serverClosed());
        });
      });
      if (request.body !== null) outgoing.end(request.body);
      else outgoing.end();
    });
  } finally {
    signal.removeEventListener('abort', onAbort);
    // Without an error: destroying builds nothing, and the socket is done with either way.
    outgoing?.destroy();
  }
}

const EMPTY = Buffer.alloc(0);

function serverClosed(): Error {
  return Object.assign(new Error('the server closed the connection'), { code: 'ECONNRESET' });
}

/** Header names in lower case; repeated headers joined as HTTP allows (`set-cookie` lines with a newline). */
function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    flat[name] = Array.isArray(value) ? value.join(name === 'set-cookie' ? '\n' : ', ') : value;
  }
  return flat;
}

/** Where a redirect answer points, or null for any other answer; throws when its Location cannot be followed. */
export function redirectTarget(hop: HttpHop): URL | null {
  const location = hop.headers.location;
  if (hop.statusCode === null || !REDIRECT_STATUSES.has(hop.statusCode) || location === undefined) return null;
  const next = URL.parse(location, hop.url.href);
  if (next === null) throw new HttpError(`${hop.url.href} answered ${hop.statusCode} with an invalid Location: ${location}`);
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    throw new HttpError(`${hop.url.href} redirects to ${next.href}, which is not an HTTP(S) URL`);
  }
  return next;
}

/**
 * What went wrong with an exchange that is not an OutpostError (the connector
 * throws those): node:http failing the exchange itself. `request` names it, as
 * `GET https://example.com/`.
 */
export function describeExchangeFailure(request: string, error: unknown): ResultError {
  const code: unknown = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined;
  if (code === 'ECONNRESET') {
    return new HttpError(`${request}: the server closed the connection before the response was complete`).toJSON();
  }
  const message = error instanceof Error ? error.message : String(error);
  return new HttpError(`${request} failed: ${message}`).toJSON();
}

/**
 * Phases are summed over redirect hops; total is wall-clock, gaps between hops
 * included, and wait is what total holds beyond the phases.
 */
export function sumTimings(hops: readonly TimedHop[], elapsed: number): Timings {
  const phases = {
    dns: sum(hops.map((hop) => hop.phases.dns)),
    tcp: sum(hops.map((hop) => hop.phases.tcp)),
    tls: sum(hops.map((hop) => hop.phases.tls)),
    firstByte: sum(hops.map((hop) => hop.firstByte)),
    download: sum(hops.map((hop) => hop.download)),
  };
  const accounted = Object.values(phases).reduce<number>((total, value) => total + (value ?? 0), 0);
  return { wait: roundMs(Math.max(0, elapsed - accounted)), ...phases, total: roundMs(elapsed) };
}

function sum(values: (number | null)[]): number | null {
  const present = values.filter((value): value is number => value !== null);
  return present.length === 0 ? null : roundMs(present.reduce((a, b) => a + b, 0));
}
