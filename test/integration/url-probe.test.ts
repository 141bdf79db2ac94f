/**
 * The URL probe against real servers on loopback: real sockets, real TLS, real
 * timing. Nothing here leaves the machine.
 */
import dns from 'node:dns/promises';
import http from 'node:http';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { within } from '../support/deadline.js';
import type { ProbeOutcome } from '../../src/agent/probes/probe.js';
import { MAX_BODY_BYTES, MAX_REDIRECTS, urlProbe } from '../../src/agent/probes/url.js';
import { InvalidSettingsError } from '../../src/errors/index.js';
import { selfSignedCertificate, type Certificate } from '../support/certificate.js';

interface TestServer {
  origin: string;
  port: number;
  requests: IncomingMessage[];
  /** One entry per TCP connection accepted, settling when the connection closes. */
  connections: Promise<void>[];
  /** TLS servers only: the SNI and ALPN each handshake carried. */
  handshakes: { servername: string | false | null; alpn: string | false | null }[];
  close(): Promise<void>;
}

const servers: TestServer[] = [];

async function startServer(
  handler: RequestListener,
  options: { host?: string; tls?: { key: string; cert: string } } = {},
): Promise<TestServer> {
  const host = options.host ?? '127.0.0.1';
  const requests: IncomingMessage[] = [];
  const connections: Promise<void>[] = [];
  const handshakes: TestServer['handshakes'] = [];
  const listener: RequestListener = (req, res) => {
    requests.push(req);
    handler(req, res);
  };
  const server = options.tls
    ? https.createServer({ ...options.tls, ALPNProtocols: ['h2', 'http/1.1'] }, listener)
    : http.createServer(listener);
  server.on('connection', (socket: Socket) => {
    connections.push(new Promise((resolve) => socket.once('close', () => resolve())));
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    handshakes.push({ servername: socket.servername, alpn: socket.alpnProtocol });
  });
  // The probe is expected to fail handshakes; the server must not care.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `${options.tls ? 'https' : 'http'}://${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
  const testServer: TestServer = {
    origin,
    port,
    requests,
    connections,
    handshakes,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(testServer);
  return testServer;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** setTimeout that dies with the response, so no handler outlives its test. */
function later(res: ServerResponse, ms: number, action: () => void): void {
  const timer = setTimeout(action, ms);
  res.once('close', () => clearTimeout(timer));
}

interface RunOptions {
  request?: Record<string, unknown>;
  degradedResponseTime?: number;
  maxResponseTime?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

function runProbe(url: string, options: RunOptions = {}): Promise<ProbeOutcome> {
  const settings = urlProbe.parseSettings({
    request: { url, ...options.request },
    ...(options.degradedResponseTime === undefined ? {} : { degradedResponseTime: options.degradedResponseTime }),
    ...(options.maxResponseTime === undefined ? {} : { maxResponseTime: options.maxResponseTime }),
  });
  return urlProbe.run(settings, {
    signal: options.signal ?? new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 10_000,
  });
}

function statusServer(): Promise<TestServer> {
  return startServer((req, res) => {
    const code = Number(/^\/status\/(\d{3})$/.exec(req.url ?? '')?.[1] ?? 200);
    res.writeHead(code, { 'content-type': 'text/plain' }).end(`status ${code}`);
  });
}

describe('urlProbe.parseSettings', () => {
  it('fills in every default and leaves the raw settings untouched', () => {
    const raw = { request: { url: 'https://example.com/health' } };
    const settings = urlProbe.parseSettings(raw);
    expect(settings).toEqual({
      request: {
        url: 'https://example.com/health',
        method: 'GET',
        followRedirects: true,
        skipSSL: false,
        ipFamily: 'IPv4',
        assertions: [],
      },
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
    });
    expect(raw).toEqual({ request: { url: 'https://example.com/health' } });
  });

  it('names every bad field', () => {
    const attempt = (): unknown =>
      urlProbe.parseSettings({
        request: {
          url: 'ftp://example.com',
          method: 'POST',
          assertions: [{ source: 'STATUS_CODE', comparison: 'ROUGHLY' }],
        },
        maxResponseTime: 40_000,
      });
    expect(attempt).toThrow(InvalidSettingsError);
    const message = (() => {
      try {
        attempt();
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toContain('request.url');
    expect(message).toContain('request.method: must be one of "GET", "HEAD"');
    expect(message).toContain('request.assertions[0].comparison');
  });

  it('reports a missing request and a bad threshold', () => {
    expect(() => urlProbe.parseSettings({})).toThrow(/request/);
    expect(() => urlProbe.parseSettings({ request: { url: 'http://a' }, degradedResponseTime: -1 })).toThrow(
      /degradedResponseTime/,
    );
    expect(() => urlProbe.parseSettings(null)).toThrow(InvalidSettingsError);
  });

  it('rejects URLs that only look right, and sources a URL monitor cannot evaluate', () => {
    expect(() => urlProbe.parseSettings({ request: { url: 'http://' } })).toThrow(/request\.url: not a valid URL/);
    expect(() =>
      urlProbe.parseSettings({
        request: { url: 'http://a', assertions: [{ source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'ok' }] },
      }),
    ).toThrow(/request\.assertions\[0\]\.source: must be one of "STATUS_CODE"/);
  });

  it('carries the stable INVALID_SETTINGS code', () => {
    try {
      urlProbe.parseSettings({ request: {} });
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidSettingsError).code).toBe('INVALID_SETTINGS');
    }
  });
});

describe('urlProbe.run over plain HTTP', () => {
  it('passes a 200 and reports timings and details', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end('hello outpost'));
    const outcome = await runProbe(`${server.origin}/health?x=1`);

    expect(outcome).toMatchObject({
      statusCode: 200,
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      error: null,
      assertions: [],
      details: {
        redirects: 0,
        finalUrl: `${server.origin}/health?x=1`,
        remoteAddress: '127.0.0.1',
        httpVersion: '1.1',
        bodyBytesRead: 'hello outpost'.length,
        bodyTruncated: false,
      },
    });
    const timings = outcome.timings;
    if (timings === null) throw new Error('expected timings');
    expect(timings.dns).toBe(0); // an IP literal is never looked up
    expect(timings.tls).toBeNull();
    expect(timings.tcp).toBeGreaterThan(0);
    expect(timings.firstByte).toBeGreaterThan(0);
    expect(timings.download).toBeGreaterThanOrEqual(0);
    // responseTime is the network's share: the whole run less the agent's own `wait`.
    expect(outcome.responseTime).toBeCloseTo(timings.total! - timings.wait!, 2);
    expect(outcome.responseTime).toBeCloseTo(
      timings.dns! + timings.tcp! + (timings.tls ?? 0) + timings.firstByte! + timings.download!,
      2,
    );
    expect(timings.total).toBeGreaterThanOrEqual(outcome.responseTime);
    expect(server.requests[0]?.method).toBe('GET');
    expect(server.requests[0]?.url).toBe('/health?x=1');
    expect(server.requests[0]?.headers.connection).toBe('close');
  });

  it('sends HEAD when asked and reads no body', async () => {
    const server = await startServer((_req, res) => res.writeHead(200, { 'content-length': '5000' }).end());
    const outcome = await runProbe(server.origin, { request: { method: 'HEAD' } });
    expect(outcome.statusCode).toBe(200);
    expect(outcome.hasFailures).toBe(false);
    expect(server.requests[0]?.method).toBe('HEAD');
    expect(outcome.details.bodyBytesRead).toBe(0);
  });

  it('fails a 500 when the monitor has no assertions', async () => {
    const server = await statusServer();
    const outcome = await runProbe(`${server.origin}/status/500`);
    expect(outcome.statusCode).toBe(500);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.hasErrors).toBe(false);
    expect(outcome.error?.code).toBe('HTTP_STATUS');
    expect(outcome.error?.message).toContain('answered 500');
  });

  it('leaves a 500 to the assertions when there are any', async () => {
    const server = await statusServer();
    const outcome = await runProbe(`${server.origin}/status/500`, {
      request: { assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '500' }] },
    });
    expect(outcome.hasFailures).toBe(false);
    expect(outcome.error).toBeNull();
    expect(outcome.assertions).toEqual([
      { source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '500', actual: 500, passed: true },
    ]);
  });

  it.each([
    [200, 'EQUALS', '200', true],
    [200, 'EQUALS', '201', false],
    [200, 'NOT_EQUALS', '500', true],
    [404, 'NOT_EQUALS', '404', false],
    [204, 'GREATER_THAN', '199', true],
    [200, 'GREATER_THAN', '200', false],
    [201, 'LESS_THAN', '300', true],
    [503, 'LESS_THAN', '400', false],
  ] as const)('status %i, STATUS_CODE %s %s → passed %s', async (code, comparison, target, passed) => {
    const server = await statusServer();
    const outcome = await runProbe(`${server.origin}/status/${code}`, {
      request: { assertions: [{ source: 'STATUS_CODE', comparison, target }] },
    });
    expect(outcome.statusCode).toBe(code);
    expect(outcome.assertions).toHaveLength(1);
    expect(outcome.assertions[0]?.actual).toBe(code);
    expect(outcome.assertions[0]?.passed).toBe(passed);
    expect(outcome.hasFailures).toBe(!passed);
    expect(outcome.hasErrors).toBe(false);
  });

  it('fails when any one of several assertions fails', async () => {
    const server = await statusServer();
    const outcome = await runProbe(`${server.origin}/status/200`, {
      request: {
        assertions: [
          { source: 'STATUS_CODE', comparison: 'LESS_THAN', target: '400' },
          { source: 'STATUS_CODE', comparison: 'EQUALS', target: '204' },
        ],
      },
    });
    expect(outcome.assertions.map((a) => a.passed)).toEqual([true, false]);
    expect(outcome.hasFailures).toBe(true);
  });
});

