import { describe, expect, it } from 'vitest';
import { queryJsonPath } from '../../src/agent/probes/json-path.js';

const doc = { answers: [{ type: 'A', data: '127.0.0.1', ttl: 60 }, { type: 'A', data: '127.0.0.2', ttl: 30 }], rcode: 'NOERROR' };

describe('JSON path', () => {
  it('selects with and without the leading $', () => {
    expect(queryJsonPath(doc, '$.rcode')).toBe('NOERROR');
    expect(queryJsonPath(doc, 'answers[1].data')).toBe('127.0.0.2');
    expect(queryJsonPath(doc, '.answers[0].ttl')).toBe(60);
  });

  it('answers the whole document for $ or nothing, undefined when nothing matches', () => {
    expect(queryJsonPath(doc, '$')).toBe(doc);
    expect(queryJsonPath(doc, '')).toBe(doc);
    expect(queryJsonPath(doc, '$.nope.deeper')).toBeUndefined();
  });

  it('runs filters safely and refuses code', () => {
    expect(queryJsonPath(doc, '$.answers[?(@.ttl < 40)].data')).toBe('127.0.0.2');
    expect(() => queryJsonPath(doc, '$.answers[?(process.exit(1))]')).toThrow();
  });
});
