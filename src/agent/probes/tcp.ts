/**
 * The TCP monitor: resolve, connect, optionally send data and read the
 * answer (see tcp-exchange.ts for when an answer is over), on a connection
 * opened for this run only.
 *
 * responseTime is measured from the start of the run (name resolution
 * included) to the end of the exchange:
 *   - nothing to read for: the moment the connection was established;
 *   - an answer came: its last byte (the quiet period after it is the probe's
 *     own waiting and is not counted);
 *   - no answer: the moment the peer closed, or the end of the wait, which is
 *     maxResponseTime, so a silent server fails the check.
 * timings.total is wall-clock for the whole run, quiet period and close included.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { ConnectError, ProbeTimeoutError } from '../../errors/index.js';
import type { ResultError, Timings } from '../../protocol/agent-api.js';
import { TCP_RESPONSE_TIME_CAP_MS, TcpSettingsSchema } from '../../protocol/tcp-settings.js';
import { evaluateAssertions } from './assertions.js';
import { withResponseTime } from './response-time-verdict.js';
import type { AssertionInput } from './assertions.js';
import { assertDestinationAllowed } from './destination-guard.js';
import { asIpLiteral, resolveHost } from './host-resolver.js';
import type { HostResolverOptions } from './host-resolver.js';
import { createTimedConnector, endpoint } from './http-connector.js';
import type { IpFamily } from './http-connector.js';
import { erroredOutcome, type Probe, type ProbeContext, type ProbeOutcome } from './probe.js';
import { budgetMs, describeRunFailure, roundMs, startRunDeadline } from './probe-failure.js';
import { exchange, newExchangeRecord, responseText } from './tcp-exchange.js';
import type { ExchangeRecord } from './tcp-exchange.js';
import { settingsParser } from './settings-parser.js';

/** Enough for any banner or health answer; past it the rest is not read. */
export const TCP_MAX_RESPONSE_BYTES = 64 * 1024;
/** Silence after the latest bytes that ends the answer when the peer keeps the connection open. */
export const TCP_RESPONSE_QUIET_MS = 200;
/** Budget when a job carries none: what the service gives a TCP job at the largest maxResponseTime. */
const DEFAULT_TIMEOUT_MS = TCP_RESPONSE_TIME_CAP_MS + 5000;

/** TcpSettings after defaults: every optional field is present. */
export interface TcpSettingsParsed {
  request: {
    hostname: string;
    port: number;
    data: string;
    ipFamily: IpFamily;
    assertions: AssertionInput[];
  };
  degradedResponseTime: number;
  maxResponseTime: number;
}

/** How the probe resolves host names; an agent-wide choice, not a per-check setting. */
export type TcpProbeOptions = HostResolverOptions;

export function createTcpProbe(options: TcpProbeOptions): Probe<TcpSettingsParsed> {
  const resolver: HostResolverOptions = { ...options };
  return {
    checkType: 'TCP',
    parseSettings: parseTcpSettings,
    run: (settings, context) => runTcpProbe(settings, context, resolver),
  };
}

/** c-ares: what the agent uses unless USE_OS_DNS_RESOLVER asks for getaddrinfo. */
export const tcpProbe = createTcpProbe({ useOsResolver: false });

const parseSchema = settingsParser(TcpSettingsSchema, 'TCP monitor');

export function parseTcpSettings(raw: unknown): TcpSettingsParsed {
  const value = parseSchema(raw);
  // Value.Default filled every optional field that has a default, which is all of them.
  return value as TcpSettingsParsed;
}

/** What one run got through; filled in as it goes, so a failure keeps what was measured. */
interface Attempt {
  stage: 'resolving' | 'connecting' | 'exchanging';
  dns: number | null;
  tcp: number | null;
  connectedAt: number | null;
  remoteAddress: string | null;
  remotePort: number;
  record: ExchangeRecord;
}

