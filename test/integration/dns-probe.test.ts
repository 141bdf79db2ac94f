/**
 * The DNS probe against a real authoritative server (Knot DNS, Debian package
 * `knot`) on loopback, over UDP and TCP, plus small fake servers written here
 * for what a well-behaved server never does (answer late, answer with the
 * wrong id, never answer). Every packet stays on 127.0.0.1 / ::1.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import dns from 'node:dns';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import dnsPacket from 'dns-packet';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDnsProbe, dnsProbe } from '../../src/agent/probes/dns.js';
import type { DnsSettingsParsed } from '../../src/agent/probes/dns.js';
import type { ProbeOutcome } from '../../src/agent/probes/probe.js';
import { InvalidSettingsError } from '../../src/errors/index.js';

// ---------------------------------------------------------------- Knot DNS

const ZONE = `$ORIGIN outpost.test.
$TTL 300
@       IN SOA   ns1.outpost.test. hostmaster.outpost.test. 2024010101 3600 600 86400 60
@       IN NS    ns1
@       IN NS    ns2
ns1     IN A     127.0.0.1
ns2     IN A     127.0.0.2
@       IN A     127.0.0.1
@       IN AAAA  ::1
www     IN CNAME outpost.test.
@       IN MX    10 mail
mail    IN A     127.0.0.3
@       IN TXT   "v=spf1 -all"
long    IN TXT   "${'a'.repeat(255)}" "${'b'.repeat(255)}" "tail"
quote   IN TXT   "say \\"hi\\" \\\\ ok"
@       IN HTTPS 1 . alpn="h2,h3" port=8443 ipv4hint=127.0.0.1 ipv6hint=::1
alias   IN HTTPS 0 outpost.test.
svc     IN HTTPS 16 svc.outpost.test. mandatory=alpn,port alpn=h2,h3 no-default-alpn port=443 ech=AEX+DQBB key7="/dns-query{?dns}" key65000="hi"
${Array.from({ length: 6 }, (_, i) => `big     IN TXT   "${String(i)}${'x'.repeat(249)}"`).join('\n')}
`;

interface Knot {
  port: number;
  stop(): Promise<void>;
}

function findKnotd(): string {
  const candidates = [process.env.KNOTD, '/usr/sbin/knotd', '/usr/bin/knotd'].filter((c): c is string => !!c);
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) {
    throw new Error('knotd not found: these tests need Knot DNS (Debian: apt-get install -y knot)');
  }
  return found;
}

function bindUdp(host: string, port: number): Promise<dgram.Socket | null> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4' });
    socket.once('error', () => {
      socket.close();
      resolve(null);
    });
    socket.bind(port, host, () => resolve(socket));
  });
}

function bindTcp(host: string, port: number): Promise<net.Server | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, host, () => resolve(server));
  });
}

/** A port free for UDP and TCP on 127.0.0.1 (and ::1 when the host has it): bound to 0 on TCP, then checked on the rest. */
async function freePort(ipv6: boolean): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const tcp4 = await bindTcp('127.0.0.1', 0);
    if (tcp4 === null) continue;
    const { port } = tcp4.address() as AddressInfo;
    const udp4 = await bindUdp('127.0.0.1', port);
    const tcp6 = ipv6 ? await bindTcp('::1', port) : null;
    const udp6 = ipv6 ? await bindUdp('::1', port) : null;
    const ok = udp4 !== null && (!ipv6 || (tcp6 !== null && udp6 !== null));
    await new Promise<void>((resolve) => tcp4.close(() => resolve()));
    if (tcp6 !== null) await new Promise<void>((resolve) => tcp6.close(() => resolve()));
    udp4?.close();
    udp6?.close();
    if (ok) return port;
  }
  throw new Error('no port free on both UDP and TCP');
}

async function hasIpv6Loopback(): Promise<boolean> {
  const socket = await bindUdp('::1', 0);
  socket?.close();
  return socket !== null;
}

/** Whether this host has ::1; without it the IPv6 case is skipped and Knot listens on 127.0.0.1 only. */
const IPV6_LOOPBACK = await hasIpv6Loopback();

