import { describe, expect, it } from 'vitest';
import { parseChannelConfig } from '../../src/service/alerts/channel-config.js';
import { loadServiceConfig } from '../../src/service/config.js';
import { DestinationPolicy, LOCAL_AND_METADATA_RANGES, parseCidr, type Cidr } from '../../src/net-policy/index.js';

const cidrs = (...texts: string[]): Cidr[] => texts.map((text) => parseCidr(text)!);
const webhookDefault = new DestinationPolicy({ baseline: LOCAL_AND_METADATA_RANGES });

describe('webhook channel configs', () => {
  const webhook = (url: string, policy = webhookDefault) => parseChannelConfig('WEBHOOK', { name: 'hook', url }, policy);

  it('refuses a URL naming a denied address in any spelling, or a name that always means one', () => {
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://0x7f.1/hook',
      'http://2130706433/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/',
      'http://0.0.0.0:3000/',
      'http://localhost:3000/',
      'http://app.localhost/',
      'https://metadata.google.internal/computeMetadata/v1/',
    ]) {
      const parsed = webhook(url);
      expect(parsed, url).toEqual({ problems: { 'config.url': expect.stringMatching(/denied destination/) } });
    }
    expect(parseChannelConfig('SLACK', { url: 'http://127.0.0.1/slack' }, webhookDefault)).toEqual({
      problems: { 'config.url': expect.stringContaining('127.0.0.0/8 (loopback)') },
    });
  });

  it('accepts private and public destinations, and loopback once the operator allows it', () => {
    expect(webhook('http://10.0.0.5/hook')).toHaveProperty('config');
    expect(webhook('https://hooks.example.com/x')).toHaveProperty('config');
    const loopback = new DestinationPolicy({ baseline: LOCAL_AND_METADATA_RANGES, allowed: cidrs('127.0.0.0/8', '::1') });
    expect(webhook('http://localhost:3000/', loopback)).toHaveProperty('config');
    expect(webhook('http://127.0.0.1:3000/', loopback)).toHaveProperty('config');
    expect(webhook('http://169.254.169.254/', loopback)).toHaveProperty('problems');
  });
});

describe('service configuration', () => {
  it('reads WEBHOOK_ALLOWED_DESTINATIONS and WEBHOOK_DENIED_DESTINATIONS once, and refuses what is not a range', () => {
    expect(loadServiceConfig({}).webhookDestinations).toEqual({ allowed: [], denied: [] });
    const config = loadServiceConfig({ WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.0/8, ::1', WEBHOOK_DENIED_DESTINATIONS: '10.0.0.0/8' });
    expect(config.webhookDestinations.allowed.map((cidr) => cidr.text)).toEqual(['127.0.0.0/8', '::1/128']);
    expect(config.webhookDestinations.denied.map((cidr) => cidr.text)).toEqual(['10.0.0.0/8']);
    expect(() => loadServiceConfig({ WEBHOOK_DENIED_DESTINATIONS: '10.0.0.0/8,intranet' })).toThrow(
      /WEBHOOK_DENIED_DESTINATIONS must be address ranges .*entry 2 is not one/,
    );
  });
});