describe('urlProbe.run over HTTPS', () => {
  let certificate: Certificate;
  let credentials: { key: string; cert: string };

  beforeAll(() => {
    certificate = selfSignedCertificate();
    credentials = { key: certificate.key, cert: certificate.cert };
  });

  afterAll(() => certificate?.remove());

  it('refuses a self-signed certificate unless told to skip the check', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end('secure'), { tls: credentials });
    const outcome = await runProbe(server.origin);
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.statusCode).toBeNull();
    expect(outcome.error?.code).toBe('TLS_FAILURE');
    expect(outcome.error?.message).toMatch(/self[- ]signed certificate/);
    expect(server.requests).toHaveLength(0);
  });

  it('passes with skipSSL and times the handshake', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end('secure'), { tls: credentials });
    const outcome = await runProbe(server.origin, { request: { skipSSL: true } });
    expect(outcome.error).toBeNull();
    expect(outcome.statusCode).toBe(200);
    expect(outcome.hasFailures).toBe(false);
    expect(outcome.timings?.tls).toBeGreaterThan(0);
    expect(outcome.details.bodyBytesRead).toBe('secure'.length);
  });

  it('sends SNI for a host name but not for an IP, and offers only HTTP/1.1', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end(), { tls: credentials });
    const byName = await runProbe(`https://localhost:${server.port}/`, { request: { skipSSL: true } });
    const byIp = await runProbe(server.origin, { request: { skipSSL: true } });
    expect(byName.statusCode).toBe(200);
    expect(byIp.statusCode).toBe(200);
    expect(byName.timings?.dns).toBeGreaterThanOrEqual(0);
    expect(server.handshakes).toEqual([
      { servername: 'localhost', alpn: 'http/1.1' },
      { servername: false, alpn: 'http/1.1' },
    ]);
  });
});