async function startKnot(): Promise<Knot> {
  const knotd = findKnotd();
  const ipv6 = IPV6_LOOPBACK;
  const port = await freePort(ipv6);
  const dir = mkdtempSync(path.join(tmpdir(), 'outpost-knot-'));
  mkdirSync(path.join(dir, 'db'));
  writeFileSync(path.join(dir, 'outpost.test.zone'), ZONE);
  const listen = [`127.0.0.1@${port}`, ...(ipv6 ? [`::1@${port}`] : [])].join(', ');
  // broken.test.'s zone file is never written: Knot answers SERVFAIL for a zone it failed to load.
  writeFileSync(
    path.join(dir, 'knot.conf'),
    `server:
    rundir: "${dir}"
    listen: [ ${listen} ]
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
database:
    storage: "${dir}/db"
log:
  - target: stderr
    any: notice
zone:
  - domain: outpost.test.
    file: "${dir}/outpost.test.zone"
    zonefile-sync: -1
    journal-content: none
  - domain: broken.test.
    file: "${dir}/broken.test.zone"
    zonefile-sync: -1
    journal-content: none
`,
  );
  const child: ChildProcess = spawn(knotd, ['-c', path.join(dir, 'knot.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let running = true;
  void exited.then(() => (running = false));
  const stop = async (): Promise<void> => {
    if (running) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const until = performance.now() + 15_000;
    for (;;) {
      if (!running) throw new Error(`knotd exited during startup:\n${output}`);
      if ((await answers('udp', port)) && (await answers('tcp', port))) break;
      if (performance.now() > until) throw new Error(`knotd did not answer within 15 s:\n${output}`);
      await sleep(50);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, stop };
}

/** Whether anything answers an SOA query for outpost.test. on 127.0.0.1:port within 500 ms. */
function answers(protocol: 'udp' | 'tcp', port: number): Promise<boolean> {
  const query = dnsPacket.encode({ type: 'query', id: 1, questions: [{ type: 'SOA', name: 'outpost.test' }] });
  return new Promise((resolve) => {
    let release = (): void => undefined;
    const timer = setTimeout(() => finish(false), 500);
    function finish(ok: boolean): void {
      clearTimeout(timer);
      release();
      release = () => undefined;
      resolve(ok);
    }
    if (protocol === 'udp') {
      const udp = dgram.createSocket('udp4');
      release = () => udp.close();
      udp.on('error', () => finish(false));
      udp.on('message', () => finish(true));
      udp.send(query, port, '127.0.0.1');
    } else {
      const tcp = net.connect(port, '127.0.0.1');
      release = () => tcp.destroy();
      tcp.on('error', () => finish(false));
      tcp.on('data', () => finish(true));
      tcp.on('connect', () => tcp.write(Buffer.concat([Buffer.from([query.length >> 8, query.length & 0xff]), query])));
    }
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------- fake servers

type DecodedQuery = ReturnType<typeof dnsPacket.decode>;

interface FakeServer {
  port: number;
  received: DecodedQuery[];
  close(): Promise<void>;
}

const fakes: FakeServer[] = [];

afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** A UDP server on 127.0.0.1 that hands each query to `handler`; `send` answers with an encoded packet. */
type QueryHandler = (query: DecodedQuery, send: (packet: dnsPacket.Packet) => void) => void;

async function fakeUdpServer(handler: QueryHandler): Promise<FakeServer> {
  const socket = dgram.createSocket('udp4');
  const received: DecodedQuery[] = [];
  socket.on('message', (message, rinfo) => {
    const query = dnsPacket.decode(message);
    received.push(query);
    handler(query, (packet) => socket.send(dnsPacket.encode(packet), rinfo.port, rinfo.address));
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const fake: FakeServer = {
    port: socket.address().port,
    received,
    close: async () => {
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
  fakes.push(fake);
  return fake;
}

/** A TCP server on 127.0.0.1 that hands every connection to `onConnection`. */
async function rawTcpServer(onConnection: (socket: net.Socket) => void, received: DecodedQuery[] = []): Promise<FakeServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const fake: FakeServer = {
    port: (server.address() as AddressInfo).port,
    received,
    close: async () => {
      sockets.forEach((socket) => socket.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  fakes.push(fake);
  return fake;
}

/** A TCP server on 127.0.0.1 that reads one length-prefixed query per connection. */
function fakeTcpServer(handler: QueryHandler): Promise<FakeServer> {
  const received: DecodedQuery[] = [];
  return rawTcpServer((socket) => {
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 2 || buffered.length < 2 + buffered.readUInt16BE(0)) return;
      const query = dnsPacket.decode(buffered.subarray(2, 2 + buffered.readUInt16BE(0)));
      received.push(query);
      handler(query, (packet) => socket.write(dnsPacket.streamEncode(packet)));
    });
  }, received);
}

/** The answer a correct server would give: same id and question, one A record. */
function answerFor(query: DecodedQuery, overrides: Partial<dnsPacket.Packet> = {}): dnsPacket.Packet {
  return {
    type: 'response',
    id: query.id ?? 0,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.AUTHORITATIVE_ANSWER,
    questions: query.questions ?? [],
    answers: [{ type: 'A', name: query.questions?.[0]?.name ?? '', ttl: 60, class: 'IN', data: '127.0.0.1' }],
    ...overrides,
  };
}

/** A port nothing listens on, for TCP and UDP alike. */
async function closedPort(): Promise<number> {
  const server = await bindTcp('127.0.0.1', 0);
  if (server === null) throw new Error('could not bind');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---------------------------------------------------------------- probe runs

let knot: Knot;

beforeAll(async () => {
  knot = await startKnot();
});

afterAll(async () => {
  await knot?.stop();
});

interface RunOptions {
  degradedResponseTime?: number;
  maxResponseTime?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

function settingsFor(request: Record<string, unknown>, options: RunOptions = {}): DnsSettingsParsed {
  return dnsProbe.parseSettings({
    request: { nameServer: '127.0.0.1', port: knot.port, ...request },
    ...(options.degradedResponseTime === undefined ? {} : { degradedResponseTime: options.degradedResponseTime }),
    ...(options.maxResponseTime === undefined ? {} : { maxResponseTime: options.maxResponseTime }),
  });
}

function runProbe(request: Record<string, unknown>, options: RunOptions = {}): Promise<ProbeOutcome> {
  return dnsProbe.run(settingsFor(request, options), {
    signal: options.signal ?? new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 5000,
  });
}

function expectAnswered(outcome: ProbeOutcome): void {
  expect(outcome.error, JSON.stringify(outcome.error)).toBeNull();
  expect(outcome.hasErrors).toBe(false);
  expect(outcome.hasFailures).toBe(false);
  expect(outcome.statusCode).toBeNull();
  expect(outcome.responseTime).toBeGreaterThan(0);
  expect(outcome.timings?.total).toBe(outcome.responseTime);
  expect(outcome.details.rcode).toBe('NOERROR');
}

/** TEXT_ANSWER as the evaluator saw it, through an assertion that always passes on a non-empty answer. */
async function textOf(request: Record<string, unknown>): Promise<string> {
  const outcome = await runProbe({
    ...request,
    assertions: [{ source: 'TEXT_ANSWER', comparison: 'NOT_EMPTY' }],
  });
  expect(outcome.assertions[0]?.passed).toBe(true);
  return String(outcome.assertions[0]?.actual);
}

const HTTPS_APEX = {
  priority: 1,
  target: '.',
  params: { alpn: ['h2', 'h3'], port: 8443, ipv4hint: ['127.0.0.1'], ipv6hint: ['::1'] },
};

const HTTPS_SVC = {
  priority: 16,
  target: 'svc.outpost.test',
  params: {
    mandatory: ['alpn', 'port'],
    alpn: ['h2', 'h3'],
    'no-default-alpn': true,
    port: 443,
    ech: 'AEX+DQBB',
    dohpath: '/dns-query{?dns}',
    key65000: '6869',
  },
};

const RECORD_CASES: { label: string; query: string; recordType: string; data: unknown[] }[] = [
  { label: 'A', query: 'outpost.test', recordType: 'A', data: ['127.0.0.1'] },
  { label: 'AAAA', query: 'outpost.test', recordType: 'AAAA', data: ['::1'] },
  { label: 'CNAME', query: 'www.outpost.test', recordType: 'CNAME', data: ['outpost.test'] },
  { label: 'MX', query: 'outpost.test', recordType: 'MX', data: [{ preference: 10, exchange: 'mail.outpost.test' }] },
  { label: 'TXT', query: 'outpost.test', recordType: 'TXT', data: ['v=spf1 -all'] },
  {
    label: 'TXT in three chunks',
    query: 'long.outpost.test',
    recordType: 'TXT',
    data: [`${'a'.repeat(255)}${'b'.repeat(255)}tail`],
  },
  { label: 'TXT with quotes', query: 'quote.outpost.test', recordType: 'TXT', data: ['say "hi" \\ ok'] },
  {
    label: 'SOA',
    query: 'outpost.test',
    recordType: 'SOA',
    data: [
      {
        mname: 'ns1.outpost.test',
        rname: 'hostmaster.outpost.test',
        serial: 2024010101,
        refresh: 3600,
        retry: 600,
        expire: 86400,
        minimum: 60,
      },
    ],
  },
  { label: 'NS', query: 'outpost.test', recordType: 'NS', data: ['ns1.outpost.test', 'ns2.outpost.test'] },
  { label: 'HTTPS (ServiceMode)', query: 'outpost.test', recordType: 'HTTPS', data: [HTTPS_APEX] },
  {
    label: 'HTTPS (AliasMode)',
    query: 'alias.outpost.test',
    recordType: 'HTTPS',
    data: [{ priority: 0, target: 'outpost.test', params: {} }],
  },
  { label: 'HTTPS (every parameter kind)', query: 'svc.outpost.test', recordType: 'HTTPS', data: [HTTPS_SVC] },
];

describe.each(['UDP', 'TCP'] as const)('record types over %s', (protocol) => {
  it.each(RECORD_CASES)('$label', async ({ query, recordType, data }) => {
    const outcome = await runProbe({ query, recordType, protocol });
    expectAnswered(outcome);
    const answers = outcome.details.answers as { name: string; type: string; ttl: number; class: string; data: unknown }[];
    const sortKey = (value: unknown): string => JSON.stringify(value);
    expect(answers.map((answer) => answer.data).sort((a, b) => sortKey(a).localeCompare(sortKey(b)))).toEqual(data);
    for (const answer of answers) {
      expect(answer).toMatchObject({ name: query, type: recordType, ttl: 300, class: 'IN' });
    }
    expect(outcome.details).toMatchObject({
      protocol,
      nameServer: '127.0.0.1',
      address: '127.0.0.1',
      port: knot.port,
      truncated: false,
      flags: { aa: true, tc: false, rd: true, ra: false },
    });
    expect(outcome.details.authorities).toEqual([]);
  });

  it('follows nothing itself: an A query for a CNAME gets the chain the server put in the answer', async () => {
    const outcome = await runProbe({ query: 'www.outpost.test', recordType: 'A', protocol });
    expectAnswered(outcome);
    expect(outcome.details.answers).toEqual([
      { name: 'www.outpost.test', type: 'CNAME', ttl: 300, class: 'IN', data: 'outpost.test' },
      { name: 'outpost.test', type: 'A', ttl: 300, class: 'IN', data: '127.0.0.1' },
    ]);
  });

  it('reports additional records (MX target glue) without the OPT pseudo-record', async () => {
    const outcome = await runProbe({ query: 'outpost.test', recordType: 'MX', protocol });
    expect(outcome.details.additionals).toContainEqual({
      name: 'mail.outpost.test',
      type: 'A',
      ttl: 300,
      class: 'IN',
      data: '127.0.0.3',
    });
    expect((outcome.details.additionals as { type: string }[]).some((record) => record.type === 'OPT')).toBe(false);
    expect(outcome.details.edns).toMatchObject({ version: 0 });
  });

  it('NXDOMAIN for a missing name: SOA in the authority section, a failure without assertions', async () => {
    const outcome = await runProbe({ query: 'missing.outpost.test', protocol });
    expect(outcome.details.rcode).toBe('NXDOMAIN');
    expect(outcome.details.answers).toEqual([]);
    expect(outcome.details.authorities).toEqual([
      {
        name: 'outpost.test',
        type: 'SOA',
        ttl: 60,
        class: 'IN',
        data: expect.objectContaining({ mname: 'ns1.outpost.test', serial: 2024010101 }),
      },
    ]);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.hasErrors).toBe(false);
    expect(outcome.error?.code).toBe('DNS_RCODE');
    expect(outcome.error?.message).toContain('NXDOMAIN');
    expect(outcome.error?.message).toContain(`127.0.0.1:${knot.port}`);
  });

  it('reports REFUSED for a zone the server is not authoritative for', async () => {
    const outcome = await runProbe({ query: 'elsewhere.test', protocol });
    expect(outcome.details.rcode).toBe('REFUSED');
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error).toMatchObject({ code: 'DNS_RCODE', message: expect.stringContaining('REFUSED') });
  });

  it('reports SERVFAIL for a zone the server failed to load', async () => {
    const outcome = await runProbe({ query: 'www.broken.test', protocol });
    expect(outcome.details.rcode).toBe('SERVFAIL');
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error).toMatchObject({ code: 'DNS_RCODE', message: expect.stringContaining('SERVFAIL') });
  });

  it.skipIf(!IPV6_LOOPBACK)('queries an IPv6 name server', async () => {
    const outcome = await runProbe({ query: 'outpost.test', nameServer: '::1', protocol });
    expectAnswered(outcome);
    expect(outcome.details).toMatchObject({ nameServer: '::1', address: '::1' });
    expect(outcome.details.answers).toEqual([expect.objectContaining({ data: '127.0.0.1' })]);
  });
});

describe('truncation', () => {
  it('reports a truncated UDP answer as truncated instead of retrying over TCP', async () => {
    const outcome = await runProbe({ query: 'big.outpost.test', recordType: 'TXT', protocol: 'UDP' });
    expect(outcome.hasErrors).toBe(false);
    expect(outcome.details.truncated).toBe(true);
    expect(outcome.details.flags).toMatchObject({ tc: true });
    expect(outcome.details.protocol).toBe('UDP');
  });

  it('gets the whole RRset over TCP', async () => {
    const outcome = await runProbe({ query: 'big.outpost.test', recordType: 'TXT', protocol: 'TCP' });
    expectAnswered(outcome);
    expect(outcome.details.truncated).toBe(false);
    expect(outcome.details.answers).toHaveLength(6);
    expect(outcome.details.responseBytes).toBeGreaterThan(1232);
  });
});

describe('TEXT_ANSWER rendering', () => {
  it.each([
    ['A', 'outpost.test', 'outpost.test. 300 IN A 127.0.0.1'],
    ['AAAA', 'outpost.test', 'outpost.test. 300 IN AAAA ::1'],
    ['CNAME', 'www.outpost.test', 'www.outpost.test. 300 IN CNAME outpost.test.'],
    ['MX', 'outpost.test', 'outpost.test. 300 IN MX 10 mail.outpost.test.'],
    ['TXT', 'quote.outpost.test', 'quote.outpost.test. 300 IN TXT "say \\"hi\\" \\\\ ok"'],
    [
      'SOA',
      'outpost.test',
      'outpost.test. 300 IN SOA ns1.outpost.test. hostmaster.outpost.test. 2024010101 3600 600 86400 60',
    ],
    ['HTTPS', 'outpost.test', 'outpost.test. 300 IN HTTPS 1 . alpn="h2,h3" port=8443 ipv4hint=127.0.0.1 ipv6hint=::1'],
    [
      'HTTPS',
      'svc.outpost.test',
      'svc.outpost.test. 300 IN HTTPS 16 svc.outpost.test. mandatory=alpn,port alpn="h2,h3" no-default-alpn port=443 ' +
        'ech=AEX+DQBB dohpath="/dns-query{?dns}" key65000="hi"',
    ],
  ])('%s %s', async (recordType, query, line) => {
    expect(await textOf({ query, recordType })).toBe(line);
  });

  it('puts one record per line', async () => {
    const text = await textOf({ query: 'outpost.test', recordType: 'NS' });
    expect(text.split('\n').sort()).toEqual([
      'outpost.test. 300 IN NS ns1.outpost.test.',
      'outpost.test. 300 IN NS ns2.outpost.test.',
    ]);
  });
});

describe('assertions', () => {
  it('RESPONSE_CODE: an expected NXDOMAIN passes, and then the rcode alone does not fail the run', async () => {
    const outcome = await runProbe({
      query: 'missing.outpost.test',
      assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NXDOMAIN' }],
    });
    expect(outcome.assertions).toEqual([
      { source: 'RESPONSE_CODE', property: '', comparison: 'EQUALS', target: 'NXDOMAIN', actual: 'NXDOMAIN', passed: true },
    ]);
    expect(outcome.hasFailures).toBe(false);
    expect(outcome.error).toBeNull();
  });

  it('RESPONSE_CODE: NOERROR expected, NXDOMAIN answered → failure', async () => {
    const outcome = await runProbe({
      query: 'missing.outpost.test',
      assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }],
    });
    expect(outcome.assertions[0]).toMatchObject({ actual: 'NXDOMAIN', passed: false });
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.hasErrors).toBe(false);
  });

  it('TEXT_ANSWER CONTAINS passes on a record line and fails on an address that is not there', async () => {
    const outcome = await runProbe({
      query: 'outpost.test',
      assertions: [
        { source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: 'outpost.test. 300 IN A 127.0.0.1' },
        { source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: '127.0.0.9' },
      ],
    });
    expect(outcome.assertions.map((a) => a.passed)).toEqual([true, false]);
    expect(outcome.hasFailures).toBe(true);
  });

  it('TEXT_ANSWER CONTAINS sees a long TXT record as one string across its chunks', async () => {
    const outcome = await runProbe({
      query: 'long.outpost.test',
      recordType: 'TXT',
      assertions: [{ source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: 'abbb' }],
    });
    expect(outcome.assertions[0]?.passed).toBe(true);
    expect(outcome.hasFailures).toBe(false);
  });

  it('JSON_ANSWER on an A record: $.answers[0].data passes for the right address, fails for another', async () => {
    const outcome = await runProbe({
      query: 'outpost.test',
      assertions: [
        { source: 'JSON_ANSWER', property: '$.answers[0].data', comparison: 'EQUALS', target: '127.0.0.1' },
        { source: 'JSON_ANSWER', property: '$.answers[0].data', comparison: 'EQUALS', target: '127.0.0.9' },
        { source: 'JSON_ANSWER', property: '$.flags.aa', comparison: 'EQUALS', target: 'true' },
        { source: 'JSON_ANSWER', property: 'rcode', comparison: 'EQUALS', target: 'NOERROR' },
      ],
    });
    expect(outcome.assertions.map((a) => [a.actual, a.passed])).toEqual([
      ['127.0.0.1', true],
      ['127.0.0.1', false],
      [true, true],
      ['NOERROR', true],
    ]);
    expect(outcome.hasFailures).toBe(true);
  });

  it('JSON_ANSWER on an MX record: answers[0].data.exchange and .preference', async () => {
    const outcome = await runProbe({
      query: 'outpost.test',
      recordType: 'MX',
      assertions: [
        { source: 'JSON_ANSWER', property: 'answers[0].data.exchange', comparison: 'EQUALS', target: 'mail.outpost.test' },
        { source: 'JSON_ANSWER', property: 'answers[0].data.preference', comparison: 'LESS_THAN', target: '5' },
      ],
    });
    expect(outcome.assertions.map((a) => [a.actual, a.passed])).toEqual([
      ['mail.outpost.test', true],
      [10, false],
    ]);
  });

  it('JSON_ANSWER on an HTTPS record reaches into its parameters', async () => {
    const outcome = await runProbe({
      query: 'outpost.test',
      recordType: 'HTTPS',
      assertions: [
        { source: 'JSON_ANSWER', property: '$.answers[0].data.params.alpn', comparison: 'HAS_VALUE', target: 'h3' },
        { source: 'JSON_ANSWER', property: '$.answers[0].data.params.port', comparison: 'EQUALS', target: '443' },
      ],
    });
    expect(outcome.assertions.map((a) => a.passed)).toEqual([true, false]);
  });

  it('JSON_ANSWER on a path that selects nothing fails EQUALS and passes IS_NULL', async () => {
    const outcome = await runProbe({
      query: 'missing.outpost.test',
      assertions: [
        { source: 'JSON_ANSWER', property: '$.answers[0].data', comparison: 'EQUALS', target: '127.0.0.1' },
        { source: 'JSON_ANSWER', property: '$.answers[0].data', comparison: 'IS_NULL' },
      ],
    });
    expect(outcome.assertions.map((a) => a.passed)).toEqual([false, true]);
  });

  it('RESPONSE_TIME LESS_THAN passes under a generous bound and fails under 0', async () => {
    const outcome = await runProbe({
      query: 'outpost.test',
      assertions: [
        { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '5000' },
        { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '0' },
      ],
    });
    expect(outcome.assertions.map((a) => a.passed)).toEqual([true, false]);
    expect(outcome.assertions[0]?.actual).toBe(outcome.responseTime);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error).toBeNull();
  });
});

describe('thresholds', () => {
  /** Answers correctly, `delayMs` late. */
  function slowServer(delayMs: number): Promise<FakeServer> {
    return fakeUdpServer((query, send) => {
      setTimeout(() => send(answerFor(query)), delayMs);
    });
  }

  it('a slow answer past degradedResponseTime is degraded, not failed', async () => {
    const fake = await slowServer(120);
    const outcome = await runProbe(
      { query: 'slow.test', port: fake.port },
      { degradedResponseTime: 50, maxResponseTime: 2000 },
    );
    expect(outcome.responseTime).toBeGreaterThanOrEqual(100);
    expect(outcome.isDegraded).toBe(true);
    expect(outcome.hasFailures).toBe(false);
    expect(outcome.error).toBeNull();
    expect(outcome.details.answers).toEqual([{ name: 'slow.test', type: 'A', ttl: 60, class: 'IN', data: '127.0.0.1' }]);
  });

  it('a slow answer past maxResponseTime fails with MAX_RESPONSE_TIME', async () => {
    const fake = await slowServer(120);
    const outcome = await runProbe(
      { query: 'slow.test', port: fake.port },
      { degradedResponseTime: 20, maxResponseTime: 60 },
    );
    expect(outcome.isDegraded).toBe(true);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.hasErrors).toBe(false);
    expect(outcome.error).toMatchObject({ code: 'MAX_RESPONSE_TIME', message: expect.stringContaining('60 ms') });
  });

  it('a fast answer is within the defaults (500 / 1000 ms)', async () => {
    const outcome = await runProbe({ query: 'outpost.test' });
    expect(outcome.isDegraded).toBe(false);
    expect(outcome.hasFailures).toBe(false);
  });

  it('maxResponseTime 0 fails even a loopback answer', async () => {
    const outcome = await runProbe({ query: 'outpost.test' }, { degradedResponseTime: 0, maxResponseTime: 0 });
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error?.code).toBe('MAX_RESPONSE_TIME');
  });
});

describe('errors', () => {
  it('times out against a UDP socket that never answers, within the budget', async () => {
    const silent = await fakeUdpServer(() => undefined);
    const started = performance.now();
    const outcome = await runProbe({ query: 'outpost.test', port: silent.port }, { timeoutMs: 300 });
    const elapsed = performance.now() - started;
    expect(silent.received).toHaveLength(1);
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error?.code).toBe('TIMEOUT');
    expect(outcome.error?.message).toContain(`127.0.0.1:${silent.port}`);
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1500);
  });

  it('sends one query with a random id, RD set, and EDNS0', async () => {
    const fake = await fakeUdpServer((query, send) => send(answerFor(query)));
    for (let i = 0; i < 4; i += 1) await runProbe({ query: 'outpost.test', port: fake.port, recordType: 'HTTPS' });
    expect(fake.received).toHaveLength(4);
    const ids = new Set(fake.received.map((query) => query.id));
    expect(ids.size).toBeGreaterThan(1);
    for (const query of fake.received) {
      expect(query.flag_rd).toBe(true);
      expect(query.questions).toEqual([{ name: 'outpost.test', type: 'UNKNOWN_65', class: 'IN' }]);
      expect(query.additionals).toEqual([expect.objectContaining({ type: 'OPT', udpPayloadSize: 1232 })]);
    }
  });

  it('ignores a UDP answer with the wrong id and times out', async () => {
    const fake = await fakeUdpServer((query, send) => send(answerFor(query, { id: ((query.id ?? 0) + 1) & 0xffff })));
    const outcome = await runProbe({ query: 'outpost.test', port: fake.port }, { timeoutMs: 300 });
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error?.code).toBe('TIMEOUT');
    expect(outcome.error?.message).toMatch(/ignored 1 datagram.*id/);
    expect(outcome.details.ignoredResponses).toBe(1);
    expect(outcome.details.answers).toBeUndefined();
  });

  it('ignores a UDP answer to a different question and times out', async () => {
    const fake = await fakeUdpServer((query, send) =>
      send(answerFor(query, { questions: [{ name: 'other.test', type: 'A', class: 'IN' }] })),
    );
    const outcome = await runProbe({ query: 'outpost.test', port: fake.port }, { timeoutMs: 300 });
    expect(outcome.error?.code).toBe('TIMEOUT');
    expect(outcome.error?.message).toContain('different question');
  });

  it('keeps waiting past a spoofed answer and takes the real one that follows', async () => {
    const fake = await fakeUdpServer((query, send) => {
      const spoofed = [{ type: 'A' as const, name: 'outpost.test', ttl: 1, data: '10.6.6.6' }];
      send(answerFor(query, { id: ((query.id ?? 0) + 1) & 0xffff, answers: spoofed }));
      setTimeout(() => send(answerFor(query)), 30);
    });
    const outcome = await runProbe({ query: 'outpost.test', port: fake.port }, { timeoutMs: 2000 });
    expectAnswered(outcome);
    expect(outcome.details.answers).toEqual([expect.objectContaining({ data: '127.0.0.1' })]);
    expect(outcome.details.ignoredResponses).toBe(1);
  });

  it('rejects a TCP answer with the wrong id', async () => {
    const fake = await fakeTcpServer((query, send) => send(answerFor(query, { id: ((query.id ?? 0) + 1) & 0xffff })));
    const outcome = await runProbe({ query: 'outpost.test', port: fake.port, protocol: 'TCP' });
    expect(fake.received).toHaveLength(1);
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error?.code).toBe('DNS_RESPONSE_INVALID');
    expect(outcome.error?.message).toContain('id');
  });

  it('reports a TCP server that closes before a complete answer', async () => {
    // A length prefix announcing 40 bytes, three of them, then FIN.
    const fake = await rawTcpServer((socket) => socket.once('data', () => socket.end(Buffer.from([0, 40, 1, 2, 3]))));
    const outcome = await runProbe({ query: 'outpost.test', port: fake.port, protocol: 'TCP' });
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error?.code).toBe('DNS_RESPONSE_INVALID');
    expect(outcome.error?.message).toContain(`127.0.0.1:${fake.port} closed the TCP connection after 5 bytes`);
  });

  it('reports a malformed HTTPS record as an invalid response', async () => {
    const fake = await fakeUdpServer((query, send) =>
      send(
        answerFor(query, {
          // Priority 1, root target, then an alpn parameter claiming more bytes than there are.
          // dns-packet writes UNKNOWN_<n> types as raw data; its typings only name the known ones.
          answers: [
            { type: 'UNKNOWN_65' as 'NULL', name: 'outpost.test', ttl: 60, data: Buffer.from([0, 1, 0, 0, 1, 0, 9, 2]) },
          ],
        }),
      ),
    );
    const outcome = await runProbe({ query: 'outpost.test', recordType: 'HTTPS', port: fake.port });
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error?.code).toBe('DNS_RESPONSE_INVALID');
    expect(outcome.error?.message).toContain('Malformed HTTPS record');
  });

  it('reports a refused TCP connection, naming the server', async () => {
    const port = await closedPort();
    const outcome = await runProbe({ query: 'outpost.test', port, protocol: 'TCP' });
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error?.code).toBe('CONNECTION_FAILED');
    expect(outcome.error?.message).toContain(`127.0.0.1:${port}`);
    expect(outcome.error?.message).toContain('connection refused');
    expect(outcome.details).toMatchObject({ protocol: 'TCP', port, rcode: null });
  });

  it('reports ICMP port unreachable on UDP as a refused query, naming the server', async () => {
    const port = await closedPort();
    const outcome = await runProbe({ query: 'outpost.test', port, protocol: 'UDP' }, { timeoutMs: 3000 });
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error?.code).toBe('CONNECTION_FAILED');
    expect(outcome.error?.message).toContain(`127.0.0.1:${port}`);
    expect(outcome.error?.message).toContain('UDP');
  });

  it('stops when the job is cancelled', async () => {
    const silent = await fakeUdpServer(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    const outcome = await runProbe(
      { query: 'outpost.test', port: silent.port },
      { signal: controller.signal, timeoutMs: 5000 },
    );
    expect(performance.now() - started).toBeLessThan(1000);
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error?.code).toBe('CANCELLED');
  });

  it('does not start when the job is already cancelled', async () => {
    const fake = await fakeUdpServer((query, send) => send(answerFor(query)));
    const controller = new AbortController();
    controller.abort();
    const outcome = await runProbe({ query: 'outpost.test', port: fake.port }, { signal: controller.signal });
    expect(outcome.error?.code).toBe('CANCELLED');
    expect(fake.received).toHaveLength(0);
  });
});

