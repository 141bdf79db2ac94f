/**
 * Opens a probe's connection phase by phase, so a probe can report how long
 * name resolution, the TCP handshake and the TLS handshake each took, and say
 * precisely which one failed.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import type { DestinationPolicy } from '../../net-policy/index.js';
import { assertDestinationAllowed } from './destination-guard.js';
import { resolveHost, type ResolvedAddress } from './host-resolver.js';
import { ConnectError, TlsError } from '../../errors/index.js';

export type IpFamily = 'IPv4' | 'IPv6';

/** Filled in as the connection progresses, so a failed attempt still shows what it got through. */
export interface ConnectionPhases {
  /** Milliseconds; 0 when the host is an IP literal and nothing was looked up. Set on failure too. */
  dns: number | null;
  tcp: number | null;
  /** null for plain HTTP. */
  tls: number | null;
  remoteAddress: string | null;
  remotePort: number | null;
  /** The server's certificate, once the handshake got that far (even when it is then refused); null for plain HTTP. */
  certificate: PeerCertificateSummary | null;
}

/** What a monitor reports of the certificate a server presented. */
export interface PeerCertificateSummary {
  /** Distinguished names as `CN=example.com, O=Example`. */
  subject: string;
  issuer: string;
  validFrom: string;
  validTo: string;
  /** Whole days from the handshake to validTo; negative once expired. */
  daysRemaining: number;
  fingerprint256: string;
}

export interface TimedConnectorOptions {
  ipFamily: IpFamily;
  skipSSL: boolean;
  /** Aborting it abandons the lookup and destroys any socket being opened. */
  signal: AbortSignal;
  /** Checked on the resolved address before the TCP handshake; undefined: anywhere. */
  destinations?: DestinationPolicy | undefined;
}

/** Where to connect: a URL's hostname (IPv6 literals may keep their brackets), protocol and port ('' for the default). */
export interface ConnectTarget {
  hostname: string;
  protocol: string;
  port: string;
}

export interface TimedConnector {
  /** Resolves with the connected (for https:, TLS-established) socket. */
  open(target: ConnectTarget): Promise<net.Socket>;
  readonly phases: ConnectionPhases;
}

/**
 * One connector per connection: the probe opens a fresh connection per run
 * (and per redirect hop), and the phases belong to that connection only.
 */
export function createTimedConnector(options: TimedConnectorOptions): TimedConnector {
  const phases: ConnectionPhases = { dns: null, tcp: null, tls: null, remoteAddress: null, remotePort: null, certificate: null };
  return { open: (target) => open(target, options, phases), phases };
}

async function open(target: ConnectTarget, options: TimedConnectorOptions, phases: ConnectionPhases): Promise<net.Socket> {
  const secure = target.protocol === 'https:';
  const port = target.port === '' ? (secure ? 443 : 80) : Number(target.port);
  const hostname = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;

  phases.remotePort = port;
  let started = performance.now();
  let resolved: ResolvedAddress;
  const literal = net.isIP(hostname);
  if (literal === 4 || literal === 6) {
    resolved = { address: hostname, family: literal };
    phases.dns = 0;
  } else {
    try {
      // URL monitors resolve as browsers do: through the OS resolver (hosts file, search domains).
      resolved = await resolveHost(hostname, options.ipFamily, { useOsResolver: true }, options.signal);
    } finally {
      // Kept on failure too: a resolver that takes 5 s to say "no" is worth seeing.
      phases.dns = performance.now() - started;
    }
  }
  phases.remoteAddress = resolved.address;
  assertDestinationAllowed(options.destinations, resolved.address, endpoint(hostname, port));

  started = performance.now();
  const socket = await connectTcp(resolved.address, port, resolved.family, options.signal);
  phases.tcp = performance.now() - started;
  if (!secure) return socket;

  started = performance.now();
  const tlsSocket = await handshake(socket, hostname, port, options, (certificate) => {
    phases.certificate = certificate;
  });
  phases.tls = performance.now() - started;
  return tlsSocket;
}

function connectTcp(address: string, port: number, family: 4 | 6, signal: AbortSignal): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(toError(signal.reason));
      return;
    }
    const socket = net.connect({ host: address, port, family, noDelay: true });
    const settle = (): void => {
      signal.removeEventListener('abort', onAbort);
      socket.off('error', onError);
      socket.off('connect', onConnect);
    };
    const onAbort = (): void => {
      settle();
      socket.destroy();
      reject(toError(signal.reason));
    };
    const onError = (error: Error): void => {
      settle();
      socket.destroy();
      reject(new ConnectError(describeConnectFailure(address, port, error), { cause: error }));
    };
    const onConnect = (): void => {
      settle();
      resolve(socket);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('error', onError);
    socket.once('connect', onConnect);
  });
}

