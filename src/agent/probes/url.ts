/**
 * The URL monitor: one GET or HEAD, over a connection opened for this run
 * only, timed phase by phase. A monitor measures what a first-time visitor
 * gets, so nothing (connections, TLS sessions, DNS answers) is reused.
 */
import { performance } from 'node:perf_hooks';
import { request as httpRequest, type ClientRequest } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  HttpError,
  InvalidSettingsError,
  OutpostError,
  ProbeTimeoutError,
  RedirectError,
} from '../../errors/index.js';
import type { ResultError, Timings } from '../../protocol/agent-api.js';
import { URL_MAX_RESPONSE_TIME_CAP_MS, UrlSettingsSchema } from '../../protocol/url-settings.js';
import { evaluateAssertions } from './assertions.js';
import { withResponseTime } from './response-time-verdict.js';
import type { AssertionInput } from './assertions.js';
import { createTimedConnector } from './http-connector.js';
import type { ConnectionPhases, IpFamily } from './http-connector.js';
import { erroredOutcome, type Probe, type ProbeContext, type ProbeOutcome } from './probe.js';
import { settingsParser } from './settings-parser.js';

/** Redirects followed before giving up; the request after the 10th redirect is never sent. */
export const MAX_REDIRECTS = 10;
/** Enough body to time a real download; past it the connection is dropped. */
export const MAX_BODY_BYTES = 1024 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'Outpost (synthetic monitoring agent)';

/** UrlSettings after defaults: every optional field is present. */
export interface UrlSettingsParsed {
  request: {
    url: string;
    method: 'GET' | 'HEAD';
    followRedirects: boolean;
    skipSSL: boolean;
    ipFamily: IpFamily;
    assertions: AssertionInput[];
  };
  degradedResponseTime: number;
  maxResponseTime: number;
}

export const urlProbe: Probe<UrlSettingsParsed> = {
  checkType: 'URL',
  parseSettings: parseUrlSettings,
  run: runUrlProbe,
};

const parseSchema = settingsParser(UrlSettingsSchema, 'URL monitor');

export function parseUrlSettings(raw: unknown): UrlSettingsParsed {
  const value = parseSchema(raw);
  const problems: string[] = [];
  const url = URL.parse(value.request.url);
  if (url === null) problems.push('request.url: not a valid URL');
  if (problems.length > 0) throw new InvalidSettingsError(`Invalid URL monitor settings: ${problems.join('; ')}`);
  // Value.Default filled every optional field that has a default, which is all of them.
  return value as UrlSettingsParsed;
}

/** What one request/response exchange found; filled in as it happens, so a failure keeps what was measured. */
interface Hop {
  url: URL;
  phases: ConnectionPhases;
  firstByte: number | null;
  download: number | null;
  statusCode: number | null;
  statusText: string;
  location: string | null;
  bodyBytes: number;
  bodyTruncated: boolean;
}

async function runUrlProbe(settings: UrlSettingsParsed, context: ProbeContext): Promise<ProbeOutcome> {
  const startedAt = performance.now();
  const timeoutMs =
    Number.isFinite(context.timeoutMs) && context.timeoutMs > 0 ? context.timeoutMs : URL_MAX_RESPONSE_TIME_CAP_MS;
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new ProbeTimeoutError(`${settings.request.method} ${settings.request.url} exceeded ${timeoutMs} ms`)),
    timeoutMs,
  );
  const signal = AbortSignal.any([context.signal, deadline.signal]);
  const hops: Hop[] = [];
  try {
    const final = await followRedirects(settings.request, signal, hops);
    return judge(settings, final, hops, performance.now() - startedAt);
  } catch (error) {
    const request = `${settings.request.method} ${hops.at(-1)?.url.href ?? settings.request.url}`;
    const failure = describeFailure(error, request, deadline.signal, context.signal);
    return failed(failure, hops, performance.now() - startedAt);
  } finally {
    clearTimeout(timer);
  }
}

