/**
 * The DNS monitor: one query, to one name server, over UDP or TCP, sent the
 * way a stub resolver sends it (random id, RD set, EDNS0 with a 1232-byte UDP
 * payload). Nothing is cached and nothing is retried: a truncated UDP answer
 * is reported as truncated rather than silently re-asked over TCP, because
 * the monitor measures the path the user chose.
 *
 * Packets are encoded and decoded by dns-packet; HTTPS/SVCB record data,
 * which dns-packet does not know, by ./dns-https-record.ts.
 *
 * responseTime runs from the moment the query starts going out to the moment
 * the whole answer is in: for UDP from the send, for TCP from the start of the
 * connection (a TCP query cannot be sent before the handshake, and the
 * handshake is part of what a TCP lookup costs; details.tcpConnect has it on
 * its own). Resolving a name server given as a host name is not counted.
 */
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import dns from 'node:dns';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { domainToASCII } from 'node:url';
import dnsPacket from 'dns-packet';
import { ConnectError, DnsError, DnsResponseError, InvalidSettingsError, ProbeTimeoutError } from '../../errors/index.js';
import type { ResultError } from '../../protocol/agent-api.js';
import { DNS_RESPONSE_TIME_CAP_MS, DnsSettingsSchema } from '../../protocol/dns-settings.js';
import type { DNS_RECORD_TYPES } from '../../protocol/dns-settings.js';
import { evaluateAssertions } from './assertions.js';
import { withResponseTime } from './response-time-verdict.js';
import type { AssertionInput } from './assertions.js';
import { HTTPS_TYPE, SVCB_TYPE, decodeSvcbRdata, formatSvcbRecord } from './dns-https-record.js';
import { assertDestinationAllowed } from './destination-guard.js';
import { asIpLiteral, resolveHost } from './host-resolver.js';
import type { HostResolverOptions } from './host-resolver.js';
import { endpoint } from './http-connector.js';
import { queryJsonPath } from './json-path.js';
import { erroredOutcome, type Probe, type ProbeContext, type ProbeOutcome } from './probe.js';
import { budgetMs, describeRunFailure, roundMs, startRunDeadline } from './probe-failure.js';
import { settingsParser } from './settings-parser.js';

export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];
export type DnsProtocol = 'UDP' | 'TCP';

/** Advertised EDNS0 UDP payload size: the DNS Flag Day 2020 value, safe from IP fragmentation. */
export const EDNS_UDP_PAYLOAD_SIZE = 1232;

/** DnsSettings after defaults: every optional field is present, an unset name server is null. */
export interface DnsSettingsParsed {
  request: {
    query: string;
    recordType: DnsRecordType;
    /** An IP address or a host name; null: the first server of the agent's resolver configuration. */
    nameServer: string | null;
    port: number;
    protocol: DnsProtocol;
    assertions: AssertionInput[];
  };
  degradedResponseTime: number;
  maxResponseTime: number;
}

/** One resource record as results carry it. Names have no trailing dot; the root is ".". */
export interface DnsRecord {
  name: string;
  type: string;
  ttl: number;
  class: string;
  data: unknown;
}

export interface DnsFlags {
  aa: boolean;
  tc: boolean;
  rd: boolean;
  ra: boolean;
  ad: boolean;
  cd: boolean;
}

/** What JSON_ANSWER paths are evaluated against. */
export interface DnsAnswerDocument {
  rcode: string;
  answers: DnsRecord[];
  authorities: DnsRecord[];
  additionals: DnsRecord[];
  flags: DnsFlags;
}

/** How a name server given as a host name is resolved; an agent-wide choice (USE_OS_DNS_RESOLVER), as for TCP. */
export type DnsProbeOptions = HostResolverOptions;

export function createDnsProbe(options: DnsProbeOptions): Probe<DnsSettingsParsed> {
  const resolver: HostResolverOptions = { ...options };
  return {
    checkType: 'DNS',
    parseSettings: parseDnsSettings,
    run: (settings, context) => runDnsProbe(settings, context, resolver),
  };
}

