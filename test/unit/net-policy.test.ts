import { describe, expect, it } from 'vitest';
import {
  DestinationPolicy,
  LOCAL_AND_METADATA_RANGES,
  parseCidr,
  parseCidrList,
  splitList,
  wellKnownAddresses,
  type Cidr,
} from '../../src/net-policy/index.js';

const cidrs = (...texts: string[]): Cidr[] => texts.map((text) => parseCidr(text)!);
const webhookDefault = new DestinationPolicy({ baseline: LOCAL_AND_METADATA_RANGES });
const allowed = (policy: DestinationPolicy, address: string) => policy.decide(address).allowed;

describe('address ranges', () => {
  it('reads IPv4 and IPv6 ranges and bare addresses, and clears host bits', () => {
    expect(parseCidr('10.1.2.3/8')?.text).toBe('10.0.0.0/8');
    expect(parseCidr(' 192.0.2.7 ')?.text).toBe('192.0.2.7/32');
    expect(parseCidr('FD00:EC2::254')?.text).toBe('fd00:ec2::254/128');
    expect(parseCidr('fc00::/7')?.text).toBe('fc00::/7');
    expect(parseCidr('0.0.0.0/0')?.text).toBe('0.0.0.0/0');
  });

  it('reads an IPv4-mapped IPv6 range as the IPv4 range it names', () => {
    expect(parseCidr('::ffff:127.0.0.0/104')?.text).toBe('127.0.0.0/8');
    expect(parseCidr('::ffff:169.254.169.254')?.text).toBe('169.254.169.254/32');
    expect(parseCidr('64:ff9b::10.0.0.0/104')?.text).toBe('10.0.0.0/8');
  });

  it('refuses what is not a range', () => {
    for (const text of ['', 'localhost', '10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/-1', '127.1', '0x7f.0.0.1', '10.0.0.0/8/8', 'fe80::1%eth0']) {
      expect(parseCidr(text), text).toBeUndefined();
    }
    expect(parseCidrList(['10.0.0.0/8', 'nope'])).toEqual({ invalid: 'nope' });
    expect(splitList(' 10.0.0.0/8,fd00::/8  192.0.2.1 ,')).toEqual(['10.0.0.0/8', 'fd00::/8', '192.0.2.1']);
  });
});

describe('the webhook default policy', () => {
  it('denies loopback, link-local, metadata, unspecified, multicast and broadcast addresses', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '0.0.0.0',
      '169.254.169.254',
      '169.254.1.1',
      '169.254.170.2',
      '100.100.100.200',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fe80::1%eth0',
      'fd00:ec2::254',
      'ff02::1',
      '[::1]',
      '::7f00:1',
    ]) {
      expect(allowed(webhookDefault, address), address).toBe(false);
    }
  });

  it('judges IPv4-mapped IPv6 addresses as the IPv4 address they reach', () => {
    for (const address of ['::ffff:127.0.0.1', '::ffff:7f00:1', '[::ffff:169.254.169.254]', '::ffff:0.0.0.0']) {
      expect(allowed(webhookDefault, address), address).toBe(false);
    }
    expect(allowed(webhookDefault, '::ffff:192.0.2.10')).toBe(true);
  });

  it('judges well-known NAT64 addresses as the IPv4 address a gateway would reach', () => {
    for (const address of ['64:ff9b::127.0.0.1', '64:ff9b::7f00:1', '[64:ff9b::a9fe:a9fe]', '64:ff9b::0.0.0.0']) {
      expect(allowed(webhookDefault, address), address).toBe(false);
    }
    expect(webhookDefault.decide('64:ff9b::169.254.169.254')).toMatchObject({ address: '169.254.169.254', name: 'cloud metadata service' });
    expect(allowed(webhookDefault, '64:ff9b::192.0.2.10')).toBe(true);
    // Only the well-known /96: a neighbouring address is an IPv6 address like any other.
    expect(allowed(webhookDefault, '64:ff9b:1::7f00:1')).toBe(true);
  });

  it('allows private and public addresses', () => {
    for (const address of ['10.0.0.5', '172.16.3.4', '192.168.1.10', 'fd12:3456::1', '192.0.2.10', '2001:db8::1', '100.64.0.1']) {
      expect(allowed(webhookDefault, address), address).toBe(true);
    }
  });

  it('says which range denied an address, by name', () => {
    expect(webhookDefault.decide('169.254.169.254')).toEqual({
      allowed: false,
      address: '169.254.169.254',
      range: '169.254.169.254/32',
      name: 'cloud metadata service',
      configured: false,
    });
    expect(webhookDefault.decide('::ffff:127.0.0.2')).toMatchObject({ address: '127.0.0.2', range: '127.0.0.0/8', name: 'loopback' });
    expect(webhookDefault.decide('not-an-address')).toMatchObject({ allowed: false, range: 'not an IP address' });
  });
});

