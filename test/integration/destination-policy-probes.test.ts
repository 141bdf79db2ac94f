/**
 * A private location's destination policy, enforced by the real probes
 * against real targets on loopback: a denied address fails the check with
 * DESTINATION_DENIED and the target never sees a connection; an allowed one
 * runs as usual. Everything stays on 127.0.0.1 (localhost through /etc/hosts).
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import dgram from 'node:dgram';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeJob } from '../../src/agent/execute.js';
import { ProbeRegistry } from '../../src/agent/probes/registry.js';
import type { DestinationPolicyLists, Job } from '../../src/protocol/agent-api.js';
import type { CheckType } from '../../src/protocol/enums.js';
import { apiSettings } from '../support/api-target.js';

const registry = new ProbeRegistry({ useOsDnsResolver: true });
const DENY_LOOPBACK: DestinationPolicyLists = { allowed: [], denied: ['127.0.0.0/8', '::1'] };
/** Nothing but this machine's 127.0.0.1: an allow-list. */
const ONLY_127_0_0_1: DestinationPolicyLists = { allowed: ['127.0.0.1'], denied: ['0.0.0.0/0', '::/0'] };

function job(checkType: CheckType, settings: Record<string, unknown>, destinationPolicy?: DestinationPolicyLists): Job {
  return {
    jobId: randomUUID(),
    checkSessionId: randomUUID(),
    checkId: randomUUID(),
    checkType,
    name: `${checkType} behind a policy`,
    runLocation: 'rack',
    runSource: 'SCHEDULER',
    attempt: 1,
    leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    timeoutSeconds: 10,
    runtimeId: null,
    environmentVariables: [],
    settings,
    ...(destinationPolicy ? { destinationPolicy } : {}),
  };
}

const run = (checkType: CheckType, settings: Record<string, unknown>, policy?: DestinationPolicyLists) =>
  executeJob(registry, job(checkType, settings, policy), randomUUID(), new AbortController().signal);

let http: Server;
let httpPort: number;
const httpHits: string[] = [];
let tcp: net.Server;
let tcpPort: number;
let tcpConnections = 0;
let dns: dgram.Socket;
let dnsPort: number;
let dnsQueries = 0;