describe('name server selection', () => {
  it('without a name server, asks the first one the agent resolver has (here set to loopback)', async () => {
    const original = dns.getServers();
    dns.setServers([`127.0.0.1:${knot.port}`, '127.0.0.2']);
    try {
      const settings = dnsProbe.parseSettings({ request: { query: 'outpost.test' } });
      expect(settings.request.nameServer).toBeNull();
      const outcome = await dnsProbe.run(settings, { signal: new AbortController().signal, timeoutMs: 5000 });
      expectAnswered(outcome);
      expect(outcome.details).toMatchObject({ nameServer: '127.0.0.1', address: '127.0.0.1', port: knot.port });
    } finally {
      dns.setServers(original);
    }
  });

  // c-ares pointed at the Knot server itself, so resolving the name server's name stays on loopback too.
  function probeResolvingWithKnot(): ReturnType<typeof createDnsProbe> {
    return createDnsProbe({ useOsResolver: false, nameServers: [`127.0.0.1:${knot.port}`] });
  }

  it('resolves a name server given as a host name, then queries its address', async () => {
    const probe = probeResolvingWithKnot();
    const settings = probe.parseSettings({
      request: { query: 'outpost.test', recordType: 'MX', nameServer: 'ns1.outpost.test', port: knot.port },
    });
    const outcome = await probe.run(settings, { signal: new AbortController().signal, timeoutMs: 5000 });
    expectAnswered(outcome);
    expect(outcome.details).toMatchObject({ nameServer: 'ns1.outpost.test', address: '127.0.0.1', port: knot.port });
    expect(outcome.details.answers).toEqual([
      expect.objectContaining({ data: { preference: 10, exchange: 'mail.outpost.test' } }),
    ]);
  });

  it('reports a name server host name that does not resolve', async () => {
    const probe = probeResolvingWithKnot();
    const settings = probe.parseSettings({
      request: { query: 'outpost.test', nameServer: 'nope.outpost.test', port: knot.port },
    });
    const outcome = await probe.run(settings, { signal: new AbortController().signal, timeoutMs: 5000 });
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error?.code).toBe('DNS_FAILURE');
    expect(outcome.error?.message).toContain('nope.outpost.test');
    expect(outcome.details).toMatchObject({ nameServer: 'nope.outpost.test', address: null });
  });

  it('accepts a bracketed IPv6 name server', () => {
    expect(settingsFor({ query: 'outpost.test', nameServer: '[::1]' }).request.nameServer).toBe('::1');
  });
});