/** c-ares for name server host names: what the agent uses unless USE_OS_DNS_RESOLVER asks for getaddrinfo. */
export const dnsProbe: Probe<DnsSettingsParsed> = createDnsProbe({ useOsResolver: false });

// ---------------------------------------------------------------- settings

const parseSchema = settingsParser(DnsSettingsSchema, 'DNS monitor');

export function parseDnsSettings(raw: unknown): DnsSettingsParsed {
  const value = parseSchema(raw);
  const problems: string[] = [];
  const queryProblem = checkQueryName(value.request.query);
  if (queryProblem !== null) problems.push(`request.query: ${queryProblem}`);
  const nameServer = normalizeNameServer(value.request.nameServer ?? null);
  if (nameServer === undefined) {
    problems.push('request.nameServer: must be an IP address or a host name, without a port (that goes in request.port)');
  }
  if (problems.length > 0) throw new InvalidSettingsError(`Invalid DNS monitor settings: ${problems.join('; ')}`);
  // Value.Default filled every optional field that has a default, which is all of them but nameServer.
  const request = value.request as Omit<DnsSettingsParsed['request'], 'nameServer'>;
  return {
    request: {
      query: request.query,
      recordType: request.recordType,
      nameServer: nameServer ?? null,
      port: request.port,
      protocol: request.protocol,
      assertions: request.assertions,
    },
    degradedResponseTime: value.degradedResponseTime as number,
    maxResponseTime: value.maxResponseTime as number,
  };
}

/** Why `query` cannot go on the wire as a name, or null when it can. */
function checkQueryName(query: string): string | null {
  if (/[\s\\]/.test(query)) return 'must not contain whitespace or backslashes';
  const ascii = toWireName(query);
  if (ascii === null) return 'is not a valid internationalized domain name';
  if (ascii === '.') return null;
  const labels = ascii.replace(/\.$/, '').split('.');
  if (labels.some((label) => label.length === 0)) return 'has an empty label (two dots in a row, or a leading dot)';
  const long = labels.find((label) => label.length > 63);
  if (long !== undefined) return `label "${long.slice(0, 20)}…" is longer than 63 characters`;
  // Wire length: a length byte per label plus the root byte.
  const wireLength = labels.reduce((total, label) => total + label.length + 1, 1);
  if (wireLength > 255) return `is ${wireLength} bytes on the wire, more than 255`;
  return null;
}

/** The name as sent: ASCII, IDNs in punycode; null when an IDN cannot be converted. */
function toWireName(query: string): string | null {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(query)) return query;
  const ascii = domainToASCII(query);
  return ascii === '' ? null : ascii;
}

