/**
 * The ICMP probe with the real iputils ping against 127.0.0.1 and ::1, plus
 * stand-in ping scripts (injected as the binary path) for what loopback never
 * does: lose packets, hang, or print errors. Nothing here leaves the machine.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import dns from 'node:dns/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { PING_INTERVAL_S, createIcmpProbe, icmpProbe, parseIcmpSettings } from '../../src/agent/probes/icmp.js';
import type { IcmpProbeOptions } from '../../src/agent/probes/icmp.js';
import { parsePingOutput } from '../../src/agent/probes/ping-output.js';
import type { ProbeOutcome } from '../../src/agent/probes/probe.js';
import { InvalidSettingsError } from '../../src/errors/index.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'outpost-icmp-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let scripts = 0;
/** An executable stand-in for ping; `body` is POSIX sh. It records its arguments in `<script>.args`. */
function fakePing(body: string): string {
  const file = path.join(scratch, `ping-${++scripts}`);
  writeFileSync(file, `#!/bin/sh\nprintf '%s\\n' "$@" > "$0.args"\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

function argsOf(script: string): string[] {
  return readFileSync(`${script}.args`, 'utf8').trimEnd().split('\n');
}

/** Prints `output` exactly (a quoted heredoc: no expansion) and exits with `status`. */
function printing(output: string, status: number, stderr = ''): string {
  const err = stderr === '' ? '' : `cat >&2 <<'OUTPOST_EOF'\n${stderr}\nOUTPOST_EOF\n`;
  return fakePing(`cat <<'OUTPOST_EOF'\n${output}\nOUTPOST_EOF\n${err}exit ${status}`);
}

interface RunOptions {
  request?: Record<string, unknown>;
  degradedPacketLossThreshold?: number;
  maxPacketLossThreshold?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  probe?: IcmpProbeOptions;
}

function runProbe(hostname: string, options: RunOptions = {}): Promise<ProbeOutcome> {
  const probe = options.probe === undefined ? icmpProbe : createIcmpProbe(options.probe);
  const { request, signal, timeoutMs, probe: _probe, ...thresholds } = options;
  const settings = probe.parseSettings({ request: { hostname, ...request }, ...thresholds });
  return probe.run(settings, { signal: signal ?? new AbortController().signal, timeoutMs: timeoutMs ?? 20_000 });
}

const latency = (property: string, comparison: string, target: string) => ({ source: 'LATENCY', property, comparison, target });
const json = (property: string, comparison: string, target: string) => ({ source: 'JSON_RESPONSE', property, comparison, target });

/** Why the real ping cannot be used here, or null when it can. */
function realPingProblem(args: string[]): string | null {
  const run = spawnSync('ping', ['-n', '-c', '1', '-W', '1', ...args], { encoding: 'utf8', timeout: 5000 });
  if (run.error) return `ping cannot be run here (${run.error.message}); install iputils-ping`;
  if (run.status !== 0) return `ping ${args.join(' ')} fails here: ${(run.stderr || run.stdout).trim()}`;
  return null;
}
const pingProblem = realPingProblem(['-4', '127.0.0.1']);
const ipv6LoopbackProblem =
  pingProblem ??
  (existsSync('/proc/net/if_inet6') && /^0{31}1 /m.test(readFileSync('/proc/net/if_inet6', 'utf8'))
    ? realPingProblem(['-6', '::1'])
    : 'the kernel has no IPv6 loopback address (::1)');
const skipNote = (problem: string | null): string => (problem === null ? '' : ` — skipped: ${problem}`);

describe('icmpProbe.parseSettings', () => {
  it('fills in every default and leaves the raw settings untouched', () => {
    const raw = { request: { hostname: 'gateway.example.com' } };
    expect(icmpProbe.checkType).toBe('ICMP');
    expect(parseIcmpSettings(raw)).toEqual({
      request: { hostname: 'gateway.example.com', ipFamily: 'IPv4', pingCount: 10, assertions: [] },
      degradedPacketLossThreshold: 10,
      maxPacketLossThreshold: 20,
    });
    expect(raw).toEqual({ request: { hostname: 'gateway.example.com' } });
  });

  it('names every bad field, including a LATENCY property it cannot measure', () => {
    const attempt = (): unknown =>
      icmpProbe.parseSettings({
        request: { hostname: 'a', pingCount: 51, assertions: [{ source: 'TEXT_BODY', comparison: 'EQUALS' }] },
        maxPacketLossThreshold: 101,
      });
    expect(attempt).toThrow(InvalidSettingsError);
    expect(attempt).toThrow(/request\.pingCount/);
    expect(attempt).toThrow(/request\.assertions\[0\]\.source: must be one of "LATENCY", "JSON_RESPONSE"/);
    expect(attempt).toThrow(/maxPacketLossThreshold/);
    expect(() =>
      icmpProbe.parseSettings({ request: { hostname: 'a', assertions: [latency('median', 'LESS_THAN', '5')] } }),
    ).toThrow('request.assertions[0].property: LATENCY takes avg, min, max, stdDev, not "median"');
    expect(() => icmpProbe.parseSettings({ request: {} })).toThrow(/request\.hostname: is required/);
    try {
      icmpProbe.parseSettings(null);
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidSettingsError).code).toBe('INVALID_SETTINGS');
    }
  });
});

describe('parsePingOutput', () => {
  it('reads replies, the summary and the rtt line', () => {
    const report = parsePingOutput(
      [
        'PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.',
        '64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.405 ms',
        '64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.411 ms (DUP!)',
        '64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 time=12.4 ms',
        '64 bytes from 127.0.0.1: icmp_seq=3 ttl=64 time=123 ms',
        '',
        '--- 127.0.0.1 ping statistics ---',
        '3 packets transmitted, 3 received, +1 duplicates, 0% packet loss, time 405ms',
        'rtt min/avg/max/mdev = 0.405/45.268/123.000/54.712 ms',
      ].join('\n'),
    );
    expect(report).toEqual({
      address: '127.0.0.1',
      replies: [0.405, 12.4, 123],
      transmitted: 3,
      received: 3,
      errors: 0,
      duplicates: 1,
      packetLoss: 0,
      rtt: { min: 0.405, avg: 45.268, max: 123, mdev: 54.712 },
      problems: [],
    });
  });

  it('reads losses, ICMP errors and IPv6 headers', () => {
    const report = parsePingOutput(
      [
        'PING ::1(::1) 56 data bytes',
        'From ::1 icmp_seq=1 Destination unreachable: Address unreachable',
        '64 bytes from ::1: icmp_seq=2 ttl=64 time=0.047 ms',
        '',
        '--- ::1 ping statistics ---',
        '3 packets transmitted, 1 received, +1 errors, 66.6667% packet loss, time 2003ms',
        'rtt min/avg/max/mdev = 0.047/0.047/0.047/0.000 ms',
      ].join('\n'),
    );
    expect(report).toMatchObject({
      address: '::1',
      replies: [0.047],
      transmitted: 3,
      received: 1,
      errors: 1,
      packetLoss: 66.6667,
      problems: ['Destination unreachable: Address unreachable'],
    });
  });

  it('leaves what ping never printed as null', () => {
    expect(parsePingOutput('PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data.\n')).toMatchObject({
      address: '10.0.0.1',
      replies: [],
      transmitted: null,
      received: null,
      packetLoss: null,
      rtt: null,
    });
    expect(parsePingOutput('')).toMatchObject({ address: null, transmitted: null });
  });
});

describe.skipIf(pingProblem !== null)(`icmpProbe with the real ping${skipNote(pingProblem)}`, () => {
  it('pings 127.0.0.1 three times', async () => {
    const outcome = await runProbe('127.0.0.1', { request: { pingCount: 3 } });
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false, isDegraded: false, error: null, statusCode: null });
    const details = outcome.details as {
      latency: { min: number; avg: number; max: number; stdDev: number };
      replies: number[];
    } & Record<string, unknown>;
    expect(details).toMatchObject({
      hostname: '127.0.0.1',
      address: '127.0.0.1',
      ipFamily: 'IPv4',
      transmitted: 3,
      received: 3,
      packetLoss: 0,
      errors: 0,
    });
    expect(details.replies).toHaveLength(3);
    const { min, avg, max, stdDev } = details.latency;
    expect(min).toBeGreaterThan(0);
    expect(min).toBeLessThanOrEqual(avg);
    expect(avg).toBeLessThanOrEqual(max);
    expect(max).toBeLessThan(1000);
    expect(stdDev).toBeGreaterThanOrEqual(0);
    expect(stdDev).toBeLessThanOrEqual(max - min);
    for (const reply of details.replies) {
      expect(reply).toBeGreaterThanOrEqual(min - 0.001);
      expect(reply).toBeLessThanOrEqual(max + 0.001);
    }
    expect(outcome.responseTime).toBe(avg);
    expect(outcome.timings).toMatchObject({ dns: 0, tcp: null, tls: null, firstByte: null, download: null });
    // Three requests 0.2 s apart, then a short linger for late replies.
    expect(outcome.timings!.total).toBeGreaterThanOrEqual(2 * PING_INTERVAL_S * 1000 - 20);
    expect(outcome.timings!.total).toBeLessThan(3000);
  });

  it('judges LATENCY and JSON_RESPONSE assertions', async () => {
    const outcome = await runProbe('127.0.0.1', {
      request: {
        pingCount: 2,
        assertions: [
          latency('avg', 'LESS_THAN', '1000'),
          latency('max', 'GREATER_THAN', '0'),
          json('$.packetLoss', 'EQUALS', '0'),
          json('latency.min', 'NOT_NULL', ''),
        ],
      },
    });
    expect(outcome.assertions.map((a) => a.passed)).toEqual([true, true, true, true]);
    expect(outcome.assertions[0]!.actual).toBe(outcome.responseTime);
    expect(outcome.assertions[2]!.actual).toBe(0);
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false });

    const failing = await runProbe('127.0.0.1', {
      request: {
        pingCount: 2,
        assertions: [
          latency('avg', 'LESS_THAN', '0'),
          latency('stdDev', 'GREATER_THAN', '1000'),
          json('$.packetLoss', 'GREATER_THAN', '0'),
          json('$.received', 'EQUALS', '99'),
          json('$.no.such.path', 'EQUALS', '1'),
        ],
      },
    });
    expect(failing.assertions.map((a) => a.passed)).toEqual([false, false, false, false, false]);
    expect(failing.assertions[3]!.actual).toBe(2);
    expect(failing.assertions[4]!.actual).toBeNull();
    expect(failing).toMatchObject({ hasFailures: true, hasErrors: false, error: null });
  });

  it('resolves localhost through the OS resolver', async () => {
    const outcome = await runProbe('localhost', { request: { pingCount: 1 } });
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false });
    expect(outcome.details).toMatchObject({ hostname: 'localhost', received: 1 });
    expect(['127.0.0.1', '::1']).toContain(outcome.details.address);
  });

  it('is cancelled promptly, taking ping down with it', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = performance.now();
    const outcome = await runProbe('127.0.0.1', { request: { pingCount: 50 }, signal: controller.signal });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(outcome).toMatchObject({ hasErrors: true, hasFailures: true });
    expect(outcome.error?.code).toBe('CANCELLED');
    expect(outcome.details).toMatchObject({ hostname: '127.0.0.1', address: '127.0.0.1' });
  });

  it('times out when ping cannot finish within the budget', async () => {
    const started = performance.now();
    const outcome = await runProbe('127.0.0.1', { request: { pingCount: 50 }, timeoutMs: 500 });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(outcome.error).toEqual({ code: 'TIMEOUT', message: 'ICMP check of 127.0.0.1 exceeded 500 ms' });
    expect(outcome.hasErrors).toBe(true);
  });
});

const localhostHasIpv6 = await dns
  .lookup('localhost', { family: 6 })
  .then(() => true)
  .catch(() => false);

describe.skipIf(ipv6LoopbackProblem !== null)(`icmpProbe over IPv6${skipNote(ipv6LoopbackProblem)}`, () => {
  it('pings ::1', async () => {
    const outcome = await runProbe('::1', { request: { pingCount: 3, ipFamily: 'IPv6' } });
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false });
    expect(outcome.details).toMatchObject({ address: '::1', ipFamily: 'IPv6', transmitted: 3, received: 3, packetLoss: 0 });
    const { min, avg, max } = outcome.details.latency as { min: number; avg: number; max: number };
    expect(min).toBeLessThanOrEqual(avg);
    expect(avg).toBeLessThanOrEqual(max);
  });

  it.skipIf(localhostHasIpv6)(
    `falls back to IPv4 when the host has no IPv6 address${localhostHasIpv6 ? ' — skipped: localhost resolves to IPv6 here' : ''}`,
    async () => {
      const outcome = await runProbe('localhost', { request: { pingCount: 1, ipFamily: 'IPv6' } });
      expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false });
      expect(outcome.details).toMatchObject({ address: '127.0.0.1', ipFamily: 'IPv4' });
    },
  );
});

/** What iputils prints for 10 requests of which `received` were answered. */
function lossyOutput(received: number, options: { errors?: boolean } = {}): string {
  const lines = ['PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.'];
  const times = [0.051, 0.063, 0.044, 0.057, 0.049, 0.06, 0.053, 0.058, 0.046, 0.05].slice(0, received);
  times.forEach((time, index) => lines.push(`64 bytes from 127.0.0.1: icmp_seq=${index + 1} ttl=64 time=${time} ms`));
  if (options.errors) {
    for (let seq = received + 1; seq <= 10; seq++) lines.push(`From 127.0.0.1 icmp_seq=${seq} Destination Host Unreachable`);
  }
  const loss = ((10 - received) / 10) * 100;
  const errors = options.errors ? `, +${10 - received} errors` : '';
  lines.push('', '--- 127.0.0.1 ping statistics ---', `10 packets transmitted, ${received} received${errors}, ${loss}% packet loss, time 1812ms`);
  if (received > 0) {
    const min = Math.min(...times);
    const max = Math.max(...times);
    const avg = times.reduce((a, b) => a + b, 0) / times.length;
    const mdev = Math.sqrt(times.reduce((s, t) => s + (t - avg) ** 2, 0) / times.length);
    lines.push(`rtt min/avg/max/mdev = ${min.toFixed(3)}/${avg.toFixed(3)}/${max.toFixed(3)}/${mdev.toFixed(3)} ms`);
  }
  return lines.join('\n');
}

describe('icmpProbe with a stand-in ping', () => {
  it('passes ping an argument array built from the settings', async () => {
    const script = printing(lossyOutput(10), 0);
    const outcome = await runProbe('127.0.0.1', { probe: { pingPath: script } });
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false });
    expect(argsOf(script)).toEqual(['-n', '-4', '-c', '10', '-i', '0.2', '-W', '2', '127.0.0.1']);

    const six = printing(lossyOutput(10), 0);
    await runProbe('[::1]', { probe: { pingPath: six }, request: { ipFamily: 'IPv6', pingCount: 1 }, timeoutMs: 2000 });
    // The reply wait shrinks to fit a tight budget, never below a second.
    expect(argsOf(six)).toEqual(['-n', '-6', '-c', '1', '-i', '0.2', '-W', '1', '::1']);
  });

  it('is degraded past degradedPacketLossThreshold and fails past maxPacketLossThreshold', async () => {
    const twoLost = printing(lossyOutput(8), 1);
    const degraded = await runProbe('127.0.0.1', { probe: { pingPath: twoLost } });
    // 20% is over the default 10% but not over the default 20%.
    expect(degraded).toMatchObject({ isDegraded: true, hasFailures: false, hasErrors: false, error: null });
    expect(degraded.details).toMatchObject({ transmitted: 10, received: 8, packetLoss: 20 });
    expect(degraded.details.replies).toHaveLength(8);

    const failed = await runProbe('127.0.0.1', { probe: { pingPath: twoLost }, maxPacketLossThreshold: 15 });
    expect(failed).toMatchObject({ isDegraded: true, hasFailures: true, hasErrors: false });
    expect(failed.error).toEqual({
      code: 'PACKET_LOSS',
      message: 'Packet loss 20% exceeded the maximum of 15% (10 packets transmitted, 8 received from 127.0.0.1)',
    });

    const clean = await runProbe('127.0.0.1', { probe: { pingPath: twoLost }, degradedPacketLossThreshold: 20 });
    expect(clean).toMatchObject({ isDegraded: false, hasFailures: false });
  });

  it('fails on heavy loss, and reads the numbers that did come back', async () => {
    const outcome = await runProbe('127.0.0.1', {
      probe: { pingPath: printing(lossyOutput(2), 1) },
      request: { assertions: [json('$.packetLoss', 'EQUALS', '80'), latency('min', 'EQUALS', '0.051')] },
    });
    expect(outcome).toMatchObject({ isDegraded: true, hasFailures: true, hasErrors: false });
    expect(outcome.error?.code).toBe('PACKET_LOSS');
    expect(outcome.details).toMatchObject({
      transmitted: 10,
      received: 2,
      packetLoss: 80,
      replies: [0.051, 0.063],
      latency: { min: 0.051, avg: 0.057, max: 0.063, stdDev: 0.006 },
    });
    expect(outcome.responseTime).toBe(0.057);
    expect(outcome.assertions.map((a) => a.passed)).toEqual([true, true]);
  });

  it('fails when nothing comes back, with what the network said', async () => {
    const outcome = await runProbe('127.0.0.1', {
      probe: { pingPath: printing(lossyOutput(0, { errors: true }), 1) },
      request: { assertions: [latency('avg', 'LESS_THAN', '100')] },
    });
    expect(outcome).toMatchObject({ hasFailures: true, hasErrors: false, isDegraded: true, responseTime: 0 });
    expect(outcome.error).toEqual({
      code: 'PACKET_LOSS',
      message:
        'No reply from 127.0.0.1: 10 packets transmitted, 0 received, 100% packet loss; Destination Host Unreachable',
    });
    expect(outcome.details).toMatchObject({
      received: 0,
      packetLoss: 100,
      errors: 10,
      latency: { min: null, avg: null, max: null, stdDev: null },
      replies: [],
    });
    expect(outcome.assertions[0]).toMatchObject({ actual: null, passed: false });
  });

  it('explains a missing NET_RAW capability from the message iputils prints', async () => {
    for (const stderr of [
      'ping: socket: Operation not permitted',
      '/usr/bin/ping: socktype: SOCK_RAW\n/usr/bin/ping: socket: Permission denied\n/usr/bin/ping: => missing cap_net_raw+p capability or setuid?',
    ]) {
      const outcome = await runProbe('127.0.0.1', { probe: { pingPath: printing('', 2, stderr) } });
      expect(outcome).toMatchObject({ hasErrors: true, hasFailures: true });
      expect(outcome.error?.code).toBe('ICMP_NOT_PERMITTED');
      expect(outcome.error?.message).toContain('NET_RAW');
      expect(outcome.error?.message).toContain('--cap-add=NET_RAW');
      expect(outcome.error?.message).toContain('securityContext.capabilities.add');
    }
  });

  it('reports a missing ping binary, naming the package', async () => {
    const byPath = await runProbe('127.0.0.1', { probe: { pingPath: path.join(scratch, 'no-such-ping') } });
    expect(byPath).toMatchObject({ hasErrors: true, hasFailures: true });
    expect(byPath.error?.code).toBe('PING_UNAVAILABLE');
    expect(byPath.error?.message).toContain(`at ${path.join(scratch, 'no-such-ping')}`);
    expect(byPath.error?.message).toContain('iputils-ping');

    const byName = await runProbe('127.0.0.1', { probe: { pingPath: 'outpost-no-such-ping' } });
    expect(byName.error?.code).toBe('PING_UNAVAILABLE');
    expect(byName.error?.message).toContain('on the PATH');

    const notExecutable = path.join(scratch, 'not-executable');
    writeFileSync(notExecutable, '#!/bin/sh\n');
    chmodSync(notExecutable, 0o644);
    const refused = await runProbe('127.0.0.1', { probe: { pingPath: notExecutable } });
    expect(refused.error?.code).toBe('PING_UNAVAILABLE');
    expect(refused.error?.message).toContain('EACCES');
  });

  it('reports other ping failures with what ping said', async () => {
    const unreachable = await runProbe('127.0.0.1', {
      probe: { pingPath: printing('', 2, 'ping: connect: Network is unreachable') },
    });
    expect(unreachable.error).toEqual({
      code: 'CONNECTION_FAILED',
      message: 'ping could not reach 127.0.0.1: ping: connect: Network is unreachable',
    });

    const odd = await runProbe('127.0.0.1', { probe: { pingPath: printing('', 2, 'ping: something new went wrong') } });
    expect(odd.error).toEqual({
      code: 'PING_FAILED',
      message: 'ping exited with status 2 without statistics; it said: ping: something new went wrong',
    });
    expect(odd.hasErrors).toBe(true);
  });

  it('kills ping on abort and on timeout, and waits for it to be gone', async () => {
    for (const trigger of ['abort', 'timeout'] as const) {
      const pidFile = path.join(scratch, `hang-${trigger}.pid`);
      // exec: the pid written is the process that must die, not a shell around it.
      const script = fakePing(`echo $$ > ${pidFile}\nexec sleep 30`);
      const controller = new AbortController();
      const running = runProbe('127.0.0.1', {
        probe: { pingPath: script },
        signal: controller.signal,
        timeoutMs: trigger === 'timeout' ? 400 : 20_000,
      });
      while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const pid = Number(readFileSync(pidFile, 'utf8'));
      if (trigger === 'abort') controller.abort();
      const outcome = await running;
      expect(outcome.error?.code).toBe(trigger === 'abort' ? 'CANCELLED' : 'TIMEOUT');
      // Gone and reaped: signalling it fails.
      expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
    }
  });
});

/**
 * A real ping without NET_RAW: a copy of the binary (cp drops its file
 * capability) run under setpriv with NET_RAW removed from the inheritable
 * and bounding sets. Needs root (to change the bounding set), setpriv, and
 * a ping_group_range that does not let root use unprivileged ICMP sockets.
 */
function noNetRawPing(): { script: string } | { problem: string } {
  if (process.getuid?.() !== 0) return { problem: 'not running as root, so setpriv cannot drop NET_RAW' };
  let pingBinary: string;
  try {
    pingBinary = execFileSync('sh', ['-c', 'command -v ping'], { encoding: 'utf8' }).trim();
    execFileSync('sh', ['-c', 'command -v setpriv']);
  } catch {
    return { problem: 'ping or setpriv (util-linux) is not installed' };
  }
  const range = readFileSync('/proc/sys/net/ipv4/ping_group_range', 'utf8').trim().split(/\s+/).map(Number);
  if (range.length === 2 && range[0]! <= 0 && 0 <= range[1]!) {
    return { problem: `net.ipv4.ping_group_range (${range.join(' ')}) lets root ping without NET_RAW` };
  }
  const copy = path.join(scratch, 'ping-without-file-caps');
  copyFileSync(pingBinary, copy);
  chmodSync(copy, 0o755);
  const script = fakePing(`exec setpriv --inh-caps=-net_raw --bounding-set=-net_raw ${copy} "$@"`);
  const trial = spawnSync(script, ['-n', '-c', '1', '127.0.0.1'], { encoding: 'utf8', timeout: 5000 });
  if (!/socket: (Operation not permitted|Permission denied)/.test(trial.stderr)) {
    return { problem: `dropping NET_RAW did not make ping fail as expected: ${(trial.stderr || trial.stdout).trim()}` };
  }
  return { script };
}

const withoutNetRaw = pingProblem === null ? noNetRawPing() : { problem: pingProblem };
describe('icmpProbe without NET_RAW, for real', () => {
  it.skipIf('problem' in withoutNetRaw)(
    `says the container needs NET_RAW${'problem' in withoutNetRaw ? ` — skipped: ${withoutNetRaw.problem}` : ''}`,
    async () => {
      const { script } = withoutNetRaw as { script: string };
      const outcome = await runProbe('127.0.0.1', { probe: { pingPath: script }, request: { pingCount: 1 } });
      expect(outcome).toMatchObject({ hasErrors: true, hasFailures: true, assertions: [] });
      expect(outcome.error?.code).toBe('ICMP_NOT_PERMITTED');
      expect(outcome.error?.message).toMatch(/^ping could not open an ICMP socket: .*socket: Operation not permitted\. /);
      expect(outcome.error?.message).toContain('docker run --cap-add=NET_RAW');
    },
  );
});
