/**
 * Decides whether a connection to an IP address may be opened. Rules are
 * address ranges that allow or deny; the most specific range that holds the
 * address decides (longest prefix, as routes do), so an operator can allow
 * 169.254.0.0/16 and a /32 inside it stays denied. At equal length the
 * operator's rules come before the built-in ones, and a deny before an allow.
 * An address no rule holds is allowed.
 */
import ipaddr from 'ipaddr.js';
import { carriesIPv4, type Cidr } from './cidr.js';

/** A range with a name people recognise, for the built-in rules and their messages. */
export interface NamedRange {
  cidr: Cidr;
  name: string;
}

export interface PolicyRules {
  /** Denied unless a more specific rule allows them (the operator's "not by default"). */
  baseline?: readonly NamedRange[];
  allowed?: readonly Cidr[];
  denied?: readonly Cidr[];
}

export type Verdict =
  | { allowed: true }
  | { allowed: false; address: string; range: string; name: string | undefined; configured: boolean };

interface Rule {
  cidr: Cidr;
  allow: boolean;
  name: string | undefined;
  configured: boolean;
}

export class DestinationPolicy {
  readonly #rules: Rule[];

  constructor(rules: PolicyRules) {
    const all: Rule[] = [
      ...(rules.denied ?? []).map((cidr) => ({ cidr, allow: false, name: undefined, configured: true })),
      ...(rules.allowed ?? []).map((cidr) => ({ cidr, allow: true, name: undefined, configured: true })),
      ...(rules.baseline ?? []).map(({ cidr, name }) => ({ cidr, allow: false, name, configured: false })),
    ];
    // Stable sort: within one prefix length the order above (configured deny, configured allow, built-in) holds.
    this.#rules = all.sort((a, b) => b.cidr.prefix - a.cidr.prefix);
  }

  /** No rule at all: every address is allowed, and callers may skip the check. */
  get allowsEverything(): boolean {
    return this.#rules.length === 0;
  }

  /** `address` is an IP literal (brackets and an IPv6 zone are fine); anything else is denied as unreadable. */
  decide(address: string): Verdict {
    const parsed = normalizeAddress(address);
    if (parsed === undefined) {
      return { allowed: false, address, range: 'not an IP address', name: undefined, configured: false };
    }
    for (const rule of this.#rules) {
      if (parsed.kind() !== rule.cidr.network.kind()) continue;
      if (!parsed.match(rule.cidr.network, rule.cidr.prefix)) continue;
      if (rule.allow) return { allowed: true };
      return { allowed: false, address: parsed.toString(), range: rule.cidr.text, name: rule.name, configured: rule.configured };
    }
    return { allowed: true };
  }
}

/** "127.0.0.1 is in 127.0.0.0/8 (loopback)": what a refusal says, whoever reports it. */
export function describeDenial(verdict: Extract<Verdict, { allowed: false }>): string {
  return `${verdict.address} is in ${verdict.range}${verdict.name ? ` (${verdict.name})` : ''}`;
}

/**
 * The address a connection would really reach: an IPv4-mapped IPv6 address
 * (::ffff:127.0.0.1) is the IPv4 address, and so is one under the well-known
 * NAT64 prefix (64:ff9b::127.0.0.1). RFC 6052 tells gateways not to translate
 * non-global addresses, but a policy cannot count on every gateway obeying.
 */
export function normalizeAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = /^\[(.*)\]$/.exec(text)?.[1] ?? text;
  if (!ipaddr.isValid(bare)) return undefined;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') return parsed;
  return carriesIPv4(parsed as ipaddr.IPv6) ? ipaddr.fromByteArray(parsed.toByteArray().slice(12)) : parsed;
}