describe('urlProbe.run and redirects', () => {
  async function redirectServer(): Promise<TestServer> {
    const server = await startServer((req, res) => {
      const url = req.url ?? '/';
      const hop = /^\/inf\/(\d+)$/.exec(url);
      if (url === '/r/3') res.writeHead(301, { location: '/r/2' }).end();
      else if (url === '/r/2') res.writeHead(302, { location: `${server.origin}/r/1` }).end();
      else if (url === '/r/1') res.writeHead(307, { location: '../ok' }).end();
      else if (url === '/ok') res.writeHead(200).end('arrived');
      else if (url === '/loop/a') res.writeHead(302, { location: '/loop/b' }).end();
      else if (url === '/loop/b') res.writeHead(302, { location: '/loop/a' }).end();
      else if (hop) res.writeHead(302, { location: `/inf/${Number(hop[1]) + 1}` }).end();
      else if (url === '/ftp') res.writeHead(301, { location: 'ftp://127.0.0.1/file' }).end();
      else res.writeHead(404).end();
    });
    return server;
  }

  it('follows a chain of three, each hop on a fresh connection', async () => {
    const server = await redirectServer();
    const outcome = await runProbe(`${server.origin}/r/3`);
    expect(outcome.error).toBeNull();
    expect(outcome.statusCode).toBe(200);
    expect(outcome.hasFailures).toBe(false);
    expect(outcome.details).toMatchObject({ redirects: 3, finalUrl: `${server.origin}/ok`, bodyBytesRead: 7 });
    expect(server.requests.map((r) => r.url)).toEqual(['/r/3', '/r/2', '/r/1', '/ok']);
    expect(server.connections).toHaveLength(4);
    const timings = outcome.timings;
    if (timings === null) throw new Error('expected timings');
    expect(outcome.responseTime).toBeCloseTo(timings.total! - timings.wait!, 2);
    expect(timings.total).toBeGreaterThanOrEqual(outcome.responseTime);
  });

  it('takes the redirect itself as the answer when not following', async () => {
    const server = await redirectServer();
    const outcome = await runProbe(`${server.origin}/r/3`, { request: { followRedirects: false } });
    expect(outcome.statusCode).toBe(301);
    expect(outcome.hasFailures).toBe(false);
    expect(outcome.details).toMatchObject({ redirects: 0, finalUrl: `${server.origin}/r/3` });
    expect(server.requests).toHaveLength(1);
  });

  it('stops a redirect loop', async () => {
    const server = await redirectServer();
    const outcome = await runProbe(`${server.origin}/loop/a`);
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error?.code).toBe('TOO_MANY_REDIRECTS');
    expect(outcome.error?.message).toContain('loop');
    expect(server.requests).toHaveLength(2);
  });

  it('refuses to follow a redirect out of HTTP(S)', async () => {
    const server = await redirectServer();
    const outcome = await runProbe(`${server.origin}/ftp`);
    expect(outcome.error?.code).toBe('HTTP_FAILURE');
    expect(outcome.error?.message).toContain('ftp://127.0.0.1/file');
  });

  it(`gives up after ${MAX_REDIRECTS} redirects`, async () => {
    const server = await redirectServer();
    const outcome = await runProbe(`${server.origin}/inf/0`);
    expect(outcome.error?.code).toBe('TOO_MANY_REDIRECTS');
    expect(outcome.hasFailures).toBe(true);
    expect(server.requests).toHaveLength(MAX_REDIRECTS + 1);
    expect(server.connections).toHaveLength(MAX_REDIRECTS + 1);
  });
});

