import { describe, expect, it } from 'vitest';
import { ProbeRegistry } from '../../src/agent/probes/registry.js';
import { urlProbe } from '../../src/agent/probes/url.js';
import { UnsupportedCheckTypeError } from '../../src/errors/index.js';

describe('probe registry', () => {
  const registry = new ProbeRegistry({ useOsDnsResolver: false });

  it('maps each uptime check type to its probe', () => {
    // The probe itself, its parser memoized around the probe's own (settings-memo.test.ts).
    expect(registry.probeFor('URL')).toEqual({ ...urlProbe, parseSettings: expect.any(Function) });
    expect(registry.checkTypes().sort()).toEqual(['API', 'DNS', 'ICMP', 'TCP', 'URL']);
    for (const checkType of registry.checkTypes()) expect(registry.probeFor(checkType).checkType).toBe(checkType);
  });

  it('refuses check types it has no probe for, including prototype names', () => {
    for (const checkType of ['BROWSER', 'MULTI_STEP', 'constructor', '__proto__', '']) {
      expect(() => registry.probeFor(checkType), checkType).toThrow(UnsupportedCheckTypeError);
    }
    expect(() => registry.probeFor('BROWSER')).toThrow(/No probe for check type BROWSER; this agent runs URL, TCP, DNS, ICMP/);
  });
});
