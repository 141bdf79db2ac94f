import { describe, expect, it } from 'vitest';
import { SCRUB_MARKER, Scrubber } from '../../src/scrub/index.js';

const M = SCRUB_MARKER;
const scrubber = new Scrubber(['s3cret-value', '12345678']);

describe('scrubValue', () => {
  it('scrubs strings at any depth in objects and arrays, keys included', () => {
    const value = {
      status: 'ok',
      nested: { list: [1, 'a s3cret-value b', [{ deeper: { 's3cret-value': true, text: ['s3cret-value'] } }]] },
      empty: [],
      none: null,
      flag: false,
    };
    expect(scrubber.scrubValue(value)).toEqual({
      status: 'ok',
      nested: { list: [1, `a ${M} b`, [{ deeper: { [M]: true, text: [M] } }]] },
      empty: [],
      none: null,
      flag: false,
    });
    expect(value.nested.list[1]).toBe('a s3cret-value b');
  });

  it('scrubs encoded forms inside values, and numbers that spell a secret', () => {
    const encoded = Buffer.from('s3cret-value').toString('base64');
    expect(scrubber.scrubValue({ token: encoded, pin: 12345678, other: 42, big: 12345678n })).toEqual({
      token: M,
      pin: M,
      other: 42,
      big: M,
    });
  });

  it('returns parts with nothing to replace as they are, and reads values as JSON would', () => {
    const untouched = { a: [1, 2, { b: 'c' }], when: new Date(0) };
    expect(scrubber.scrubValue(untouched)).toBe(untouched);
    const withDate = scrubber.scrubValue({ when: new Date(0), note: 's3cret-value' }) as Record<string, unknown>;
    expect(withDate.when).toBeInstanceOf(Date);
    expect(withDate.note).toBe(M);
    const custom = { toJSON: () => ({ inner: 's3cret-value' }) };
    expect(scrubber.scrubValue(custom)).toEqual({ inner: M });
  });

  it('keeps a "__proto__" key from JSON.parse a plain key, and survives cycles', () => {
    const parsed = JSON.parse('{"__proto__": {"x": "s3cret-value"}}');
    const scrubbed = scrubber.scrubValue(parsed) as Record<string, unknown>;
    expect(Object.getPrototypeOf(scrubbed)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(scrubbed, '__proto__')?.value).toEqual({ x: M });
    const cyclic: Record<string, unknown> = { name: 's3cret-value' };
    cyclic.self = cyclic;
    expect(scrubber.scrubValue(cyclic)).toEqual({ name: M, self: '[Circular]' });
  });

  it('scrubs a value nested 5,000 levels deep', () => {
    let deep: unknown = 's3cret-value';
    for (let level = 0; level < 5000; level++) deep = level % 2 === 0 ? [deep] : { level: deep };
    let scrubbed = scrubber.scrubValue(deep);
    for (let level = 4999; level >= 0; level--) {
      scrubbed = level % 2 === 0 ? (scrubbed as unknown[])[0] : (scrubbed as { level: unknown }).level;
    }
    expect(scrubbed).toBe(M);
  });
});
