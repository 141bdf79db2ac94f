import { describe, expect, it } from 'vitest';
import {
  MAX_ACTUAL_LENGTH,
  evaluateAssertion,
  evaluateAssertions,
  toActualValue,
} from '../../src/agent/probes/assertions.js';
import type { AssertionInput } from '../../src/agent/probes/assertions.js';
import type { AssertionComparison } from '../../src/protocol/enums.js';

function passes(comparison: AssertionComparison, actual: unknown, target = ''): boolean {
  return evaluateAssertion({ source: 'JSON_BODY', property: '$.x', comparison, target }, actual).passed;
}

describe('evaluateAssertion', () => {
  it('EQUALS compares numerically when both sides are numbers', () => {
    expect(passes('EQUALS', 200, '200')).toBe(true);
    expect(passes('EQUALS', '200', '200.0')).toBe(true);
    expect(passes('EQUALS', 200, ' 200 ')).toBe(true);
    expect(passes('EQUALS', 200, '201')).toBe(false);
  });

  it('EQUALS compares as text when either side is not a number', () => {
    expect(passes('EQUALS', 'ok', 'ok')).toBe(true);
    expect(passes('EQUALS', 'ok', 'OK')).toBe(false);
    expect(passes('EQUALS', '200', '200 OK')).toBe(false);
    expect(passes('EQUALS', true, 'true')).toBe(true);
    expect(passes('EQUALS', { a: 1 }, '{"a":1}')).toBe(true);
    // "" is not the number 0: an empty target does not match a zero.
    expect(passes('EQUALS', 0, '')).toBe(false);
  });

  it('EQUALS never matches a missing value, NOT_EQUALS always does', () => {
    expect(passes('EQUALS', undefined, '')).toBe(false);
    expect(passes('EQUALS', null, 'null')).toBe(false);
    expect(passes('NOT_EQUALS', null, '')).toBe(true);
    expect(passes('NOT_EQUALS', undefined, 'x')).toBe(true);
  });

  it('NOT_EQUALS', () => {
    expect(passes('NOT_EQUALS', 200, '500')).toBe(true);
    expect(passes('NOT_EQUALS', 200, '200')).toBe(false);
    expect(passes('NOT_EQUALS', 'abc', 'abd')).toBe(true);
    expect(passes('NOT_EQUALS', 'abc', 'abc')).toBe(false);
  });

  it('GREATER_THAN and LESS_THAN compare numbers, not text', () => {
    // As text "10" < "9"; as numbers it is the other way round.
    expect(passes('GREATER_THAN', '10', '9')).toBe(true);
    expect(passes('GREATER_THAN', 9, '10')).toBe(false);
    expect(passes('GREATER_THAN', 10, '10')).toBe(false);
    expect(passes('LESS_THAN', 9, '10')).toBe(true);
    expect(passes('LESS_THAN', '10', '9')).toBe(false);
    expect(passes('LESS_THAN', 1.5, '1.25')).toBe(false);
    expect(passes('LESS_THAN', -1, '0')).toBe(true);
  });

  it('GREATER_THAN and LESS_THAN fail on anything that is not a number', () => {
    expect(passes('GREATER_THAN', 'b', 'a')).toBe(false);
    expect(passes('LESS_THAN', 'a', 'b')).toBe(false);
    expect(passes('GREATER_THAN', 5, 'abc')).toBe(false);
    expect(passes('LESS_THAN', null, '5')).toBe(false);
    expect(passes('GREATER_THAN', '', '-1')).toBe(false);
    expect(passes('GREATER_THAN', Number.POSITIVE_INFINITY, '1')).toBe(false);
  });

  it('CONTAINS and NOT_CONTAINS look for a substring', () => {
    expect(passes('CONTAINS', 'hello world', 'lo w')).toBe(true);
    expect(passes('CONTAINS', 'hello world', 'World')).toBe(false);
    expect(passes('CONTAINS', 404, '04')).toBe(true);
    expect(passes('CONTAINS', ['a', 'b'], '"b"')).toBe(true);
    expect(passes('NOT_CONTAINS', 'hello', 'bye')).toBe(true);
    expect(passes('NOT_CONTAINS', 'hello', 'ell')).toBe(false);
  });

  it('a missing value contains nothing', () => {
    expect(passes('CONTAINS', null, 'nu')).toBe(false);
    expect(passes('CONTAINS', undefined, '')).toBe(false);
    expect(passes('NOT_CONTAINS', null, 'nu')).toBe(true);
  });

  it('IS_EMPTY and NOT_EMPTY', () => {
    for (const empty of ['', [], {}, null, undefined]) {
      expect(passes('IS_EMPTY', empty), JSON.stringify(empty)).toBe(true);
      expect(passes('NOT_EMPTY', empty), JSON.stringify(empty)).toBe(false);
    }
    for (const full of [' ', 'x', [0], { a: null }, 0, false]) {
      expect(passes('IS_EMPTY', full), JSON.stringify(full)).toBe(false);
      expect(passes('NOT_EMPTY', full), JSON.stringify(full)).toBe(true);
    }
  });

  it('IS_NULL and NOT_NULL treat null and undefined alike, and nothing else as null', () => {
    expect(passes('IS_NULL', null)).toBe(true);
    expect(passes('IS_NULL', undefined)).toBe(true);
    expect(passes('IS_NULL', 'null')).toBe(false);
    expect(passes('IS_NULL', 0)).toBe(false);
    expect(passes('IS_NULL', '')).toBe(false);
    expect(passes('NOT_NULL', '')).toBe(true);
    expect(passes('NOT_NULL', false)).toBe(true);
    expect(passes('NOT_NULL', null)).toBe(false);
  });

  it('HAS_KEY and NOT_HAS_KEY on objects and arrays', () => {
    expect(passes('HAS_KEY', { id: 1 }, 'id')).toBe(true);
    expect(passes('HAS_KEY', { id: 1 }, 'name')).toBe(false);
    expect(passes('HAS_KEY', { id: undefined }, 'id')).toBe(true);
    expect(passes('HAS_KEY', {}, 'toString')).toBe(false);
    expect(passes('HAS_KEY', ['a', 'b'], '1')).toBe(true);
    expect(passes('HAS_KEY', ['a', 'b'], '2')).toBe(false);
    expect(passes('HAS_KEY', ['a', 'b'], '0.5')).toBe(false);
    expect(passes('NOT_HAS_KEY', { id: 1 }, 'name')).toBe(true);
    expect(passes('NOT_HAS_KEY', { id: 1 }, 'id')).toBe(false);
  });

  it('HAS_VALUE and NOT_HAS_VALUE with the same loose equality as EQUALS', () => {
    expect(passes('HAS_VALUE', { a: 1, b: 'x' }, 'x')).toBe(true);
    expect(passes('HAS_VALUE', [1, 2, 3], '2.0')).toBe(true);
    expect(passes('HAS_VALUE', [1, 2, 3], '4')).toBe(false);
    expect(passes('HAS_VALUE', [null], 'null')).toBe(false);
    expect(passes('NOT_HAS_VALUE', [1, 2, 3], '4')).toBe(true);
    expect(passes('NOT_HAS_VALUE', { a: 'x' }, 'x')).toBe(false);
  });

  it('key and value checks fail both ways on values that are not containers', () => {
    for (const comparison of ['HAS_KEY', 'NOT_HAS_KEY', 'HAS_VALUE', 'NOT_HAS_VALUE'] as const) {
      expect(passes(comparison, 'abc', 'length'), comparison).toBe(false);
      expect(passes(comparison, null, 'x'), comparison).toBe(false);
      expect(passes(comparison, 42, '42'), comparison).toBe(false);
    }
  });

  it('defaults a missing property and target to empty strings', () => {
    const assertion: AssertionInput = { source: 'STATUS_CODE', comparison: 'NOT_EMPTY' };
    expect(evaluateAssertion(assertion, 200)).toEqual({
      source: 'STATUS_CODE',
      property: '',
      comparison: 'NOT_EMPTY',
      target: '',
      actual: 200,
      passed: true,
    });
  });
});