describe('urlProbe.run thresholds and time limits', () => {
  function slowServer(delayMs: number): Promise<TestServer> {
    return startServer((_req, res) => later(res, delayMs, () => res.writeHead(200).end('late')));
  }

  it('is degraded past degradedResponseTime, still passing', async () => {
    const server = await slowServer(150);
    const outcome = await runProbe(server.origin, { degradedResponseTime: 100, maxResponseTime: 3000 });
    expect(outcome.responseTime).toBeGreaterThan(100);
    expect(outcome.isDegraded).toBe(true);
    expect(outcome.hasFailures).toBe(false);
    expect(outcome.error).toBeNull();
  });

  it('is not degraded under the threshold', async () => {
    const server = await slowServer(0);
    const outcome = await runProbe(server.origin, { degradedResponseTime: 1000 });
    expect(outcome.isDegraded).toBe(false);
  });

  it('fails past maxResponseTime', async () => {
    const server = await slowServer(300);
    const outcome = await runProbe(server.origin, { degradedResponseTime: 100, maxResponseTime: 200 });
    expect(outcome.statusCode).toBe(200);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.hasErrors).toBe(false);
    expect(outcome.isDegraded).toBe(true);
    expect(outcome.error?.code).toBe('MAX_RESPONSE_TIME');
    expect(outcome.error?.message).toContain('200 ms');
  });

  it('times out waiting for headers and closes the connection', async () => {
    const server = await slowServer(5000);
    const started = performance.now();
    const outcome = await runProbe(server.origin, { timeoutMs: 300 });
    const elapsed = performance.now() - started;
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.statusCode).toBeNull();
    expect(outcome.error).toEqual({ code: 'TIMEOUT', message: expect.stringContaining('exceeded 300 ms') as string });
    expect(outcome.responseTime).toBeGreaterThanOrEqual(299);
    expect(elapsed).toBeLessThan(2000);
    expect(server.connections).toHaveLength(1);
    await within(server.connections[0] ?? Promise.reject(new Error('no connection')), 1000, 'server-side close');
  });

  it('times out in the middle of a body and closes the connection', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const drip = setInterval(() => res.write('.'), 20);
      res.once('close', () => clearInterval(drip));
    });
    const outcome = await runProbe(server.origin, { timeoutMs: 300 });
    expect(outcome.error?.code).toBe('TIMEOUT');
    expect(outcome.timings?.firstByte).toBeGreaterThan(0);
    await within(server.connections[0] ?? Promise.reject(new Error('no connection')), 1000, 'server-side close');
  });

  it('stops when the run is cancelled, and closes the connection', async () => {
    const server = await slowServer(5000);
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(), 100);
    const outcome = await runProbe(server.origin, { signal: cancel.signal });
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error?.code).toBe('CANCELLED');
    await within(server.connections[0] ?? Promise.reject(new Error('no connection')), 1000, 'server-side close');
  });

  it('reports a timeout when the caller\'s signal times out', async () => {
    const server = await slowServer(5000);
    const outcome = await runProbe(server.origin, { signal: AbortSignal.timeout(100) });
    expect(outcome.error?.code).toBe('TIMEOUT');
    await within(server.connections[0] ?? Promise.reject(new Error('no connection')), 1000, 'server-side close');
  });

  it('does not connect at all when cancelled before it starts', async () => {
    const server = await slowServer(0);
    const outcome = await runProbe(server.origin, { signal: AbortSignal.abort() });
    expect(outcome.error?.code).toBe('CANCELLED');
    expect(server.connections).toHaveLength(0);
  });

  it('reads at most about 1 MiB of body, then drops the connection', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(3 * MAX_BODY_BYTES, 0x61));
    });
    const outcome = await runProbe(server.origin);
    expect(outcome.statusCode).toBe(200);
    expect(outcome.hasFailures).toBe(false);
    expect(outcome.details.bodyTruncated).toBe(true);
    expect(outcome.details.bodyBytesRead).toBeGreaterThan(MAX_BODY_BYTES);
    expect(outcome.details.bodyBytesRead).toBeLessThan(3 * MAX_BODY_BYTES);
    await within(server.connections[0] ?? Promise.reject(new Error('no connection')), 1000, 'server-side close');
  });
});

