/**
 * Host name → one address, through either the OS resolver (getaddrinfo, so
 * /etc/hosts, nsswitch and search domains apply) or c-ares (DNS queries only,
 * straight to the name servers). Agents choose per deployment: some networks
 * only resolve internal names through the OS, others want plain DNS answers.
 */
import dns from 'node:dns';
import net from 'node:net';
import { DnsError } from '../../errors/index.js';
import type { IpFamily } from './http-connector.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export interface HostResolverOptions {
  /** true: dns.lookup (getaddrinfo); false: dns.resolve4/resolve6 (c-ares). */
  useOsResolver: boolean;
  /**
   * c-ares only: name servers to ask ("127.0.0.1:5353", "[::1]:53") instead of
   * the system's. The OS resolver always uses the system's configuration.
   */
  nameServers?: readonly string[];
}

/**
 * IP literals (bracketed IPv6 included) skip resolution, whatever the family asked for. IPv6
 * falls back to IPv4 when the name has no IPv6 address: a v4-only host is
 * still reachable for an IPv6-preferring monitor.
 */
export async function resolveHost(
  hostname: string,
  ipFamily: IpFamily,
  options: HostResolverOptions,
  signal: AbortSignal,
): Promise<ResolvedAddress> {
  const literal = asIpLiteral(hostname);
  if (literal !== null) return { address: literal, family: net.isIPv6(literal) ? 6 : 4 };
  const query = options.useOsResolver ? lookupWithOs : resolveWithCares;
  if (ipFamily === 'IPv4') return query(hostname, 4, options, signal);
  try {
    return await query(hostname, 6, options, signal);
  } catch (error) {
    // Only "no such address" falls back; anything else (abort included) is final.
    if (error instanceof DnsError && isNoAddress(error.cause)) return query(hostname, 4, options, signal);
    throw error;
  }
}

/**
 * The bare address when `hostname` is an IP literal, else null. Users paste
 * IPv6 literals as they appear in URLs ("[::1]"); the brackets are not part of it.
 */
export function asIpLiteral(hostname: string): string | null {
  const bare = /^\[(.*)\]$/.exec(hostname)?.[1] ?? hostname;
  return net.isIP(bare) !== 0 ? bare : null;
}

type Query = (hostname: string, family: 4 | 6, options: HostResolverOptions, signal: AbortSignal) => Promise<ResolvedAddress>;

const lookupWithOs: Query = (hostname, family, _options, signal) =>
  new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(toError(signal.reason));
      return;
    }
    // getaddrinfo cannot be cancelled; on abort its answer is simply ignored.
    const onAbort = (): void => reject(toError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    dns.lookup(hostname, { family }, (error, address, answeredFamily) => {
      signal.removeEventListener('abort', onAbort);
      if (error) reject(new DnsError(describeFailure(hostname, family, error), { cause: error }));
      else resolve({ address, family: answeredFamily === 6 ? 6 : 4 });
    });
  });

const resolveWithCares: Query = (hostname, family, options, signal) =>
  new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(toError(signal.reason));
      return;
    }
    // One resolver per query, so cancelling it cannot touch anyone else's lookups.
    const resolver = new dns.Resolver();
    if (options.nameServers !== undefined) resolver.setServers([...options.nameServers]);
    const onAbort = (): void => {
      resolver.cancel();
      reject(toError(signal.reason));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const done = (error: NodeJS.ErrnoException | null, addresses: string[]): void => {
      signal.removeEventListener('abort', onAbort);
      const address = addresses?.[0];
      if (error) reject(new DnsError(describeFailure(hostname, family, error), { cause: error }));
      else if (address === undefined) {
        const empty = Object.assign(new Error(`no ${recordType(family)} record`), { code: 'ENODATA' });
        reject(new DnsError(describeFailure(hostname, family, empty), { cause: empty }));
      } else resolve({ address, family });
    };
    if (family === 4) resolver.resolve4(hostname, done);
    else resolver.resolve6(hostname, done);
  });

function isNoAddress(error: unknown): boolean {
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  return code === 'ENOTFOUND' || code === 'ENODATA' || code === 'EAI_ADDRFAMILY' || code === 'EAI_NODATA';
}

function recordType(family: 4 | 6): string {
  return family === 6 ? 'AAAA' : 'A';
}

function describeFailure(hostname: string, family: 4 | 6, error: NodeJS.ErrnoException): string {
  const code = error.code ?? 'unknown error';
  switch (code) {
    case 'ENOTFOUND':
      return `DNS lookup of ${hostname} failed: no such host (ENOTFOUND)`;
    case 'ENODATA':
    case 'EAI_NODATA':
    case 'EAI_ADDRFAMILY':
      return `DNS lookup of ${hostname} failed: no ${recordType(family)} record found (${code})`;
    case 'EAI_AGAIN':
    case 'ETIMEOUT':
      return `DNS lookup of ${hostname} failed: the resolver did not answer in time (${code})`;
    case 'ECONNREFUSED':
      return `DNS lookup of ${hostname} failed: the name server refused the connection (ECONNREFUSED)`;
    case 'ESERVFAIL':
      return `DNS lookup of ${hostname} failed: the name server failed to answer (ESERVFAIL)`;
    case 'EREFUSED':
      return `DNS lookup of ${hostname} failed: the name server refused the query (EREFUSED)`;
    default:
      return `DNS lookup of ${hostname} failed: ${error.message}`;
  }
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