async function followRedirects(
  request: UrlSettingsParsed['request'],
  signal: AbortSignal,
  hops: Hop[],
): Promise<Hop> {
  let url = new URL(request.url);
  const visited = new Set<string>([url.href]);
  for (;;) {
    const hop = await exchange(url, request, signal, hops);
    const next = request.followRedirects ? redirectTarget(hop) : null;
    if (next === null) return hop;
    if (visited.has(next.href)) {
      throw new RedirectError(`Redirect loop: ${url.href} redirects back to ${next.href}`);
    }
    if (hops.length > MAX_REDIRECTS) {
      throw new RedirectError(`More than ${MAX_REDIRECTS} redirects; the last one pointed to ${next.href}`);
    }
    visited.add(next.href);
    url = next;
  }
}

function redirectTarget(hop: Hop): URL | null {
  if (hop.statusCode === null || !REDIRECT_STATUSES.has(hop.statusCode) || hop.location === null) return null;
  const next = URL.parse(hop.location, hop.url.href);
  if (next === null) {
    throw new HttpError(`${hop.url.href} answered ${hop.statusCode} with an invalid Location: ${hop.location}`);
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    throw new HttpError(`${hop.url.href} redirects to ${next.href}, which is not an HTTP(S) URL`);
  }
  return next;
}

/**
 * One request on one fresh connection, closed before this returns whatever
 * happens. node:http rather than undici: a client per run is the point here,
 * and undici's costs more CPU per run and builds an error, stack trace
 * included, for every connection it closes (docs/performance.md).
 */