describe('urlProbe.run network failures', () => {
  it('reports a refused connection', async () => {
    const closed = await startServer((_req, res) => res.end());
    await closed.close();
    servers.splice(servers.indexOf(closed), 1);
    const outcome = await runProbe(closed.origin);
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.statusCode).toBeNull();
    expect(outcome.error).toEqual({
      code: 'CONNECTION_FAILED',
      message: `Connection refused by 127.0.0.1:${closed.port}`,
    });
    expect(outcome.timings?.tcp).toBeNull();
  });

  it('reports a name that does not resolve', async () => {
    // RFC 6761: .invalid never resolves, so this cannot reach anything.
    const outcome = await runProbe('http://outpost-probe-test.invalid/');
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error?.code).toBe('DNS_FAILURE');
    expect(outcome.error?.message).toContain('outpost-probe-test.invalid');
    expect(outcome.timings?.dns).toBeGreaterThanOrEqual(0);
  });

  it('reports a server that hangs up without answering', async () => {
    const server = await startServer((req) => req.socket.destroy());
    const outcome = await runProbe(server.origin);
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error?.code).toBe('HTTP_FAILURE');
    expect(outcome.error?.message).toBe(`GET ${server.origin}/: the server closed the connection before the response was complete`);
    expect(outcome.statusCode).toBeNull();
  });
});

