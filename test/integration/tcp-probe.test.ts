/**
 * The TCP probe against real servers on loopback: an echo server, a silent
 * one, banner servers, and a tiny DNS server for the c-ares path. Nothing
 * here leaves the machine: every address is 127.0.0.1, ::1 or localhost
 * (through the OS resolver and /etc/hosts only).
 */
import dgram from 'node:dgram';
import dns from 'node:dns/promises';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { within } from '../support/deadline.js';
import type { ProbeOutcome } from '../../src/agent/probes/probe.js';
import {
  TCP_MAX_RESPONSE_BYTES,
  TCP_RESPONSE_QUIET_MS,
  createTcpProbe,
  parseTcpSettings,
  tcpProbe,
} from '../../src/agent/probes/tcp.js';
import type { TcpProbeOptions } from '../../src/agent/probes/tcp.js';
import { InvalidSettingsError } from '../../src/errors/index.js';

interface TcpServer {
  host: string;
  port: number;
  /** One entry per accepted connection, settling when the server side sees it closed. */
  connections: Promise<void>[];
  /** Everything each connection sent, as text. */
  received: string[];
  close(): Promise<void>;
}

const servers: TcpServer[] = [];

async function startTcpServer(onConnection: (socket: Socket) => void, host = '127.0.0.1'): Promise<TcpServer> {
  const connections: Promise<void>[] = [];
  const received: string[] = [];
  const sockets = new Set<Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    const index = received.push('') - 1;
    socket.on('data', (chunk: Buffer) => {
      received[index] += chunk.toString('utf8');
    });
    // The probe hangs up on purpose; the server must not care.
    socket.on('error', () => undefined);
    connections.push(
      new Promise((resolve) =>
        socket.once('close', () => {
          sockets.delete(socket);
          resolve();
        }),
      ),
    );
    onConnection(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const testServer: TcpServer = {
    host,
    port: (server.address() as AddressInfo).port,
    connections,
    received,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(testServer);
  return testServer;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const echoServer = (host?: string): Promise<TcpServer> =>
  startTcpServer((socket) => socket.on('data', (chunk: Buffer) => socket.write(chunk)), host);
/** Accepts and never says a word. */
const silentServer = (): Promise<TcpServer> => startTcpServer(() => undefined);
/** Greets first, like SSH or SMTP, and keeps the connection open. */
const bannerServer = (banner: string | Buffer, options: { thenClose?: boolean; delayMs?: number } = {}) =>
  startTcpServer((socket) => {
    const send = (): void => {
      if (options.thenClose) socket.end(banner);
      else socket.write(banner);
    };
    if (options.delayMs === undefined) send();
    else {
      const timer = setTimeout(send, options.delayMs);
      socket.once('close', () => clearTimeout(timer));
    }
  });

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface RunOptions {
  request?: Record<string, unknown>;
  degradedResponseTime?: number;
  maxResponseTime?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  probe?: TcpProbeOptions;
}

function runProbe(hostname: string, port: number, options: RunOptions = {}): Promise<ProbeOutcome> {
  const probe = options.probe === undefined ? tcpProbe : createTcpProbe(options.probe);
  const settings = probe.parseSettings({
    request: { hostname, port, ...options.request },
    ...(options.degradedResponseTime === undefined ? {} : { degradedResponseTime: options.degradedResponseTime }),
    ...(options.maxResponseTime === undefined ? {} : { maxResponseTime: options.maxResponseTime }),
  });
  return probe.run(settings, {
    signal: options.signal ?? new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 10_000,
  });
}

const responseData = (comparison: string, target = '') => ({ source: 'RESPONSE_DATA', comparison, target });
const responseTime = (comparison: string, target: string) => ({ source: 'RESPONSE_TIME', comparison, target });

function messageOf(attempt: () => unknown): string {
  try {
    attempt();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the call to throw');
}

describe('tcpProbe.parseSettings', () => {
  it('fills in every default and leaves the raw settings untouched', () => {
    const raw = { request: { hostname: 'db.example.com', port: 5432 } };
    expect(tcpProbe.checkType).toBe('TCP');
    expect(parseTcpSettings(raw)).toEqual({
      request: { hostname: 'db.example.com', port: 5432, data: '', ipFamily: 'IPv4', assertions: [] },
      degradedResponseTime: 4000,
      maxResponseTime: 5000,
    });
    expect(raw).toEqual({ request: { hostname: 'db.example.com', port: 5432 } });
  });

  it('names every bad field', () => {
    const attempt = (): unknown =>
      tcpProbe.parseSettings({
        request: {
          hostname: '',
          port: 70_000,
          ipFamily: 'IPv5',
          assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
        },
        maxResponseTime: 6000,
      });
    expect(attempt).toThrow(InvalidSettingsError);
    const message = messageOf(attempt);
    expect(message).toContain('request.hostname');
    expect(message).toContain('request.port');
    expect(message).toContain('request.ipFamily: must be one of "IPv4", "IPv6"');
    expect(message).toContain('request.assertions[0].source: must be one of "RESPONSE_DATA", "RESPONSE_TIME"');
    expect(message).toContain('maxResponseTime');
  });

  it('reports a missing request and carries the stable INVALID_SETTINGS code', () => {
    expect(() => tcpProbe.parseSettings({})).toThrow(/request/);
    expect(() => tcpProbe.parseSettings({ request: { hostname: 'a' } })).toThrow(/request\.port: is required/);
    try {
      tcpProbe.parseSettings(null);
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidSettingsError).code).toBe('INVALID_SETTINGS');
    }
  });
});

const localhostHasIpv6 = await dns
  .lookup('localhost', { family: 6 })
  .then(() => true)
  .catch(() => false);
const ipv6Unavailable = await new Promise<string | null>((resolve) => {
  const probeServer = net.createServer();
  probeServer.once('error', (error: Error) => resolve(`::1 cannot be bound here (${error.message})`));
  probeServer.listen(0, '::1', () => probeServer.close(() => resolve(null)));
});

describe('tcpProbe: connecting', () => {
  it('passes on a bare connect without reading anything, and hangs up', async () => {
    const server = await silentServer();
    const started = performance.now();
    const outcome = await runProbe('127.0.0.1', server.port);
    // Nothing to read for: no quiet period, no waiting for an answer.
    expect(performance.now() - started).toBeLessThan(TCP_RESPONSE_QUIET_MS);
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false, isDegraded: false, error: null, statusCode: null });
    expect(outcome.details).toMatchObject({
      hostname: '127.0.0.1',
      remoteAddress: '127.0.0.1',
      remotePort: server.port,
      bytesRead: 0,
      truncated: false,
      response: '',
      readEndedBy: 'not-read',
    });
    expect(outcome.timings).toMatchObject({ dns: 0, tls: null, firstByte: null, download: null });
    expect(outcome.timings!.tcp).toBeGreaterThan(0);
    expect(outcome.responseTime).toBeGreaterThan(0);
    expect(outcome.responseTime).toBeLessThanOrEqual(outcome.timings!.total!);
    await within(server.connections[0]!, 1000, 'the server seeing the connection closed');
  });

  it('reports a refused connection as CONNECTION_FAILED', async () => {
    const port = await closedPort();
    const outcome = await runProbe('127.0.0.1', port);
    expect(outcome).toMatchObject({ hasErrors: true, hasFailures: true, isDegraded: false, assertions: [] });
    expect(outcome.error?.code).toBe('CONNECTION_FAILED');
    expect(outcome.error?.message).toBe(`Connection refused by 127.0.0.1:${port}`);
    expect(outcome.timings).toMatchObject({ dns: 0, tcp: null, firstByte: null });
    expect(outcome.details).toMatchObject({ remoteAddress: '127.0.0.1', remotePort: port, bytesRead: 0 });
  });

  it('resolves localhost through the OS resolver', async () => {
    const server = await echoServer();
    const outcome = await runProbe('localhost', server.port, {
      probe: { useOsResolver: true },
      request: { data: 'hi\n', assertions: [responseData('EQUALS', 'hi\n')] },
    });
    expect(outcome).toMatchObject({ hasErrors: false, hasFailures: false });
    expect(outcome.details).toMatchObject({ hostname: 'localhost', remoteAddress: '127.0.0.1', response: 'hi\n' });
    expect(outcome.timings!.dns).toBeGreaterThan(0);
  });

  it.skipIf(localhostHasIpv6)(
    `falls back to IPv4 when the host has no IPv6 address${localhostHasIpv6 ? ' — skipped: localhost resolves to IPv6 here' : ''}`,
    async () => {
      const server = await echoServer();
      const outcome = await runProbe('localhost', server.port, {
        probe: { useOsResolver: true },
        request: { ipFamily: 'IPv6' },
      });
      expect(outcome).toMatchObject({ hasErrors: false, hasFailures: false });
      expect(outcome.details.remoteAddress).toBe('127.0.0.1');
    },
  );

  it.skipIf(ipv6Unavailable !== null)(
    `talks to [::1] over IPv6, bracketed or not${ipv6Unavailable ? ` — skipped: ${ipv6Unavailable}` : ''}`,
    async () => {
      const server = await echoServer('::1');
      for (const hostname of ['::1', '[::1]']) {
        const outcome = await runProbe(hostname, server.port, {
          request: { ipFamily: 'IPv6', data: 'v6', assertions: [responseData('EQUALS', 'v6')] },
        });
        expect(outcome).toMatchObject({ hasErrors: false, hasFailures: false });
        expect(outcome.details).toMatchObject({ remoteAddress: '::1', response: 'v6' });
      }
    },
  );
});