async function runTcpProbe(
  settings: TcpSettingsParsed,
  context: ProbeContext,
  resolver: HostResolverOptions,
): Promise<ProbeOutcome> {
  const startedAt = performance.now();
  const { request } = settings;
  const hostname = request.hostname;
  const literal = asIpLiteral(hostname);
  const target = endpoint(literal ?? hostname, request.port);
  const attempt: Attempt = {
    stage: 'resolving',
    dns: null,
    tcp: null,
    connectedAt: null,
    remoteAddress: null,
    remotePort: request.port,
    record: newExchangeRecord(),
  };
  const timeoutMs = budgetMs(context.timeoutMs, DEFAULT_TIMEOUT_MS);
  const deadline = startRunDeadline(
    context.signal,
    timeoutMs,
    () => new ProbeTimeoutError(`TCP check of ${target} exceeded ${timeoutMs} ms while ${attempt.stage}`),
  );
  const signal = deadline.signal;
  let socket: net.Socket | undefined;
  try {
    let started = performance.now();
    const resolved = await resolveHost(hostname, request.ipFamily, resolver, signal).finally(() => {
      // Kept on failure too: a resolver that takes 5 s to say "no" is worth seeing.
      attempt.dns = literal !== null ? 0 : performance.now() - started;
    });
    attempt.remoteAddress = resolved.address;
    assertDestinationAllowed(context.destinations, resolved.address, target);

    attempt.stage = 'connecting';
    started = performance.now();
    socket = await connect(resolved.address, request.port, signal);
    attempt.connectedAt = performance.now();
    attempt.tcp = attempt.connectedAt - started;

    attempt.stage = 'exchanging';
    const wantsAnswer = request.data !== '' || request.assertions.some((a) => a.source === 'RESPONSE_DATA');
    await exchange(
      socket,
      {
        data: request.data,
        read: wantsAnswer,
        maxBytes: TCP_MAX_RESPONSE_BYTES,
        quietMs: TCP_RESPONSE_QUIET_MS,
        answerBy: startedAt + settings.maxResponseTime,
      },
      attempt.record,
      signal,
    );
    return judge(settings, target, attempt, startedAt, performance.now());
  } catch (error) {
    const failure = describeRunFailure(error, deadline.signals, (cause) =>
      new ConnectError(`TCP check of ${target} failed: ${cause instanceof Error ? cause.message : String(cause)}`).toJSON(),
    );
    return failed(failure, hostname, attempt, performance.now() - startedAt);
  } finally {
    deadline.end();
    socket?.destroy();
  }
}

/** The URL probe's connector, handed an IP literal so it skips its own lookup and only times the handshake. */
function connect(address: string, port: number, signal: AbortSignal): Promise<net.Socket> {
  const connector = createTimedConnector({ ipFamily: net.isIPv6(address) ? 'IPv6' : 'IPv4', skipSSL: false, signal });
  return connector.open({ hostname: address, protocol: 'tcp:', port: String(port) }).then((socket) => {
    // Errors after the exchange (a late reset) must not go unhandled before the socket is destroyed.
    socket.on('error', () => undefined);
    return socket;
  });
}

function judge(
  settings: TcpSettingsParsed,
  target: string,
  attempt: Attempt,
  startedAt: number,
  now: number,
): ProbeOutcome {
  const { record } = attempt;
  const response = responseText(record);
  const exchangeEnd =
    record.endedBy === 'not-read' ? attempt.connectedAt : (record.lastByteAt ?? record.endedAt ?? attempt.connectedAt);
  const responseTime = roundMs((exchangeEnd ?? now) - startedAt);
  const assertions = evaluateAssertions(settings.request.assertions, (source) => {
    if (source === 'RESPONSE_DATA') return response;
    if (source === 'RESPONSE_TIME') return responseTime;
    return undefined;
  });
  let error: ResultError | null = null;
  let hasFailures = assertions.some((result) => !result.passed);
  if (record.endedBy === 'answer-window' && record.bytesRead === 0) {
    hasFailures = true;
    error = {
      code: 'MAX_RESPONSE_TIME',
      message: `${target} sent nothing within the maximum response time of ${settings.maxResponseTime} ms`,
    };
  }
  return {
    responseTime,
    ...withResponseTime(responseTime, settings, { hasFailures, isDegraded: false, error }),
    hasErrors: false,
    timings: timings(attempt, now - startedAt),
    statusCode: null,
    assertions,
    details: details(settings.request.hostname, attempt),
  };
}

function failed(error: ResultError, hostname: string, attempt: Attempt, elapsed: number): ProbeOutcome {
  const measured = attempt.dns === null ? null : timings(attempt, elapsed);
  return erroredOutcome(error, roundMs(elapsed), measured, details(hostname, attempt));
}

/** firstByte: from the write (or from the connect, when nothing was sent) to the first byte back. */
function timings(attempt: Attempt, elapsed: number): Timings {
  const { record } = attempt;
  const span = (from: number | null, to: number | null): number | null =>
    from === null || to === null ? null : roundMs(to - from);
  return {
    dns: attempt.dns === null ? null : roundMs(attempt.dns),
    tcp: attempt.tcp === null ? null : roundMs(attempt.tcp),
    tls: null,
    firstByte: span(record.sentAt, record.firstByteAt),
    download: span(record.firstByteAt, record.lastByteAt),
    total: roundMs(elapsed),
  };
}

function details(hostname: string, attempt: Attempt): Record<string, unknown> {
  const { record } = attempt;
  return {
    hostname,
    remoteAddress: attempt.remoteAddress,
    remotePort: attempt.remotePort,
    bytesRead: record.bytesRead,
    truncated: record.truncated,
    response: responseText(record),
    readEndedBy: record.endedBy,
  };
}