async function exchange(
  url: URL,
  request: UrlSettingsParsed['request'],
  signal: AbortSignal,
  hops: Hop[],
): Promise<Hop> {
  signal.throwIfAborted();
  const connector = createTimedConnector({ ipFamily: request.ipFamily, skipSSL: request.skipSSL, signal });
  const hop: Hop = {
    url,
    phases: connector.phases,
    firstByte: null,
    download: null,
    statusCode: null,
    statusText: '',
    location: null,
    bodyBytes: 0,
    bodyTruncated: false,
  };
  hops.push(hop);
  let outgoing: ClientRequest | undefined;
  let onAbort = (): void => undefined;
  try {
    return await new Promise<Hop>((resolve, reject) => {
      let requestAt = 0;
      let headersAt = 0;
      let done = false;
      const settle = (error?: Error): void => {
        if (done) return;
        done = true;
        if (error) reject(error);
        else {
          hop.download = performance.now() - headersAt;
          resolve(hop);
        }
      };
      onAbort = () => settle(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      signal.addEventListener('abort', onAbort, { once: true });
      outgoing = httpRequest({
        method: request.method,
        path: `${url.pathname}${url.search}`,
        // Connection: close; the socket is not worth keeping and the server should know.
        headers: { host: url.host, 'user-agent': USER_AGENT, accept: '*/*', connection: 'close' },
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
      outgoing.on('error', (error) => settle(error));
      outgoing.on('response', (response) => {
        headersAt = performance.now();
        hop.firstByte = headersAt - requestAt;
        hop.statusCode = response.statusCode ?? null;
        hop.statusText = response.statusMessage ?? '';
        hop.location = response.headers.location ?? null;
        response.on('data', (chunk: Buffer) => {
          hop.bodyBytes += chunk.length;
          if (hop.bodyBytes > MAX_BODY_BYTES && !done) {
            hop.bodyTruncated = true;
            settle();
          }
        });
        response.on('end', () => settle());
        // The connection ended before the body did ('close' comes after 'end' otherwise).
        response.on('error', (error) => settle(error));
        response.on('close', () => settle(serverClosed()));
      });
      outgoing.end();
    });
  } finally {
    signal.removeEventListener('abort', onAbort);
    // Without an error: destroying builds nothing, and the socket is done with either way.
    outgoing?.destroy();
  }
}

function serverClosed(): Error {
  return Object.assign(new Error('the server closed the connection'), { code: 'ECONNRESET' });
}

function judge(settings: UrlSettingsParsed, final: Hop, hops: Hop[], elapsed: number): ProbeOutcome {
  const timings = sumTimings(hops, elapsed);
  // The target's time, not the agent's: the network phases, without `wait`
  // (the agent setting up before and between them), which grows with the
  // agent's own load and says nothing about the site.
  const responseTime = round(timings.total! - (timings.wait ?? 0));
  const statusCode = final.statusCode ?? 0;
  const assertions = evaluateAssertions(settings.request.assertions, (source) =>
    source === 'STATUS_CODE' ? statusCode : undefined,
  );
  let error: ResultError | null = null;
  let hasFailures = assertions.some((result) => !result.passed);
  // Without assertions an error status is the only signal there is; with
  // assertions the user has said what "good" means, including expected 4xx/5xx.
  if (assertions.length === 0 && statusCode >= 400) {
    hasFailures = true;
    error = {
      code: 'HTTP_STATUS',
      message: `${settings.request.method} ${final.url.href} answered ${statusCode}${final.statusText ? ` ${final.statusText}` : ''}`,
    };
  }
  return {
    responseTime,
    ...withResponseTime(responseTime, settings, { hasFailures, isDegraded: false, error }),
    hasErrors: false,
    timings,
    statusCode,
    assertions,
    details: details(hops),
  };
}

function failed(error: ResultError, hops: Hop[], elapsed: number): ProbeOutcome {
  return erroredOutcome(error, round(elapsed), hops.length > 0 ? sumTimings(hops, elapsed) : null, details(hops));
}

function describeFailure(error: unknown, request: string, deadline: AbortSignal, cancel: AbortSignal): ResultError {
  // Checked first: aborting tears the connection down, and whatever error that
  // surfaces as is a symptom of the deadline, not the cause.
  if (deadline.aborted) return asTimeout(deadline.reason);
  if (cancel.aborted) {
    const reason: unknown = cancel.reason;
    if (reason instanceof OutpostError) return reason.toJSON();
    if (reason instanceof Error && reason.name === 'TimeoutError') {
      return new ProbeTimeoutError(`The run exceeded its time budget: ${reason.message}`).toJSON();
    }
    return { code: 'CANCELLED', message: 'The run was cancelled before it finished' };
  }
  if (error instanceof OutpostError) return error.toJSON();
  // Past the connector, what is left is node:http failing the exchange itself.
  const code: unknown = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined;
  if (code === 'ECONNRESET') {
    return new HttpError(`${request}: the server closed the connection before the response was complete`).toJSON();
  }
  const message = error instanceof Error ? error.message : String(error);
  return new HttpError(`${request} failed: ${message}`).toJSON();
}

function asTimeout(reason: unknown): ResultError {
  if (reason instanceof ProbeTimeoutError) return reason.toJSON();
  return new ProbeTimeoutError(reason instanceof Error ? reason.message : String(reason)).toJSON();
}

/**
 * Phases are summed over redirect hops; total is wall-clock, gaps between hops
 * included, and wait is what total holds beyond the phases.
 */
function sumTimings(hops: Hop[], elapsed: number): Timings {
  const phases = {
    dns: sum(hops.map((hop) => hop.phases.dns)),
    tcp: sum(hops.map((hop) => hop.phases.tcp)),
    tls: sum(hops.map((hop) => hop.phases.tls)),
    firstByte: sum(hops.map((hop) => hop.firstByte)),
    download: sum(hops.map((hop) => hop.download)),
  };
  const accounted = Object.values(phases).reduce<number>((total, value) => total + (value ?? 0), 0);
  return { wait: round(Math.max(0, elapsed - accounted)), ...phases, total: round(elapsed) };
}

function sum(values: (number | null)[]): number | null {
  const present = values.filter((value): value is number => value !== null);
  return present.length === 0 ? null : round(present.reduce((a, b) => a + b, 0));
}

/** Microsecond precision: loopback TCP handshakes take well under 0.1 ms and must not read as 0. */
function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

function details(hops: Hop[]): Record<string, unknown> {
  const last = hops.at(-1);
  return {
    redirects: Math.max(hops.length - 1, 0),
    finalUrl: last?.url.href ?? null,
    remoteAddress: last?.phases.remoteAddress ?? null,
    // Only HTTP/1.1 is offered (ALPN and the client), so that is what is spoken.
    httpVersion: last?.statusCode != null ? '1.1' : null,
    bodyBytesRead: last?.bodyBytes ?? 0,
    bodyTruncated: last?.bodyTruncated ?? false,
  };
}