beforeAll(async () => {
  http = createServer((request, response) => {
    httpHits.push(request.url ?? '');
    if (request.url === '/bounce') {
      // To another loopback address: outside ONLY_127_0_0_1, so the redirect must not be followed there.
      response.writeHead(302, { location: `http://127.0.0.2:${httpPort}/elsewhere` }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  httpPort = (http.address() as AddressInfo).port;

  tcp = net.createServer((socket) => {
    tcpConnections += 1;
    // The probe hangs up when it has what it wants; a reset is no concern of the server's.
    socket.on('error', () => undefined);
    socket.end('hello\n');
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  tcpPort = (tcp.address() as AddressInfo).port;

  dns = dgram.createSocket('udp4');
  dns.on('message', (message, peer) => {
    dnsQueries += 1;
    const query = dnsPacket.decode(message);
    const answer = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER,
      questions: query.questions,
      answers: [{ type: 'A', name: query.questions?.[0]?.name ?? 'x', ttl: 60, data: '192.0.2.1' }],
    });
    dns.send(answer, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => dns.bind(0, '127.0.0.1', resolve));
  dnsPort = dns.address().port;
});

afterAll(async () => {
  http?.closeAllConnections();
  await new Promise((resolve) => http?.close(resolve));
  await new Promise((resolve) => tcp?.close(resolve));
  dns?.close();
});

describe('URL checks', () => {
  it('fail with DESTINATION_DENIED for a name that resolves to a denied address, without connecting', async () => {
    const before = httpHits.length;
    const result = await run('URL', { request: { url: `http://localhost:${httpPort}/health` } }, DENY_LOOPBACK);
    expect(result).toMatchObject({ hasErrors: true, hasFailures: true, error: { code: 'DESTINATION_DENIED' } });
    expect(result.error?.message).toMatch(/127\.0\.0\.0\/8|::1\/128/);
    expect(httpHits.length).toBe(before);
  });

  it('pass where the policy allows, and without a policy', async () => {
    const url = `http://127.0.0.1:${httpPort}/health`;
    expect(await run('URL', { request: { url } }, ONLY_127_0_0_1)).toMatchObject({ hasErrors: false, hasFailures: false, error: null });
    expect(await run('URL', { request: { url } })).toMatchObject({ hasErrors: false, hasFailures: false, error: null });
  });

  it('do not follow a redirect to a denied address', async () => {
    const result = await run('URL', { request: { url: `http://127.0.0.1:${httpPort}/bounce`, followRedirects: true } }, ONLY_127_0_0_1);
    expect(result.error).toMatchObject({ code: 'DESTINATION_DENIED', message: expect.stringContaining('127.0.0.2') });
    expect(httpHits).not.toContain('/elsewhere');
  });
});

describe('API checks', () => {
  it('fail with DESTINATION_DENIED at a denied address, and pass at an allowed one', async () => {
    const before = httpHits.length;
    const settings = apiSettings(`http://127.0.0.1:${httpPort}/api`);
    const denied = await run('API', settings, DENY_LOOPBACK);
    expect(denied).toMatchObject({ hasErrors: true, error: { code: 'DESTINATION_DENIED' } });
    expect(httpHits.length).toBe(before);
    const allowed = await run('API', settings, ONLY_127_0_0_1);
    expect(allowed).toMatchObject({ hasErrors: false, hasFailures: false, statusCode: 200 });
  });
});

describe('TCP checks', () => {
  it('fail with DESTINATION_DENIED without connecting, and pass where allowed', async () => {
    const before = tcpConnections;
    const denied = await run('TCP', { request: { hostname: 'localhost', port: tcpPort } }, DENY_LOOPBACK);
    expect(denied).toMatchObject({ hasErrors: true, error: { code: 'DESTINATION_DENIED' } });
    expect(tcpConnections).toBe(before);
    const allowed = await run('TCP', { request: { hostname: '127.0.0.1', port: tcpPort } }, ONLY_127_0_0_1);
    expect(allowed).toMatchObject({ hasErrors: false, hasFailures: false, error: null });
    expect(tcpConnections).toBe(before + 1);
  });
});

describe('DNS checks', () => {
  it('send no query to a denied name server, and query an allowed one', async () => {
    const before = dnsQueries;
    const settings = { request: { query: 'example.test', recordType: 'A', nameServer: '127.0.0.1', port: dnsPort } };
    const denied = await run('DNS', settings, DENY_LOOPBACK);
    expect(denied).toMatchObject({ hasErrors: true, error: { code: 'DESTINATION_DENIED' } });
    expect(dnsQueries).toBe(before);
    const allowed = await run('DNS', settings, ONLY_127_0_0_1);
    expect(allowed).toMatchObject({ hasErrors: false, hasFailures: false, error: null });
    expect(dnsQueries).toBe(before + 1);
  });
});

/** The real ping needs raw sockets or ping groups: not every machine running the tests has them. */
const pingWorks = spawnSync('ping', ['-n', '-c', '1', '-W', '1', '-4', '127.0.0.1'], { timeout: 5000 }).status === 0;

describe('ICMP checks', () => {
  it.skipIf(!pingWorks)('ping an allowed address', async () => {
    const allowed = await run('ICMP', { request: { hostname: '127.0.0.1', pingCount: 1 } }, ONLY_127_0_0_1);
    expect(allowed).toMatchObject({ hasErrors: false, hasFailures: false, error: null });
  });

  it('send no ping to a denied address', async () => {
    const denied = await run('ICMP', { request: { hostname: 'localhost', pingCount: 1 } }, DENY_LOOPBACK);
    expect(denied).toMatchObject({ hasErrors: true, error: { code: 'DESTINATION_DENIED' } });
    // What was resolved is still reported; the ping itself never ran.
    expect(denied.details).not.toHaveProperty('transmitted');
  });
});

describe('a policy the agent cannot read', () => {
  it('fails the check as INVALID_SETTINGS rather than running it unguarded', async () => {
    const result = await run('URL', { request: { url: `http://127.0.0.1:${httpPort}/` } }, { allowed: [], denied: ['intranet'] });
    expect(result).toMatchObject({ hasErrors: true, error: { code: 'INVALID_SETTINGS' } });
  });
});