describe('urlProbe.run timing', () => {
  it('measures time to first byte and download separately', async () => {
    const server = await startServer((_req, res) => {
      later(res, 200, () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.flushHeaders();
        later(res, 150, () => res.end('done'));
      });
    });
    const outcome = await runProbe(server.origin);
    const timings = outcome.timings;
    if (timings === null) throw new Error('expected timings');
    expect(timings.firstByte).toBeGreaterThanOrEqual(190);
    expect(timings.firstByte).toBeLessThan(340);
    expect(timings.download).toBeGreaterThanOrEqual(140);
    expect(timings.total).toBeGreaterThanOrEqual(340);
  });

  it('opens a fresh connection for every run', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end('ok'));
    await runProbe(server.origin);
    await runProbe(server.origin);
    expect(server.requests).toHaveLength(2);
    expect(server.connections).toHaveLength(2);
  });
});

const ipv6Unavailable = await new Promise<string | null>((resolve) => {
  const probeServer = net.createServer();
  probeServer.once('error', (error: Error) => resolve(`::1 cannot be bound here (${error.message})`));
  probeServer.listen(0, '::1', () => probeServer.close(() => resolve(null)));
});
const localhostHasIpv6 = await dns.lookup('localhost', { family: 6 }).then(
  () => true,
  () => false,
);

describe('urlProbe.run and IP families', () => {
  it.skipIf(ipv6Unavailable !== null)(
    `reaches [::1] over IPv6${ipv6Unavailable ? ` — skipped: ${ipv6Unavailable}` : ''}`,
    async () => {
      const server = await startServer((_req, res) => res.writeHead(200).end('v6'), { host: '::1' });
      const outcome = await runProbe(`${server.origin}/`, { request: { ipFamily: 'IPv6' } });
      expect(outcome.error).toBeNull();
      expect(outcome.statusCode).toBe(200);
      expect(outcome.details.remoteAddress).toBe('::1');
    },
  );

  it.skipIf(localhostHasIpv6)(
    `falls back to IPv4 when the host has no IPv6 address${localhostHasIpv6 ? ' — skipped: localhost resolves to IPv6 here' : ''}`,
    async () => {
      const server = await startServer((_req, res) => res.writeHead(200).end('v4'));
      const outcome = await runProbe(`http://localhost:${server.port}/`, { request: { ipFamily: 'IPv6' } });
      expect(outcome.error).toBeNull();
      expect(outcome.details.remoteAddress).toBe('127.0.0.1');
    },
  );
});