describe('toActualValue', () => {
  it('keeps scalars and turns missing values into null', () => {
    expect(toActualValue(201)).toBe(201);
    expect(toActualValue('x')).toBe('x');
    expect(toActualValue(false)).toBe(false);
    expect(toActualValue(null)).toBeNull();
    expect(toActualValue(undefined)).toBeNull();
    expect(toActualValue(Number.NaN)).toBe('NaN');
  });

  it('stringifies structures as JSON and caps long values', () => {
    expect(toActualValue({ a: [1, 'b'] })).toBe('{"a":[1,"b"]}');
    const long = toActualValue({ text: 'y'.repeat(5000) });
    expect(typeof long).toBe('string');
    expect((long as string).length).toBe(MAX_ACTUAL_LENGTH);
    expect((long as string).endsWith('…')).toBe(true);
    expect(toActualValue('z'.repeat(MAX_ACTUAL_LENGTH))).toHaveLength(MAX_ACTUAL_LENGTH);
  });

  it('survives values JSON cannot represent', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(toActualValue(circular)).toBe('[unserializable]');
    expect(toActualValue(10n)).toBe('10');
  });
});

describe('evaluateAssertions', () => {
  it('resolves each assertion through its source and property, in order', () => {
    const seen: string[] = [];
    const results = evaluateAssertions(
      [
        { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
        { source: 'HEADERS', property: 'content-type', comparison: 'CONTAINS', target: 'json' },
        { source: 'HEADERS', property: 'x-missing', comparison: 'IS_NULL' },
      ],
      (source, property) => {
        seen.push(`${source}:${property}`);
        if (source === 'STATUS_CODE') return 503;
        return property === 'content-type' ? 'application/json' : undefined;
      },
    );
    expect(seen).toEqual(['STATUS_CODE:', 'HEADERS:content-type', 'HEADERS:x-missing']);
    expect(results.map((r) => [r.actual, r.passed])).toEqual([
      [503, false],
      ['application/json', true],
      [null, true],
    ]);
  });

  it('returns nothing for no assertions', () => {
    expect(evaluateAssertions([], () => 1)).toEqual([]);
  });
});