function describeConnectFailure(address: string, port: number, error: Error): string {
  const where = endpoint(address, port);
  switch (errnoCode(error)) {
    case 'ECONNREFUSED':
      return `Connection refused by ${where}`;
    case 'ECONNRESET':
      return `Connection reset by ${where}`;
    case 'ETIMEDOUT':
      return `Connection to ${where} timed out`;
    case 'EHOSTUNREACH':
      return `Host unreachable: ${where}`;
    case 'ENETUNREACH':
      return `Network unreachable for ${where}`;
    case 'EADDRNOTAVAIL':
      return `Cannot connect to ${where}: address not available on this machine`;
    default:
      return `Could not connect to ${where}: ${error.message}`;
  }
}

function handshake(
  socket: net.Socket,
  hostname: string,
  port: number,
  options: TimedConnectorOptions,
  onCertificate: (certificate: PeerCertificateSummary) => void,
): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const { signal } = options;
    const isLiteral = net.isIP(hostname) !== 0;
    const secure = tls.connect({
      socket,
      // host drives the certificate identity check; SNI must not carry an IP (RFC 6066).
      host: hostname,
      ...(isLiteral ? {} : { servername: hostname }),
      rejectUnauthorized: !options.skipSSL,
      ALPNProtocols: ['http/1.1'],
    });
    const settle = (): void => {
      signal.removeEventListener('abort', onAbort);
      secure.off('error', onError);
      secure.off('secureConnect', onSecure);
      secure.off('close', onClose);
    };
    const fail = (error: Error): void => {
      settle();
      secure.destroy();
      socket.destroy();
      reject(error);
    };
    const onAbort = (): void => fail(toError(signal.reason));
    const onError = (error: Error): void =>
      fail(new TlsError(`TLS handshake with ${endpoint(hostname, port)} failed: ${describeTlsFailure(error)}`, { cause: error }));
    const onClose = (): void =>
      fail(new TlsError(`TLS handshake with ${endpoint(hostname, port)} failed: the server closed the connection`));
    let seen = false;
    const capture = (): void => {
      if (seen) return;
      seen = true;
      const summary = summarize(secure.getPeerCertificate());
      if (summary) onCertificate(summary);
    };
    const onSecure = (): void => {
      capture();
      settle();
      resolve(secure);
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    // Node emits 'secure' when the handshake is done, before it verifies the
    // certificate and destroys the socket of a refused one: ahead of its own
    // listener, the certificate of an expired or untrusted server can still be
    // read, which is when it matters most. 'secureConnect' covers the rest.
    secure.prependOnceListener('secure', capture);
    secure.once('error', onError);
    secure.once('close', onClose);
    secure.once('secureConnect', onSecure);
  });
}

const DAY_MS = 86_400_000;

function summarize(certificate: tls.PeerCertificate | null | undefined): PeerCertificateSummary | undefined {
  // An empty object when the server sent none (or the socket is gone).
  if (!certificate?.valid_to) return undefined;
  const validTo = new Date(certificate.valid_to);
  const validFrom = new Date(certificate.valid_from);
  if (Number.isNaN(validTo.getTime())) return undefined;
  return {
    subject: distinguishedName(certificate.subject),
    issuer: distinguishedName(certificate.issuer),
    validFrom: Number.isNaN(validFrom.getTime()) ? certificate.valid_from : validFrom.toISOString(),
    validTo: validTo.toISOString(),
    daysRemaining: Math.floor((validTo.getTime() - Date.now()) / DAY_MS),
    fingerprint256: certificate.fingerprint256,
  };
}

/** `CN=example.com, O=Example`: each attribute in the order the certificate has it, repeated ones joined with `+`. */
function distinguishedName(name: tls.Certificate | undefined): string {
  if (!name) return '';
  return Object.entries(name as unknown as Record<string, string | string[] | undefined>)
    .filter((entry): entry is [string, string | string[]] => entry[1] !== undefined)
    .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join('+') : value}`)
    .join(', ');
}

function describeTlsFailure(error: Error): string {
  const code = errnoCode(error);
  return code === undefined || error.message.includes(code) ? error.message : `${error.message} (${code})`;
}

/** host:port, with IPv6 addresses bracketed so the port stays readable. */
export function endpoint(host: string, port: number): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

function errnoCode(error: Error): string | undefined {
  const code: unknown = (error as NodeJS.ErrnoException).code;
  return typeof code === 'string' ? code : undefined;
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
