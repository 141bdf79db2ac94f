/**
 * What a server reaching out on a user's behalf (a webhook) must not reach
 * unless its operator says so: the machine itself, its link, and the cloud
 * metadata services that hand out credentials. Private ranges (10/8,
 * 172.16/12, 192.168/16, fc00::/7) are not here: self-hosted services alert
 * into internal systems, and an operator who wants them closed denies them.
 */
import { parseCidr, type Cidr } from './cidr.js';
import type { NamedRange } from './destination-policy.js';

const range = (text: string, name: string): NamedRange => ({ cidr: parseCidr(text) as Cidr, name });

export const LOCAL_AND_METADATA_RANGES: readonly NamedRange[] = [
  range('0.0.0.0/8', '"this network": 0.0.0.0 reaches the local machine'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  // Listed apart from their wider ranges so allowing link-local or CGNAT still leaves them denied.
  range('169.254.169.254/32', 'cloud metadata service'),
  range('169.254.170.2/32', 'container credentials service (ECS)'),
  range('100.100.100.200/32', 'cloud metadata service (Alibaba Cloud)'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved and broadcast'),
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('::/96', 'IPv4-compatible (deprecated)'),
  range('fe80::/10', 'link-local'),
  range('fd00:ec2::254/128', 'cloud metadata service (AWS, IPv6)'),
  range('ff00::/8', 'multicast'),
];

/**
 * Names that mean a local or metadata address whatever DNS says, so a channel
 * naming them is refused when it is saved, not only when it is sent.
 */
const WELL_KNOWN_NAMES: ReadonlyMap<string, readonly string[]> = new Map([
  ['localhost', ['127.0.0.1', '::1']],
  ['metadata', ['169.254.169.254']],
  ['metadata.google.internal', ['169.254.169.254']],
  ['metadata.goog', ['169.254.169.254']],
  ['instance-data', ['169.254.169.254']],
  ['instance-data.ec2.internal', ['169.254.169.254']],
]);

/** The addresses `hostname` is known to stand for (RFC 6761: every *.localhost is loopback); empty when it is not one of them. */
export function wellKnownAddresses(hostname: string): readonly string[] {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name.endsWith('.localhost')) return WELL_KNOWN_NAMES.get('localhost')!;
  return WELL_KNOWN_NAMES.get(name) ?? [];
}
