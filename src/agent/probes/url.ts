/**
 * The URL monitor: one GET or HEAD, over a connection opened for this run
 * only, timed phase by phase. A monitor measures what a first-time visitor
 * gets, so nothing (connections, TLS sessions, DNS answers) is reused.
 */
import { performance } from 'node:perf_hooks';
import { InvalidSettingsError, ProbeTimeoutError, RedirectError } from '../../errors/index.js';
import type { ResultError } from '../../protocol/agent-api.js';
import { URL_MAX_RESPONSE_TIME_CAP_MS, UrlSettingsSchema } from '../../protocol/url-settings.js';
import { evaluateAssertions } from './assertions.js';
import { withResponseTime } from './response-time-verdict.js';
import type { AssertionInput } from './assertions.js';
import type { DestinationPolicy } from '../../net-policy/index.js';
import type { IpFamily } from './http-connector.js';
import { describeExchangeFailure, redirectTarget, sendHop, sumTimings, USER_AGENT, type HttpHop } from './http-hop.js';
import { erroredOutcome, type Probe, type ProbeContext, type ProbeOutcome } from './probe.js';
import { budgetMs, describeRunFailure, roundMs, startRunDeadline } from './probe-failure.js';
import { settingsParser } from './settings-parser.js';

/** Redirects followed before giving up; the request after the 10th redirect is never sent. */
export const MAX_REDIRECTS = 10;
/** Enough body to time a real download; past it the connection is dropped. */
export const MAX_BODY_BYTES = 1024 * 1024;

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

type Hop = HttpHop<UrlSettingsParsed['request']['method']>;

async function runUrlProbe(settings: UrlSettingsParsed, context: ProbeContext): Promise<ProbeOutcome> {
  const startedAt = performance.now();
  const timeoutMs = budgetMs(context.timeoutMs, URL_MAX_RESPONSE_TIME_CAP_MS);
  const deadline = startRunDeadline(
    context.signal,
    timeoutMs,
    () => new ProbeTimeoutError(`${settings.request.method} ${settings.request.url} exceeded ${timeoutMs} ms`),
  );
  const signal = deadline.signal;
  const hops: Hop[] = [];
  try {
    const final = await followRedirects(settings.request, { signal, destinations: context.destinations }, hops);
    return judge(settings, final, hops, performance.now() - startedAt);
  } catch (error) {
    const request = `${settings.request.method} ${hops.at(-1)?.url.href ?? settings.request.url}`;
    const failure = describeRunFailure(error, deadline.signals, (cause) =>
      describeExchangeFailure(request, cause),
    );
    return failed(failure, hops, performance.now() - startedAt);
  } finally {
    deadline.end();
  }
}

interface Connecting {
  signal: AbortSignal;
  destinations: DestinationPolicy | undefined;
}

async function followRedirects(request: UrlSettingsParsed['request'], connecting: Connecting, hops: Hop[]): Promise<Hop> {
  let url = new URL(request.url);
  const visited = new Set<string>([url.href]);
  for (;;) {
    const hop = await exchange(url, request, connecting, hops);
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

/** One GET or HEAD, its body read (up to MAX_BODY_BYTES) to time the download, none of it kept. */
function exchange(url: URL, request: UrlSettingsParsed['request'], connecting: Connecting, hops: Hop[]): Promise<Hop> {
  return sendHop(
    {
      method: request.method,
      url,
      // Connection: close; the socket is not worth keeping and the server should know.
      headers: { host: url.host, 'user-agent': USER_AGENT, accept: '*/*', connection: 'close' },
      body: null,
    },
    {
      ipFamily: request.ipFamily,
      skipSSL: request.skipSSL,
      signal: connecting.signal,
      destinations: connecting.destinations,
      readLimit: MAX_BODY_BYTES,
      keepLimit: 0,
    },
    hops,
  );
}

function judge(settings: UrlSettingsParsed, final: Hop, hops: Hop[], elapsed: number): ProbeOutcome {
  const timings = sumTimings(hops, elapsed);
  // The target's time, not the agent's: the network phases, without `wait`
  // (the agent setting up before and between them), which grows with the
  // agent's own load and says nothing about the site.
  const responseTime = roundMs(timings.total! - (timings.wait ?? 0));
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
  return erroredOutcome(error, roundMs(elapsed), hops.length > 0 ? sumTimings(hops, elapsed) : null, details(hops));
}

function details(hops: Hop[]): Record<string, unknown> {
  const last = hops.at(-1);
  // The certificate of the last HTTPS hop: the site's own when http:// redirects to https://.
  const certificate = hops.findLast((hop) => hop.phases.certificate !== null)?.phases.certificate;
  return {
    redirects: Math.max(hops.length - 1, 0),
    finalUrl: last?.url.href ?? null,
    remoteAddress: last?.phases.remoteAddress ?? null,
    // Only HTTP/1.1 is offered (ALPN and the client), so that is what is spoken.
    httpVersion: last?.statusCode != null ? '1.1' : null,
    bodyBytesRead: last?.bodyBytes ?? 0,
    bodyTruncated: last?.bodyTruncated ?? false,
    // Present only when a certificate was presented; the service counts sslDaysRemaining from it.
    ...(certificate ? { tls: certificate } : {}),
  };
}
