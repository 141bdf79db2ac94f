import { describe, expect, it } from 'vitest';
import { InvalidSettingsError } from '../../src/errors/index.js';
import { memoizeSettings } from '../../src/agent/probes/settings-memo.js';
import { ProbeRegistry } from '../../src/agent/probes/registry.js';

/** A parser that counts its calls, fills a default and refuses a URL-less request, as the probes' do. */
function countingParser() {
  const calls: unknown[] = [];
  const parse = (raw: unknown) => {
    calls.push(raw);
    const value = structuredClone(raw) as { request: { url?: string; method?: string; headers?: string[] } };
    if (typeof value.request?.url !== 'string') throw new InvalidSettingsError('request.url: required');
    value.request.method ??= 'GET';
    value.request.headers ??= [];
    return value;
  };
  return { calls, parse };
}

const settingsFor = (url: string) => JSON.parse(JSON.stringify({ request: { url } })) as unknown;

describe('memoized probe settings', () => {
  it('parses the same settings once, however many runs carry them, as separate objects from the job', () => {
    const { calls, parse } = countingParser();
    const memo = memoizeSettings(parse);
    const first = memo(settingsFor('http://127.0.0.1:1/a'));
    const second = memo(settingsFor('http://127.0.0.1:1/a'));
    expect(second).toBe(first);
    expect(calls).toHaveLength(1);
    expect(first).toEqual({ request: { url: 'http://127.0.0.1:1/a', method: 'GET', headers: [] } });
    expect(memo(settingsFor('http://127.0.0.1:1/b'))).not.toBe(first);
    expect(calls).toHaveLength(2);
  });

  it('hands out settings no run can change, at any depth', () => {
    const memo = memoizeSettings(countingParser().parse);
    const settings = memo(settingsFor('http://127.0.0.1:1/a')) as { request: { url: string; headers: string[] } };
    expect(() => {
      settings.request.url = 'http://127.0.0.1:1/elsewhere';
    }).toThrow(TypeError);
    expect(() => settings.request.headers.push('x-injected: 1')).toThrow(TypeError);
    expect(memo(settingsFor('http://127.0.0.1:1/a'))).toEqual({ request: { url: 'http://127.0.0.1:1/a', method: 'GET', headers: [] } });
  });

  it('keeps no invalid settings: they fail again on every run', () => {
    const { calls, parse } = countingParser();
    const memo = memoizeSettings(parse);
    const invalid = { request: {} };
    expect(() => memo(invalid)).toThrow(InvalidSettingsError);
    expect(() => memo(invalid)).toThrow(InvalidSettingsError);
    expect(calls).toHaveLength(2);
  });

  it('holds at most its capacity, dropping the settings least recently used', () => {
    const { calls, parse } = countingParser();
    const memo = memoizeSettings(parse, 2);
    memo(settingsFor('http://127.0.0.1:1/a'));
    memo(settingsFor('http://127.0.0.1:1/b'));
    memo(settingsFor('http://127.0.0.1:1/a')); // a is now the more recent
    memo(settingsFor('http://127.0.0.1:1/c')); // b goes
    expect(calls).toHaveLength(3);
    memo(settingsFor('http://127.0.0.1:1/a'));
    expect(calls).toHaveLength(3);
    memo(settingsFor('http://127.0.0.1:1/b'));
    expect(calls).toHaveLength(4);
  });

  it("is what the registry's probes parse with: each probe's own rules, kept frozen", () => {
    const probe = new ProbeRegistry({ useOsDnsResolver: false }).probeFor('URL');
    const raw = settingsFor('http://127.0.0.1:1/registry');
    const settings = probe.parseSettings(raw) as { request: { method: string } };
    expect(settings.request.method).toBe('GET');
    expect(Object.isFrozen(settings.request)).toBe(true);
    expect(probe.parseSettings(settingsFor('http://127.0.0.1:1/registry'))).toBe(settings);
    // The job's own object is left as the service sent it.
    expect(raw).toEqual({ request: { url: 'http://127.0.0.1:1/registry' } });
    expect(() => probe.parseSettings({ request: { url: 'not a url' } })).toThrow(InvalidSettingsError);
  });
});