describe('settings', () => {
  function invalid(request: Record<string, unknown>, extra: Record<string, unknown> = {}): InvalidSettingsError {
    try {
      dnsProbe.parseSettings({ request, ...extra });
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidSettingsError);
      expect((error as InvalidSettingsError).code).toBe('INVALID_SETTINGS');
      return error as InvalidSettingsError;
    }
    throw new Error('settings were accepted');
  }

  it('fills defaults without touching the job', () => {
    const raw = { request: { query: 'outpost.test' } };
    const settings = dnsProbe.parseSettings(raw);
    expect(settings).toEqual({
      request: { query: 'outpost.test', recordType: 'A', nameServer: null, port: 53, protocol: 'UDP', assertions: [] },
      degradedResponseTime: 500,
      maxResponseTime: 1000,
    });
    expect(raw).toEqual({ request: { query: 'outpost.test' } });
    expect(dnsProbe.checkType).toBe('DNS');
  });

  it('rejects an unknown record type, naming the field and the allowed types', () => {
    const error = invalid({ query: 'outpost.test', recordType: 'PTR' });
    expect(error.message).toContain('request.recordType');
    expect(error.message).toContain('"HTTPS"');
  });

  it('rejects a query longer than 100 characters', () => {
    expect(invalid({ query: `${'a'.repeat(50)}.${'b'.repeat(50)}` }).message).toContain('request.query');
  });

  it('rejects port 0', () => {
    expect(invalid({ query: 'outpost.test', port: 0 }).message).toContain('request.port');
  });

  it('rejects a label longer than 63 characters and an empty label', () => {
    expect(invalid({ query: `${'a'.repeat(64)}.test` }).message).toMatch(/request\.query: label .* longer than 63/);
    expect(invalid({ query: 'a..test' }).message).toContain('request.query: has an empty label');
  });

  it('rejects a name server with a port in it', () => {
    expect(invalid({ query: 'outpost.test', nameServer: '127.0.0.1:53' }).message).toContain('request.nameServer');
  });

  it('rejects an assertion source DNS monitors do not have', () => {
    const error = invalid({
      query: 'outpost.test',
      assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
    });
    expect(error.message).toContain('request.assertions[0].source');
  });

  it('rejects a maxResponseTime over the 5000 ms cap', () => {
    expect(invalid({ query: 'outpost.test' }, { maxResponseTime: 5001 }).message).toContain('maxResponseTime');
  });

  it('converts an internationalized name to punycode on the wire', async () => {
    const fake = await fakeUdpServer((query, send) => send(answerFor(query)));
    const outcome = await runProbe({ query: 'bücher.test', port: fake.port });
    expectAnswered(outcome);
    expect(fake.received[0]?.questions?.[0]?.name).toBe('xn--bcher-kva.test');
  });
});
