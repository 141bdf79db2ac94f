/**
 * Address ranges as operators and API callers write them: "10.0.0.0/8",
 * "fd00::/8", or a bare address meaning just that address.
 */
import ipaddr from 'ipaddr.js';

export interface Cidr {
  /** Normalized text, e.g. "10.0.0.0/8": what messages and answers show. */
  readonly text: string;
  readonly network: ipaddr.IPv4 | ipaddr.IPv6;
  readonly prefix: number;
}

/**
 * IPv4 only in its four-part decimal form: ipaddr.js (like inet_aton) also
 * reads "127.1" and "0x7f.0.0.1", which nobody writes in a range on purpose.
 * IPv4-mapped IPv6 ranges become the IPv4 range they are, so they match the
 * addresses they name (connections to ::ffff:a.b.c.d go to a.b.c.d); so do
 * ranges under the well-known NAT64 prefix, which addresses are judged by too.
 */
export function parseCidr(text: string): Cidr | undefined {
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  const address = slash === -1 ? trimmed : trimmed.slice(0, slash);
  const prefixText = slash === -1 ? undefined : trimmed.slice(slash + 1);
  let network: ipaddr.IPv4 | ipaddr.IPv6;
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) network = ipaddr.IPv4.parse(address);
  else if (ipaddr.IPv6.isValid(address) && !address.includes('%')) network = ipaddr.IPv6.parse(address);
  else return undefined;
  const bits = network.kind() === 'ipv4' ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  let prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return undefined;
  if (network.kind() === 'ipv6' && prefix >= 96 && carriesIPv4(network as ipaddr.IPv6)) {
    network = ipaddr.fromByteArray(network.toByteArray().slice(12));
    prefix -= 96;
  }
  const masked = maskedNetwork(network, prefix);
  return { text: `${masked.toString()}/${prefix}`, network: masked, prefix };
}

/** Every entry parsed, or the first one that is not a range. */
export function parseCidrList(entries: readonly string[]): { cidrs: Cidr[] } | { invalid: string } {
  const cidrs: Cidr[] = [];
  for (const entry of entries) {
    const cidr = parseCidr(entry);
    if (cidr === undefined) return { invalid: entry };
    cidrs.push(cidr);
  }
  return { cidrs };
}

const NAT64_WELL_KNOWN = ipaddr.IPv6.parse('64:ff9b::');

/** An IPv6 address that stands for the IPv4 address in its last 32 bits: IPv4-mapped, or well-known NAT64. */
export function carriesIPv4(address: ipaddr.IPv6): boolean {
  return address.isIPv4MappedAddress() || address.match(NAT64_WELL_KNOWN, 96);
}

/** Comma- or whitespace-separated, as an environment variable holds a list. */
export function splitList(value: string): string[] {
  return value.split(/[\s,]+/).filter((entry) => entry !== '');
}

/** Host bits cleared, so "10.1.2.3/8" reads back as the range it matches, 10.0.0.0/8. */
function maskedNetwork(network: ipaddr.IPv4 | ipaddr.IPv6, prefix: number): ipaddr.IPv4 | ipaddr.IPv6 {
  const bytes = network.toByteArray();
  for (let bit = prefix; bit < bytes.length * 8; bit += 1) {
    bytes[bit >> 3]! &= ~(0x80 >> (bit & 7));
  }
  return ipaddr.fromByteArray(bytes);
}