/** LDH labels (underscores tolerated) of 1–63 characters, 253 in all, an optional trailing dot. */
const HOST_NAME = /^(?=.{1,253}\.?$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/** null stays null; an IP (brackets dropped) or host name is returned as is; undefined when it is neither. */
function normalizeNameServer(nameServer: string | null): string | null | undefined {
  if (nameServer === null) return null;
  const literal = asIpLiteral(nameServer);
  if (literal !== null) return literal;
  return HOST_NAME.test(nameServer) ? nameServer : undefined;
}

// ---------------------------------------------------------------- wire types

/** A decoded record, as dns-packet returns it (its typings cover less than it decodes). */
interface WireRecord {
  name: string;
  type: string;
  ttl?: number;
  class?: string;
  data?: unknown;
  udpPayloadSize?: number;
  extendedRcode?: number;
  ednsVersion?: number;
  flag_do?: boolean;
}

interface WirePacket {
  id: number;
  type: 'query' | 'response';
  flags: number;
  opcode: string;
  flag_aa: boolean;
  flag_tc: boolean;
  flag_rd: boolean;
  flag_ra: boolean;
  flag_ad: boolean;
  flag_cd: boolean;
  questions: { name: string; type: string; class: string }[];
  answers: WireRecord[];
  authorities: WireRecord[];
  additionals: WireRecord[];
}

/** dns-packet's spelling of a query type; it only knows HTTPS by number. */
function wireType(recordType: DnsRecordType): string {
  return recordType === 'HTTPS' ? `UNKNOWN_${HTTPS_TYPE}` : recordType;
}

/** The type's mnemonic, RFC 3597 TYPEnn for ones without. */
function typeName(wire: string): string {
  const unknown = /^UNKNOWN_(\d+)$/.exec(wire);
  if (unknown === null) return wire;
  const code = Number(unknown[1]);
  if (code === HTTPS_TYPE) return 'HTTPS';
  if (code === SVCB_TYPE) return 'SVCB';
  return `TYPE${code}`;
}

function className(wire: string | undefined): string {
  if (wire === undefined) return 'IN';
  const unknown = /^UNKNOWN_(\d+)$/.exec(wire);
  return unknown === null ? wire : `CLASS${unknown[1]}`;
}

/** RCODE mnemonics (RFC 1035, 2136, 6891, 7873, 8490). */
const RCODES: ReadonlyMap<number, string> = new Map([
  [0, 'NOERROR'],
  [1, 'FORMERR'],
  [2, 'SERVFAIL'],
  [3, 'NXDOMAIN'],
  [4, 'NOTIMP'],
  [5, 'REFUSED'],
  [6, 'YXDOMAIN'],
  [7, 'YXRRSET'],
  [8, 'NXRRSET'],
  [9, 'NOTAUTH'],
  [10, 'NOTZONE'],
  [11, 'DSOTYPENI'],
  [16, 'BADVERS'],
  [23, 'BADCOOKIE'],
]);

function rcodeName(code: number): string {
  return RCODES.get(code) ?? `RCODE${code}`;
}

// ---------------------------------------------------------------- run

/** Where the query goes and what became of it; filled in as it happens, so a failure keeps what was known. */
interface Exchange {
  query: string;
  recordType: DnsRecordType;
  protocol: DnsProtocol;
  /** As configured, or as the agent's resolver configuration names it. */
  nameServer: string | null;
  /** The IP actually queried. */
  address: string | null;
  port: number;
  id: number;
  sentAt: number | null;
  tcpConnect: number | null;
  /** UDP datagrams that arrived but did not answer the query (wrong id, wrong question, not DNS). */
  ignored: string[];
}

interface Received {
  packet: WirePacket;
  size: number;
  receivedAt: number;
}

async function runDnsProbe(
  settings: DnsSettingsParsed,
  context: ProbeContext,
  resolver: HostResolverOptions,
): Promise<ProbeOutcome> {
  const startedAt = performance.now();
  const timeoutMs = budgetMs(context.timeoutMs, DNS_RESPONSE_TIME_CAP_MS);
  const { request } = settings;
  const exchange: Exchange = {
    query: request.query,
    recordType: request.recordType,
    protocol: request.protocol,
    nameServer: request.nameServer,
    address: null,
    port: request.port,
    id: randomInt(0, 0x10000),
    sentAt: null,
    tcpConnect: null,
    ignored: [],
  };
  const deadline = startRunDeadline(
    context.signal,
    timeoutMs,
    () => new ProbeTimeoutError(timeoutMessage(exchange, timeoutMs)),
  );
  const signal = deadline.signal;
  try {
    // The agent's own resolver is its operator's choice; a name server the check names is the check's.
    const named = exchange.nameServer !== null;
    await chooseServer(exchange, resolver, signal);
    if (named) assertDestinationAllowed(context.destinations, exchange.address ?? '', endpoint(request.nameServer ?? '', exchange.port));
    const query = encodeQuery(exchange);
    const received =
      exchange.protocol === 'UDP'
        ? await queryOverUdp(exchange, query, signal)
        : await queryOverTcp(exchange, query, signal);
    return judge(settings, exchange, received);
  } catch (error) {
    const failure = describeRunFailure(error, deadline.signals, (cause) => {
      const reason = cause instanceof Error ? cause.message : String(cause);
      return new DnsResponseError(`Querying ${serverLabel(exchange)} over ${exchange.protocol} failed: ${reason}`).toJSON();
    });
    return failed(failure, exchange, performance.now() - (exchange.sentAt ?? startedAt));
  } finally {
    deadline.end();
  }
}

/** Fills in nameServer, address and port: from the settings, or the agent's own resolver configuration. */
async function chooseServer(exchange: Exchange, resolver: HostResolverOptions, signal: AbortSignal): Promise<void> {
  if (exchange.nameServer === null) {
    const configured = dns.getServers()[0];
    if (configured === undefined) {
      throw new DnsError('No name server is set on the monitor and the agent has no resolver configured');
    }
    const { host, port } = splitServer(configured);
    exchange.nameServer = host;
    // A port in the resolver configuration (rare: only dns.setServers can put one there) wins over the default.
    if (port !== null) exchange.port = port;
  }
  // IPv4 first for a host name: an agent without IPv6 connectivity is common, a v6-only name server is not.
  const resolved = await resolveHost(exchange.nameServer, 'IPv4', resolver, signal);
  exchange.address = resolved.address;
}

/** "1.2.3.4", "1.2.3.4:5353", "::1", "[::1]:5353" (dns.getServers() formats) → host and optional port. */
function splitServer(server: string): { host: string; port: number | null } {
  const bracketed = /^\[(.+)\]:(\d+)$/.exec(server);
  if (bracketed) return { host: bracketed[1] ?? server, port: Number(bracketed[2]) };
  if (net.isIP(server) !== 0) return { host: server, port: null };
  const withPort = /^(.+):(\d+)$/.exec(server);
  if (withPort) return { host: withPort[1] ?? server, port: Number(withPort[2]) };
  return { host: server, port: null };
}

function encodeQuery(exchange: Exchange): Buffer {
  const name = toWireName(exchange.query) ?? exchange.query;
  return dnsPacket.encode({
    type: 'query',
    id: exchange.id,
    flags: dnsPacket.RECURSION_DESIRED,
    // dns-packet spells types it has no name for UNKNOWN_<n>; its typings only list named ones.
    questions: [{ type: wireType(exchange.recordType) as dnsPacket.RecordType, name, class: 'IN' }],
    additionals: [
      {
        type: 'OPT',
        name: '.',
        udpPayloadSize: EDNS_UDP_PAYLOAD_SIZE,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: 0,
        flag_do: false,
        options: [],
      },
    ],
  });
}

/**
 * Why `message` is not the answer to the query sent, or the decoded answer.
 * A response without a question section is accepted only for an error rcode:
 * some servers drop it from FORMERR/NOTIMP/REFUSED answers.
 */
function matchResponse(message: Buffer, exchange: Exchange): WirePacket | string {
  let packet: WirePacket;
  try {
    packet = dnsPacket.decode(message) as unknown as WirePacket;
  } catch (error) {
    return `a malformed packet (${error instanceof Error ? error.message : String(error)})`;
  }
  if (packet.type !== 'response') return `a packet that is not a response (id ${packet.id})`;
  if (packet.id !== exchange.id) return `a response with id ${packet.id} instead of ${exchange.id}`;
  if (packet.opcode !== 'QUERY') return `a response with opcode ${packet.opcode}`;
  const question = packet.questions[0];
  if (packet.questions.length === 0 && (packet.flags & 0xf) !== 0) return packet;
  const expected = toWireName(exchange.query) ?? exchange.query;
  if (
    packet.questions.length !== 1 ||
    question === undefined ||
    canonicalName(question.name) !== canonicalName(expected) ||
    question.type !== wireType(exchange.recordType) ||
    question.class !== 'IN'
  ) {
    const asked = packet.questions.map((q) => `${q.name} ${q.class} ${typeName(q.type)}`).join(', ') || 'nothing';
    return `a response to a different question (${asked})`;
  }
  return packet;
}

function canonicalName(name: string): string {
  const trimmed = name.replace(/\.$/, '').toLowerCase();
  return trimmed === '' ? '.' : trimmed;
}

/** "[::1]:53" or "127.0.0.1:53". */
function serverLabel(exchange: Exchange): string {
  const host = exchange.address ?? exchange.nameServer ?? '(no name server)';
  const label = endpoint(host, exchange.port);
  return exchange.nameServer !== null && exchange.nameServer !== host ? `${exchange.nameServer} (${label})` : label;
}

async function queryOverUdp(exchange: Exchange, query: Buffer, signal: AbortSignal): Promise<Received> {
  signal.throwIfAborted();
  const address = exchange.address ?? '';
  // Connected, so the kernel drops datagrams from anyone else and reports ICMP port unreachable as ECONNREFUSED.
  const socket = dgram.createSocket(net.isIPv6(address) ? 'udp6' : 'udp4');
  let onAbort = (): void => undefined;
  try {
    return await new Promise<Received>((resolve, reject) => {
      onAbort = () => reject(abortReason(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      socket.on('error', (error) => reject(socketError(error, exchange, true)));
      socket.on('message', (message) => {
        const receivedAt = performance.now();
        const match = matchResponse(message, exchange);
        // Not ours: a late answer to someone else's query, or spoofing. Keep waiting, as resolvers do.
        if (typeof match === 'string') exchange.ignored.push(match);
        else resolve({ packet: match, size: message.length, receivedAt });
      });
      socket.connect(exchange.port, address, (error?: Error) => {
        if (error) return reject(socketError(error, exchange, false));
        exchange.sentAt = performance.now();
        socket.send(query, (sendError) => {
          if (sendError) reject(socketError(sendError, exchange, true));
        });
      });
    });
  } finally {
    signal.removeEventListener('abort', onAbort);
    try {
      socket.close();
    } catch {
      // Already closed by an error; nothing left to release.
    }
  }
}

async function queryOverTcp(exchange: Exchange, query: Buffer, signal: AbortSignal): Promise<Received> {
  signal.throwIfAborted();
  exchange.sentAt = performance.now();
  const socket = net.connect({ host: exchange.address ?? '', port: exchange.port, noDelay: true });
  let onAbort = (): void => undefined;
  try {
    return await new Promise<Received>((resolve, reject) => {
      let connected = false;
      let buffered = Buffer.alloc(0);
      onAbort = () => reject(abortReason(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      socket.on('connect', () => {
        connected = true;
        exchange.tcpConnect = performance.now() - (exchange.sentAt ?? 0);
        // RFC 1035 §4.2.2: each message is preceded by its length as two bytes.
        const length = Buffer.alloc(2);
        length.writeUInt16BE(query.length);
        socket.write(Buffer.concat([length, query]));
      });
      socket.on('data', (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        if (buffered.length < 2) return;
        const size = buffered.readUInt16BE(0);
        if (buffered.length < 2 + size) return;
        const receivedAt = performance.now();
        const match = matchResponse(buffered.subarray(2, 2 + size), exchange);
        // One query on a connection of its own: anything else coming back is a broken server, not a stray packet.
        if (typeof match === 'string') {
          reject(new DnsResponseError(`${serverLabel(exchange)} answered over TCP with ${match}`));
        } else {
          resolve({ packet: match, size, receivedAt });
        }
      });
      socket.on('end', () => {
        reject(
          new DnsResponseError(
            `${serverLabel(exchange)} closed the TCP connection after ${buffered.length} bytes, before a complete answer`,
          ),
        );
      });
      socket.on('error', (error) => reject(socketError(error, exchange, connected)));
    });
  } finally {
    signal.removeEventListener('abort', onAbort);
    socket.destroy();
  }
}

function socketError(error: Error, exchange: Exchange, connected: boolean): ConnectError | DnsResponseError {
  const code = (error as Error & { code?: unknown }).code;
  const server = serverLabel(exchange);
  const reason = typeof code === 'string' ? code : error.message;
  if (exchange.protocol === 'UDP') {
    if (code === 'ECONNREFUSED') {
      return new ConnectError(`${server} refused the query over UDP (ICMP port unreachable: nothing listens there)`, {
        cause: error,
      });
    }
    return new ConnectError(`Could not query ${server} over UDP: ${reason}`, { cause: error });
  }
  if (!connected) {
    const what = code === 'ECONNREFUSED' ? 'connection refused' : reason;
    return new ConnectError(`Could not connect to ${server} over TCP: ${what}`, { cause: error });
  }
  return new DnsResponseError(`The TCP connection to ${server} failed before a complete answer: ${reason}`, {
    cause: error,
  });
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(String(reason));
}

function timeoutMessage(exchange: Exchange, timeoutMs: number): string {
  if (exchange.address === null) {
    return `Resolving the name server ${exchange.nameServer ?? ''} took longer than ${timeoutMs} ms`;
  }
  const reasons = [...new Set(exchange.ignored)].slice(0, 3).join('; ');
  const ignored =
    exchange.ignored.length === 0
      ? ''
      : `; ignored ${exchange.ignored.length} datagram(s) that did not answer the query: ${reasons}`;
  return `No answer from ${serverLabel(exchange)} over ${exchange.protocol} within ${timeoutMs} ms${ignored}`;
}

// ---------------------------------------------------------------- judging

function judge(settings: DnsSettingsParsed, exchange: Exchange, received: Received): ProbeOutcome {
  const responseTime = roundMs(received.receivedAt - (exchange.sentAt ?? received.receivedAt));
  const { packet } = received;
  const opt = packet.additionals.find((record) => record.type === 'OPT');
  // With EDNS0 the rcode is 12 bits: 8 from the OPT record on top of the header's 4.
  const rcode = rcodeName(((opt?.extendedRcode ?? 0) << 4) | (packet.flags & 0xf));
  const document: DnsAnswerDocument = {
    rcode,
    answers: packet.answers.map(toRecord),
    authorities: packet.authorities.map(toRecord),
    additionals: packet.additionals.filter((record) => record.type !== 'OPT').map(toRecord),
    flags: {
      aa: packet.flag_aa,
      tc: packet.flag_tc,
      rd: packet.flag_rd,
      ra: packet.flag_ra,
      ad: packet.flag_ad,
      cd: packet.flag_cd,
    },
  };
  const text = document.answers.map(toText).join('\n');
  const assertions = evaluateAssertions(settings.request.assertions, (source, property) => {
    switch (source) {
      case 'RESPONSE_TIME':
        return responseTime;
      case 'RESPONSE_CODE':
        return rcode;
      case 'TEXT_ANSWER':
        return text;
      case 'JSON_ANSWER':
        return queryJsonPath(document, property);
      default:
        return undefined;
    }
  });
  let error: ResultError | null = null;
  let hasFailures = assertions.some((result) => !result.passed);
  // Without assertions the rcode is the only verdict there is; with assertions
  // the user has said what "good" means, an expected NXDOMAIN included.
  if (assertions.length === 0 && rcode !== 'NOERROR') {
    hasFailures = true;
    const question = `${exchange.query} ${exchange.recordType}`;
    error = {
      code: 'DNS_RCODE',
      message: `${serverLabel(exchange)} answered ${rcode} to ${question} over ${exchange.protocol}`,
    };
  }
  return {
    responseTime,
    ...withResponseTime(responseTime, settings, { hasFailures, isDegraded: false, error }),
    hasErrors: false,
    timings: timings(responseTime),
    statusCode: null,
    assertions,
    details: {
      ...document,
      ...exchangeDetails(exchange),
      truncated: packet.flag_tc,
      responseBytes: received.size,
      edns:
        opt === undefined
          ? null
          : { version: opt.ednsVersion ?? 0, udpPayloadSize: opt.udpPayloadSize ?? 0, do: opt.flag_do ?? false },
    },
  };
}

function failed(error: ResultError, exchange: Exchange, elapsed: number): ProbeOutcome {
  return erroredOutcome(error, roundMs(elapsed), null, { ...exchangeDetails(exchange), rcode: null, truncated: false });
}

function exchangeDetails(exchange: Exchange): Record<string, unknown> {
  return {
    query: exchange.query,
    recordType: exchange.recordType,
    nameServer: exchange.nameServer,
    address: exchange.address,
    port: exchange.port,
    protocol: exchange.protocol,
    id: exchange.id,
    tcpConnect: exchange.tcpConnect === null ? null : roundMs(exchange.tcpConnect),
    ignoredResponses: exchange.ignored.length,
  };
}

function timings(total: number): ProbeOutcome['timings'] {
  return { dns: null, tcp: null, tls: null, firstByte: null, download: null, total };
}

// ---------------------------------------------------------------- records

function toRecord(record: WireRecord): DnsRecord {
  const type = typeName(record.type);
  return {
    name: record.name,
    type,
    ttl: record.ttl ?? 0,
    class: className(record.class),
    data: recordData(type, record.data),
  };
}

/** Per type: A/AAAA an address, CNAME/NS a name, MX/SOA/HTTPS objects, TXT one string, RFC 3597 hex otherwise. */
function recordData(type: string, data: unknown): unknown {
  switch (type) {
    case 'A':
    case 'AAAA':
    case 'CNAME':
    case 'NS':
    case 'PTR':
    case 'DNAME':
      return data;
    case 'MX': {
      const mx = data as { preference?: number; exchange: string };
      return { preference: mx.preference ?? 0, exchange: mx.exchange };
    }
    case 'SOA': {
      const soa = data as Record<string, unknown>;
      return {
        mname: soa.mname,
        rname: soa.rname,
        serial: soa.serial,
        refresh: soa.refresh,
        retry: soa.retry,
        expire: soa.expire,
        minimum: soa.minimum,
      };
    }
    case 'TXT':
    case 'SPF':
      // One string of all the chunks: a long TXT record is cut into 255-byte pieces only because the wire needs it.
      return Buffer.concat(textChunks(data)).toString('utf8');
    case 'HTTPS':
    case 'SVCB':
      return decodeSvcbRdata(asBuffer(data), type);
    default:
      if (Buffer.isBuffer(data)) return `\\# ${data.length}${data.length > 0 ? ` ${data.toString('hex')}` : ''}`;
      return jsonSafe(data);
  }
}

function textChunks(data: unknown): Buffer[] {
  const chunks = Array.isArray(data) ? (data as unknown[]) : [data];
  return chunks.map((chunk) => (Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), 'utf8')));
}

function asBuffer(data: unknown): Buffer {
  if (Buffer.isBuffer(data)) return data;
  throw new DnsResponseError('A record that should carry raw data was decoded as something else');
}

/** Buffers (keys, digests…) become hex, so details stay plain JSON. */
function jsonSafe(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return value.toString('hex');
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, jsonSafe(entry)]));
  }
  return value;
}