describe('tcpProbe: the exchange', () => {
  it('sends the data and reads the echo until the line goes quiet', async () => {
    const server = await echoServer();
    const started = performance.now();
    const outcome = await runProbe('127.0.0.1', server.port, {
      request: {
        data: 'PING outpost\r\n',
        assertions: [
          responseData('EQUALS', 'PING outpost\r\n'),
          responseData('CONTAINS', 'outpost'),
          responseData('NOT_EMPTY'),
          responseData('EQUALS', 'PONG'),
          responseData('CONTAINS', 'pong'),
          responseData('IS_EMPTY'),
        ],
      },
    });
    const elapsed = performance.now() - started;
    expect(server.received[0]).toBe('PING outpost\r\n');
    expect(outcome.assertions.map((a) => [a.comparison, a.target, a.passed])).toEqual([
      ['EQUALS', 'PING outpost\r\n', true],
      ['CONTAINS', 'outpost', true],
      ['NOT_EMPTY', '', true],
      ['EQUALS', 'PONG', false],
      ['CONTAINS', 'pong', false],
      ['IS_EMPTY', '', false],
    ]);
    expect(outcome.assertions[3]!.actual).toBe('PING outpost\r\n');
    expect(outcome).toMatchObject({ hasFailures: true, hasErrors: false, error: null });
    expect(outcome.details).toMatchObject({ bytesRead: 14, truncated: false, response: 'PING outpost\r\n', readEndedBy: 'quiet' });
    const timings = outcome.timings!;
    expect(timings.firstByte).toBeGreaterThan(0);
    expect(timings.download).toBeGreaterThanOrEqual(0);
    // The quiet period is the probe's own waiting: in total, not in responseTime.
    expect(elapsed).toBeGreaterThanOrEqual(TCP_RESPONSE_QUIET_MS);
    expect(timings.total! - outcome.responseTime).toBeGreaterThanOrEqual(TCP_RESPONSE_QUIET_MS - 5);
    expect(outcome.responseTime).toBeLessThan(100);
  });

  it('passes when every RESPONSE_DATA assertion holds', async () => {
    const server = await echoServer();
    const outcome = await runProbe('127.0.0.1', server.port, {
      request: { data: 'hello', assertions: [responseData('EQUALS', 'hello'), responseData('NOT_CONTAINS', 'bye')] },
    });
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false, error: null });
    expect(outcome.assertions.every((a) => a.passed)).toBe(true);
  });

  it('judges RESPONSE_TIME against the response time', async () => {
    const server = await echoServer();
    const outcome = await runProbe('127.0.0.1', server.port, {
      request: {
        data: 'x',
        assertions: [
          responseTime('LESS_THAN', '1000'),
          responseTime('GREATER_THAN', '0'),
          responseTime('GREATER_THAN', '1000'),
          responseTime('LESS_THAN', '0'),
        ],
      },
    });
    expect(outcome.assertions.map((a) => a.passed)).toEqual([true, true, false, false]);
    expect(outcome.assertions[0]!.actual).toBe(outcome.responseTime);
    expect(outcome).toMatchObject({ hasFailures: true, hasErrors: false, error: null });

    const passing = await runProbe('127.0.0.1', server.port, { request: { assertions: [responseTime('LESS_THAN', '1000')] } });
    expect(passing).toMatchObject({ hasFailures: false, hasErrors: false });
    // RESPONSE_TIME alone gives nothing to read for: the connect is the check.
    expect(passing.details.readEndedBy).toBe('not-read');
  });

  it('reads a banner nobody asked for when an assertion is on the answer', async () => {
    const server = await bannerServer('SSH-2.0-Outpost_test\r\n');
    const outcome = await runProbe('127.0.0.1', server.port, {
      request: { assertions: [responseData('CONTAINS', 'SSH-2.0')] },
    });
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false });
    expect(outcome.details).toMatchObject({ response: 'SSH-2.0-Outpost_test\r\n', readEndedBy: 'quiet' });
    expect(server.received[0]).toBe('');
    // Measured from the connect, as nothing was sent.
    expect(outcome.timings!.firstByte).not.toBeNull();

    const connectOnly = await runProbe('127.0.0.1', server.port);
    expect(connectOnly.details).toMatchObject({ readEndedBy: 'not-read', response: '' });
  });

  it('ends the read when the peer closes, without waiting for quiet', async () => {
    const server = await bannerServer('220 bye\r\n', { thenClose: true });
    const outcome = await runProbe('127.0.0.1', server.port, {
      request: { data: 'QUIT\r\n', assertions: [responseData('EQUALS', '220 bye\r\n')] },
    });
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false });
    expect(outcome.details.readEndedBy).toBe('peer-closed');
    expect(outcome.timings!.total).toBeLessThan(TCP_RESPONSE_QUIET_MS);
  });

  it('stops waiting on a silent server at maxResponseTime and fails cleanly', async () => {
    const server = await silentServer();
    const started = performance.now();
    const outcome = await runProbe('127.0.0.1', server.port, {
      maxResponseTime: 300,
      degradedResponseTime: 200,
      request: { data: 'anyone there?\n', assertions: [responseData('CONTAINS', 'yes')] },
    });
    const elapsed = performance.now() - started;
    // Timers count from the event loop's cached clock: a few ms of slack below 300.
    expect(elapsed).toBeGreaterThanOrEqual(295);
    expect(elapsed).toBeLessThan(1500);
    expect(outcome).toMatchObject({ hasFailures: true, hasErrors: false, isDegraded: true });
    expect(outcome.assertions).toEqual([
      { source: 'RESPONSE_DATA', property: '', comparison: 'CONTAINS', target: 'yes', actual: '', passed: false },
    ]);
    expect(outcome.error).toEqual({
      code: 'MAX_RESPONSE_TIME',
      message: `127.0.0.1:${server.port} sent nothing within the maximum response time of 300 ms`,
    });
    expect(outcome.details).toMatchObject({ response: '', bytesRead: 0, readEndedBy: 'answer-window' });
    expect(outcome.responseTime).toBeGreaterThanOrEqual(295);
    expect(outcome.timings!.firstByte).toBeNull();
    expect(server.received[0]).toBe('anyone there?\n');
    await within(server.connections[0]!, 1000, 'the server seeing the connection closed');
  });

  it('times out when the budget runs out first, and leaves no socket open', async () => {
    const server = await silentServer();
    const started = performance.now();
    const outcome = await runProbe('127.0.0.1', server.port, {
      timeoutMs: 250,
      request: { data: 'hello?\n', assertions: [responseData('NOT_EMPTY')] },
    });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(outcome).toMatchObject({ hasErrors: true, hasFailures: true, assertions: [] });
    expect(outcome.error).toEqual({
      code: 'TIMEOUT',
      message: `TCP check of 127.0.0.1:${server.port} exceeded 250 ms while exchanging`,
    });
    expect(outcome.timings!.tcp).toBeGreaterThan(0);
    await within(server.connections[0]!, 1000, 'the server seeing the connection closed');
  });

  it('reports a cancelled run and hangs up', async () => {
    const server = await silentServer();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const outcome = await runProbe('127.0.0.1', server.port, {
      signal: controller.signal,
      request: { data: 'x', assertions: [responseData('NOT_EMPTY')] },
    });
    expect(outcome.error?.code).toBe('CANCELLED');
    expect(outcome.hasErrors).toBe(true);
    await within(server.connections[0]!, 1000, 'the server seeing the connection closed');
  });

  it('caps the answer and says it was truncated', async () => {
    const big = Buffer.alloc(TCP_MAX_RESPONSE_BYTES * 2, 'a');
    const server = await bannerServer(big);
    const outcome = await runProbe('127.0.0.1', server.port, {
      request: { assertions: [responseData('NOT_EMPTY')] },
    });
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false });
    expect(outcome.details).toMatchObject({ bytesRead: TCP_MAX_RESPONSE_BYTES, truncated: true, readEndedBy: 'cap' });
    expect((outcome.details.response as string).length).toBe(TCP_MAX_RESPONSE_BYTES);
    // The assertion's evidence is capped separately, and short.
    expect((outcome.assertions[0]!.actual as string).length).toBeLessThanOrEqual(1000);
    await within(server.connections[0]!, 1000, 'the server seeing the connection closed');
  });

  it('does not call an answer of exactly the cap truncated', async () => {
    const server = await bannerServer(Buffer.alloc(TCP_MAX_RESPONSE_BYTES, 'b'), { thenClose: true });
    const outcome = await runProbe('127.0.0.1', server.port, { request: { assertions: [responseData('NOT_EMPTY')] } });
    expect(outcome.details).toMatchObject({ bytesRead: TCP_MAX_RESPONSE_BYTES, truncated: false, readEndedBy: 'peer-closed' });
  });

  it('reads bytes that are not UTF-8 as replacement characters', async () => {
    const server = await bannerServer(Buffer.from([0x6f, 0xff, 0x6b]), { thenClose: true });
    const outcome = await runProbe('127.0.0.1', server.port, { request: { assertions: [responseData('EQUALS', 'o\uFFFDk')] } });
    expect(outcome.details).toMatchObject({ response: 'o\uFFFDk', bytesRead: 3 });
    expect(outcome.hasFailures).toBe(false);
  });
});

