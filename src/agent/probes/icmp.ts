/**
 * The ICMP monitor: echo requests sent by the system's ping (iputils), whose
 * output is read back into packet loss and latency. ping rather than our own
 * raw socket: it is the tool everyone trusts for these numbers, and it keeps
 * the privileged part (NET_RAW) out of the agent's own process.
 *
 * ping gets `-c pingCount -i 0.2 -W wait` and no `-w deadline`: with -w,
 * iputils keeps transmitting past the count until `count` replies arrive,
 * so a lossy host would get more than pingCount packets and the loss figure
 * would not be over the packets the check asked for. The run's deadline is
 * enforced here instead, by killing ping when the job's budget is spent.
 */
import { performance } from 'node:perf_hooks';
import { ConnectError, IcmpNotPermittedError, InvalidSettingsError, PingError, ProbeTimeoutError } from '../../errors/index.js';
import type { ResultError, Timings } from '../../protocol/agent-api.js';
import { IcmpSettingsSchema } from '../../protocol/icmp-settings.js';
import { evaluateAssertions } from './assertions.js';
import type { AssertionInput } from './assertions.js';
import { assertDestinationAllowed } from './destination-guard.js';
import { asIpLiteral, resolveHost } from './host-resolver.js';
import type { ResolvedAddress } from './host-resolver.js';
import type { IpFamily } from './http-connector.js';
import { queryJsonPath } from './json-path.js';
import { parsePingOutput } from './ping-output.js';
import type { PingReport } from './ping-output.js';
import { NET_RAW_ADVICE, runPing } from './ping-process.js';
import type { PingRun } from './ping-process.js';
import { erroredOutcome, type Probe, type ProbeContext, type ProbeOutcome } from './probe.js';
import { budgetMs, describeRunFailure, roundMs, startRunDeadline } from './probe-failure.js';
import { settingsParser } from './settings-parser.js';

/** Seconds between echo requests; iputils lets unprivileged users go down to 0.2 s, so it works everywhere. */
export const PING_INTERVAL_S = 0.2;
/** Seconds ping waits for a reply when none has come back at all (with replies it waits two round trips). */
export const PING_REPLY_WAIT_S = 2;
export const LATENCY_PROPERTIES = ['avg', 'min', 'max', 'stdDev'] as const;
type LatencyProperty = (typeof LATENCY_PROPERTIES)[number];
/** Kept out of details past this many: they repeat ("Destination Host Unreachable"). */
const MAX_PROBLEMS = 10;

/** IcmpSettings after defaults: every optional field is present. */
export interface IcmpSettingsParsed {
  request: {
    hostname: string;
    ipFamily: IpFamily;
    pingCount: number;
    assertions: AssertionInput[];
  };
  degradedPacketLossThreshold: number;
  maxPacketLossThreshold: number;
}

export interface IcmpProbeOptions {
  /** The ping binary: a name looked up on PATH, or a path. Default "ping". */
  pingPath?: string;
}

export function createIcmpProbe(options: IcmpProbeOptions = {}): Probe<IcmpSettingsParsed> {
  const pingPath = options.pingPath ?? 'ping';
  return {
    checkType: 'ICMP',
    parseSettings: parseIcmpSettings,
    run: (settings, context) => runIcmpProbe(settings, context, pingPath),
  };
}

export const icmpProbe = createIcmpProbe();

const parseSchema = settingsParser(IcmpSettingsSchema, 'ICMP monitor');

export function parseIcmpSettings(raw: unknown): IcmpSettingsParsed {
  const value = parseSchema(raw);
  const settings = value as IcmpSettingsParsed;
  const problems = settings.request.assertions.flatMap((assertion, index) =>
    assertion.source === 'LATENCY' && !isLatencyProperty(assertion.property ?? '')
      ? [`request.assertions[${index}].property: LATENCY takes ${LATENCY_PROPERTIES.join(', ')}, not ${JSON.stringify(assertion.property ?? '')}`]
      : [],
  );
  if (problems.length > 0) throw new InvalidSettingsError(`Invalid ICMP monitor settings: ${problems.join('; ')}`);
  return settings;
}

function isLatencyProperty(property: string): property is LatencyProperty {
  return (LATENCY_PROPERTIES as readonly string[]).includes(property);
}