describe('operator rules', () => {
  it('the most specific range wins: allowing link-local leaves the metadata address denied', () => {
    const policy = new DestinationPolicy({ baseline: LOCAL_AND_METADATA_RANGES, allowed: cidrs('169.254.0.0/16') });
    expect(allowed(policy, '169.254.10.10')).toBe(true);
    expect(allowed(policy, '169.254.169.254')).toBe(false);
    const explicit = new DestinationPolicy({ baseline: LOCAL_AND_METADATA_RANGES, allowed: cidrs('169.254.169.254') });
    expect(allowed(explicit, '169.254.169.254')).toBe(true);
  });

  it("an operator's range overrides a built-in one of the same length, and a deny beats an allow", () => {
    const policy = new DestinationPolicy({ baseline: LOCAL_AND_METADATA_RANGES, allowed: cidrs('127.0.0.0/8') });
    expect(allowed(policy, '127.0.0.1')).toBe(true);
    expect(allowed(policy, '::1')).toBe(false);
    const both = new DestinationPolicy({ allowed: cidrs('10.0.0.0/8'), denied: cidrs('10.0.0.0/8') });
    expect(allowed(both, '10.1.1.1')).toBe(false);
  });

  it('denies private ranges when told, with an exception inside them', () => {
    const policy = new DestinationPolicy({
      baseline: LOCAL_AND_METADATA_RANGES,
      denied: cidrs('10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'),
      allowed: cidrs('10.20.0.0/16'),
    });
    expect(policy.decide('10.1.2.3')).toMatchObject({ allowed: false, range: '10.0.0.0/8', configured: true });
    expect(allowed(policy, '10.20.0.9')).toBe(true);
    expect(allowed(policy, 'fd00::1')).toBe(false);
    expect(allowed(policy, '::ffff:192.168.0.1')).toBe(false);
    expect(allowed(policy, '192.0.2.1')).toBe(true);
  });

  it('an allow-list: deny everything, allow one range', () => {
    const policy = new DestinationPolicy({ denied: cidrs('0.0.0.0/0', '::/0'), allowed: cidrs('10.1.0.0/16') });
    expect(allowed(policy, '10.1.200.3')).toBe(true);
    expect(allowed(policy, '10.2.0.1')).toBe(false);
    expect(allowed(policy, '2001:db8::1')).toBe(false);
  });

  it('no rules: everything is allowed', () => {
    const open = new DestinationPolicy({});
    expect(open.allowsEverything).toBe(true);
    expect(allowed(open, '127.0.0.1')).toBe(true);
    expect(allowed(open, '169.254.169.254')).toBe(true);
  });
});

describe('names with a fixed meaning', () => {
  it('knows localhost, its subdomains and the metadata names', () => {
    expect(wellKnownAddresses('localhost')).toEqual(['127.0.0.1', '::1']);
    expect(wellKnownAddresses('Api.LOCALHOST.')).toEqual(['127.0.0.1', '::1']);
    expect(wellKnownAddresses('metadata.google.internal')).toEqual(['169.254.169.254']);
    expect(wellKnownAddresses('example.com')).toEqual([]);
    expect(wellKnownAddresses('localhost.example.com')).toEqual([]);
  });
});