describe('tcpProbe: thresholds', () => {
  it('is degraded past degradedResponseTime, and fails past maxResponseTime', async () => {
    const server = await silentServer();
    const degraded = await runProbe('127.0.0.1', server.port, { degradedResponseTime: 0 });
    expect(degraded).toMatchObject({ isDegraded: true, hasFailures: false, hasErrors: false, error: null });

    const failed = await runProbe('127.0.0.1', server.port, { degradedResponseTime: 0, maxResponseTime: 0 });
    expect(failed).toMatchObject({ isDegraded: true, hasFailures: true, hasErrors: false });
    expect(failed.error?.code).toBe('MAX_RESPONSE_TIME');
    expect(failed.error?.message).toMatch(/^Response time [\d.]+ ms exceeded the maximum of 0 ms$/);

    const fine = await runProbe('127.0.0.1', server.port);
    expect(fine).toMatchObject({ isDegraded: false, hasFailures: false });
  });

  it('counts a slow answer in the response time', async () => {
    const server = await bannerServer('late\n', { delayMs: 150 });
    const outcome = await runProbe('127.0.0.1', server.port, {
      degradedResponseTime: 100,
      maxResponseTime: 2000,
      request: { assertions: [responseData('EQUALS', 'late\n')] },
    });
    expect(outcome).toMatchObject({ isDegraded: true, hasFailures: false, hasErrors: false, error: null });
    // Node timers count from the event loop's cached clock, which may lag the probe's
    // performance.now() by a little: a 150 ms timer can look a hair short (seen: 149.917).
    expect(outcome.responseTime).toBeGreaterThanOrEqual(145);
    expect(outcome.timings!.firstByte).toBeGreaterThanOrEqual(100);
  });
});