/** The arguments for one run; the address is always an IP literal, never a name or anything option-like. */
export function pingArguments(target: ResolvedAddress, pingCount: number, replyWaitS: number): string[] {
  return [
    '-n',
    target.family === 6 ? '-6' : '-4',
    '-c',
    String(pingCount),
    '-i',
    String(PING_INTERVAL_S),
    '-W',
    String(replyWaitS),
    target.address,
  ];
}

/** What the service budgets for an ICMP job (1.2 s per ping plus 5 s), for jobs that carry no budget. */
function defaultBudgetMs(pingCount: number): number {
  return (Math.ceil(pingCount * 1.2) + 5) * 1000;
}

/**
 * Whole seconds (older iputils take no fractions), 1 to PING_REPLY_WAIT_S,
 * shrunk so the natural end of the run stays inside what is left of the budget.
 */
function replyWaitSeconds(remainingMs: number, pingCount: number): number {
  const sending = (pingCount - 1) * PING_INTERVAL_S;
  const left = Math.floor(remainingMs / 1000 - sending - 0.5);
  return Math.min(PING_REPLY_WAIT_S, Math.max(1, left));
}

interface Attempt {
  dns: number | null;
  target: ResolvedAddress | null;
}

async function runIcmpProbe(settings: IcmpSettingsParsed, context: ProbeContext, pingPath: string): Promise<ProbeOutcome> {
  const startedAt = performance.now();
  const { request } = settings;
  const attempt: Attempt = { dns: null, target: null };
  const timeoutMs = budgetMs(context.timeoutMs, defaultBudgetMs(request.pingCount));
  const deadline = startRunDeadline(
    context.signal,
    timeoutMs,
    () => new ProbeTimeoutError(`ICMP check of ${request.hostname} exceeded ${timeoutMs} ms`),
  );
  const signal = deadline.signal;
  try {
    const started = performance.now();
    // getaddrinfo, as ping itself would; resolving here keeps DNS failures apart from ICMP ones.
    const target = await resolveHost(request.hostname, request.ipFamily, { useOsResolver: true }, signal).finally(() => {
      attempt.dns = performance.now() - started;
    });
    if (asIpLiteral(request.hostname) !== null) attempt.dns = 0;
    attempt.target = target;
    assertDestinationAllowed(context.destinations, target.address, request.hostname);
    const wait = replyWaitSeconds(timeoutMs - (performance.now() - startedAt), request.pingCount);
    const run = await runPing(pingPath, pingArguments(target, request.pingCount, wait), signal);
    const report = statistics(run, target);
    return judge(settings, attempt, report, performance.now() - startedAt);
  } catch (error) {
    const failure = describeRunFailure(error, deadline.signals, (cause) =>
      new PingError(`ICMP check of ${request.hostname} failed: ${cause instanceof Error ? cause.message : String(cause)}`).toJSON(),
    );
    return failed(failure, request.hostname, attempt, performance.now() - startedAt);
  } finally {
    deadline.end();
  }
}

/** The report, when ping got as far as statistics; otherwise the reason it did not, as an error. */
function statistics(run: PingRun, target: ResolvedAddress): PingReport & { transmitted: number } {
  const report = parsePingOutput(run.stdout);
  if (report.transmitted !== null && run.exitSignal === null) return { ...report, transmitted: report.transmitted };
  const said = firstLines(run.stderr) || firstLines(run.stdout) || '(nothing)';
  if (/socket: (?:Operation not permitted|Permission denied)|cap_net_raw/i.test(run.stderr)) {
    throw new IcmpNotPermittedError(`ping could not open an ICMP socket: ${said}. ${NET_RAW_ADVICE}`);
  }
  if (/Network is unreachable|No route to host/i.test(run.stderr)) {
    throw new ConnectError(`ping could not reach ${target.address}: ${said}`);
  }
  const how = run.exitSignal !== null ? `was killed by ${run.exitSignal}` : `exited with status ${run.exitCode}`;
  throw new PingError(`ping ${how} without statistics; it said: ${said}`);
}

/** ping's complaints are one line each and prefixed with its own path; a few are plenty. */
function firstLines(text: string): string {
  return text.trim().split('\n').slice(0, 3).join(' / ').trim();
}