/** Zone-file form, one line: `outpost.test. 300 IN MX 10 mail.outpost.test.` */
function toText(record: DnsRecord): string {
  return `${fqdn(record.name)} ${record.ttl} ${record.class} ${record.type} ${rdataText(record)}`;
}

function rdataText(record: DnsRecord): string {
  const { data } = record;
  switch (record.type) {
    case 'CNAME':
    case 'NS':
    case 'PTR':
    case 'DNAME':
      return fqdn(String(data));
    case 'MX': {
      const mx = data as { preference: number; exchange: string };
      return `${mx.preference} ${fqdn(mx.exchange)}`;
    }
    case 'SOA': {
      const soa = data as Record<'mname' | 'rname', string> &
        Record<'serial' | 'refresh' | 'retry' | 'expire' | 'minimum', number>;
      const numbers = [soa.serial, soa.refresh, soa.retry, soa.expire, soa.minimum].join(' ');
      return `${fqdn(soa.mname)} ${fqdn(soa.rname)} ${numbers}`;
    }
    case 'TXT':
    case 'SPF':
      return quoteText(String(data));
    case 'HTTPS':
    case 'SVCB':
      return formatSvcbRecord(data as ReturnType<typeof decodeSvcbRdata>);
    default:
      if (typeof data === 'string') return data;
      if (typeof data === 'object' && data !== null) {
        return Object.values(data)
          .map((value) => (typeof value === 'string' ? value : JSON.stringify(value)))
          .join(' ');
      }
      return JSON.stringify(data) ?? '';
  }
}

/** A zone-file character-string: quotes and backslashes escaped, control characters as \DDD, other text as it is. */
function quoteText(text: string): string {
  // eslint-disable-next-line no-control-regex
  const escaped = text.replace(/[\\"\x00-\x1f\x7f]/g, (c) =>
    c === '\\' || c === '"' ? `\\${c}` : `\\${String(c.charCodeAt(0)).padStart(3, '0')}`,
  );
  return `"${escaped}"`;
}

function fqdn(name: string): string {
  return name === '.' || name.endsWith('.') ? name : `${name}.`;
}