/**
 * Just enough of a DNS server for c-ares: A for the names it knows, an empty
 * answer (NODATA) for their AAAA, NXDOMAIN for everything else.
 */
async function startDnsServer(names: Record<string, string>): Promise<{ servers: string[]; queries: string[]; close(): Promise<void> }> {
  const socket = dgram.createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (query, peer) => {
    const labels: string[] = [];
    let offset = 12;
    while (offset < query.length && query[offset] !== 0) {
      const length = query[offset]!;
      labels.push(query.subarray(offset + 1, offset + 1 + length).toString('ascii'));
      offset += length + 1;
    }
    const questionEnd = offset + 5; // zero label, QTYPE, QCLASS
    const type = query.readUInt16BE(offset + 1);
    const name = labels.join('.').toLowerCase();
    queries.push(`${type === 28 ? 'AAAA' : type === 1 ? 'A' : String(type)} ${name}`);
    const address = names[name];
    const answer =
      address !== undefined && type === 1
        ? Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...address.split('.').map(Number)])
        : Buffer.alloc(0);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // id
    header.writeUInt16BE(address === undefined ? 0x8183 : 0x8180, 2); // response, RD, RA; NXDOMAIN or NOERROR
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer.length > 0 ? 1 : 0, 6);
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), answer]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    servers: [`127.0.0.1:${socket.address().port}`],
    queries,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