interface Latency {
  min: number | null;
  avg: number | null;
  max: number | null;
  stdDev: number | null;
}

/**
 * ping's own rtt line when it printed one (computed from unrounded times);
 * otherwise the same figures from the reply lines, stdDev as the population
 * standard deviation, which is what iputils' mdev is.
 */
function latencyOf(report: PingReport): Latency {
  if (report.rtt !== null) {
    const { min, avg, max, mdev } = report.rtt;
    return { min, avg, max, stdDev: mdev };
  }
  const times = report.replies;
  if (times.length === 0) return { min: null, avg: null, max: null, stdDev: null };
  const avg = times.reduce((a, b) => a + b, 0) / times.length;
  const variance = times.reduce((sum, t) => sum + (t - avg) ** 2, 0) / times.length;
  return { min: Math.min(...times), avg: roundMs(avg), max: Math.max(...times), stdDev: roundMs(Math.sqrt(variance)) };
}

function judge(
  settings: IcmpSettingsParsed,
  attempt: Attempt,
  report: PingReport & { transmitted: number },
  elapsed: number,
): ProbeOutcome {
  const { transmitted } = report;
  const received = report.received ?? 0;
  const packetLoss = transmitted > 0 ? roundMs(((transmitted - received) / transmitted) * 100) : 100;
  const latency = latencyOf(report);
  const details: Record<string, unknown> = {
    ...baseDetails(settings.request.hostname, attempt),
    transmitted,
    received,
    packetLoss,
    errors: report.errors,
    duplicates: report.duplicates,
    latency,
    replies: report.replies,
    problems: report.problems.slice(0, MAX_PROBLEMS),
  };
  const assertions = evaluateAssertions(settings.request.assertions, (source, property) => {
    if (source === 'LATENCY') return isLatencyProperty(property) ? latency[property] : undefined;
    if (source === 'JSON_RESPONSE') return safeQuery(details, property);
    return undefined;
  });
  let hasFailures = assertions.some((result) => !result.passed);
  let error: ResultError | null = null;
  const address = attempt.target?.address ?? settings.request.hostname;
  const counts = `${transmitted} packets transmitted, ${received} received`;
  const why = report.problems.length > 0 ? `; ${report.problems[0]}` : '';
  if (received === 0) {
    hasFailures = true;
    error = { code: 'PACKET_LOSS', message: `No reply from ${address}: ${counts}, 100% packet loss${why}` };
  } else if (packetLoss > settings.maxPacketLossThreshold) {
    hasFailures = true;
    error = {
      code: 'PACKET_LOSS',
      message: `Packet loss ${packetLoss}% exceeded the maximum of ${settings.maxPacketLossThreshold}% (${counts} from ${address})${why}`,
    };
  }
  return {
    // The average round trip; 0 when nothing came back, as there is no time to report.
    responseTime: latency.avg ?? 0,
    hasFailures,
    hasErrors: false,
    isDegraded: packetLoss > settings.degradedPacketLossThreshold,
    error,
    timings: timings(attempt, elapsed),
    statusCode: null,
    assertions,
    details,
  };
}

/** A path the JSON path library cannot parse designates nothing; the evaluator must not throw. */
function safeQuery(document: unknown, path: string): unknown {
  try {
    return queryJsonPath(document, path);
  } catch {
    return undefined;
  }
}

function failed(error: ResultError, hostname: string, attempt: Attempt, elapsed: number): ProbeOutcome {
  const measured = attempt.dns === null ? null : timings(attempt, elapsed);
  return erroredOutcome(error, roundMs(elapsed), measured, baseDetails(hostname, attempt));
}

function timings(attempt: Attempt, elapsed: number): Timings {
  return {
    dns: attempt.dns === null ? null : roundMs(attempt.dns),
    tcp: null,
    tls: null,
    firstByte: null,
    download: null,
    total: roundMs(elapsed),
  };
}

function baseDetails(hostname: string, attempt: Attempt): Record<string, unknown> {
  const family = attempt.target?.family;
  return {
    hostname,
    address: attempt.target?.address ?? null,
    ipFamily: family === undefined ? null : family === 6 ? 'IPv6' : 'IPv4',
  };
}