describe('tcpProbe: c-ares resolution', () => {
  it('asks the name servers directly, falls back from AAAA to A, and reports DNS failures', async () => {
    const nameServer = await startDnsServer({ 'echo.outpost.test': '127.0.0.1' });
    try {
      const server = await echoServer();
      const probe = { useOsResolver: false, nameServers: nameServer.servers };

      const found = await runProbe('echo.outpost.test', server.port, {
        probe,
        request: { data: 'dns', assertions: [responseData('EQUALS', 'dns')] },
      });
      expect(found).toMatchObject({ hasErrors: false, hasFailures: false });
      expect(found.details).toMatchObject({ hostname: 'echo.outpost.test', remoteAddress: '127.0.0.1' });
      expect(found.timings!.dns).toBeGreaterThan(0);
      expect(nameServer.queries).toEqual(['A echo.outpost.test']);

      const fallback = await runProbe('echo.outpost.test', server.port, { probe, request: { ipFamily: 'IPv6' } });
      expect(fallback).toMatchObject({ hasErrors: false, hasFailures: false });
      expect(fallback.details.remoteAddress).toBe('127.0.0.1');
      expect(nameServer.queries.slice(1)).toEqual(['AAAA echo.outpost.test', 'A echo.outpost.test']);

      const missing = await runProbe('missing.outpost.test', server.port, { probe });
      expect(missing).toMatchObject({ hasErrors: true, hasFailures: true });
      expect(missing.error).toEqual({
        code: 'DNS_FAILURE',
        message: 'DNS lookup of missing.outpost.test failed: no such host (ENOTFOUND)',
      });
      expect(missing.timings).toMatchObject({ tcp: null });
      expect(missing.timings!.dns).toBeGreaterThan(0);
      expect(missing.details).toMatchObject({ remoteAddress: null, bytesRead: 0 });
      expect(server.connections).toHaveLength(2);
    } finally {
      await nameServer.close();
    }
  });

  it('skips DNS for IP literals whichever resolver is chosen', async () => {
    const server = await echoServer();
    for (const useOsResolver of [true, false]) {
      // A name server that does not exist: asking it anything would fail the run.
      const outcome = await runProbe('127.0.0.1', server.port, { probe: { useOsResolver, nameServers: ['127.0.0.1:9'] } });
      expect(outcome).toMatchObject({ hasErrors: false, hasFailures: false });
      expect(outcome.timings!.dns).toBe(0);
    }
  });
});
