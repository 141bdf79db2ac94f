/**
 * The one assertion evaluator every check type uses, so "EQUALS 200" means the
 * same thing on a URL monitor as it will on TCP, DNS or API checks. Pure: the
 * probe resolves what a source/property points at, this module only compares.
 */
import type { AssertionResult } from '../../protocol/assertion.js';
import type { AssertionComparison, AssertionSource } from '../../protocol/enums.js';

/**
 * An assertion as written on a check. Spelled out from the enums rather than
 * taken from `Static<typeof AssertionSchema>`, whose source/comparison resolve
 * to `never` (a union built from a mapped array); every protocol Assertion
 * still fits this type.
 */
export interface AssertionInput {
  source: AssertionSource;
  property?: string;
  comparison: AssertionComparison;
  target?: string;
  /** Not applied yet: no current source yields text worth extracting from. */
  regex?: string | null;
}

/** Keeps results small: an actual value is evidence for a human, not a payload. */
export const MAX_ACTUAL_LENGTH = 1000;

export type ActualValue = AssertionResult['actual'];

/** Looks up what an assertion's source/property designates in one run; must not throw. */
export type AssertionResolver = (source: AssertionSource, property: string) => unknown;

export function evaluateAssertions(
  assertions: readonly AssertionInput[],
  resolve: AssertionResolver,
): AssertionResult[] {
  return assertions.map((assertion) =>
    evaluateAssertion(assertion, resolve(assertion.source, assertion.property ?? '')),
  );
}

export function evaluateAssertion(assertion: AssertionInput, actual: unknown): AssertionResult {
  const target = assertion.target ?? '';
  return {
    source: assertion.source,
    property: assertion.property ?? '',
    comparison: assertion.comparison,
    target,
    actual: toActualValue(actual),
    passed: compare(assertion.comparison, actual, target),
  };
}

type Comparator = (actual: unknown, target: string) => boolean;

// A table rather than a switch: each comparison is one line and the compiler
// checks that every comparison in the protocol has an entry.
const COMPARATORS: Record<AssertionComparison, Comparator> = {
  EQUALS: (actual, target) => !isMissing(actual) && looselyEqual(actual, target),
  NOT_EQUALS: (actual, target) => isMissing(actual) || !looselyEqual(actual, target),
  GREATER_THAN: (actual, target) => compareNumbers(actual, target, (a, t) => a > t),
  LESS_THAN: (actual, target) => compareNumbers(actual, target, (a, t) => a < t),
  CONTAINS: (actual, target) => !isMissing(actual) && toText(actual).includes(target),
  NOT_CONTAINS: (actual, target) => isMissing(actual) || !toText(actual).includes(target),
  IS_EMPTY: (actual) => isEmpty(actual),
  NOT_EMPTY: (actual) => !isEmpty(actual),
  IS_NULL: (actual) => isMissing(actual),
  NOT_NULL: (actual) => !isMissing(actual),
  // Key and value checks only make sense on containers; on anything else both
  // the check and its negation fail, so a wrong property path is never green.
  HAS_KEY: (actual, target) => isContainer(actual) && hasKey(actual, target),
  NOT_HAS_KEY: (actual, target) => isContainer(actual) && !hasKey(actual, target),
  HAS_VALUE: (actual, target) => isContainer(actual) && hasValue(actual, target),
  NOT_HAS_VALUE: (actual, target) => isContainer(actual) && !hasValue(actual, target),
};

function compare(comparison: AssertionComparison, actual: unknown, target: string): boolean {
  return COMPARATORS[comparison](actual, target);
}

/** undefined (nothing found) and null (found, empty) both count as "no value". */
function isMissing(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}

/** A finite number for numbers and numeric strings; null for everything else. */
function asNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const parsed = Number(value.trim());
  return Number.isFinite(parsed) ? parsed : null;
}

/** Numeric when both sides are numbers ("200" == "200.0"), text otherwise. */
function looselyEqual(actual: unknown, target: string): boolean {
  const a = asNumber(actual);
  const t = asNumber(target);
  if (a !== null && t !== null) return a === t;
  return toText(actual) === target;
}

function compareNumbers(
  actual: unknown,
  target: string,
  test: (actual: number, target: number) => boolean,
): boolean {
  const a = asNumber(actual);
  const t = asNumber(target);
  return a !== null && t !== null && test(a, t);
}

/** How a value reads as text: strings as they are, anything else as JSON. */
function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'null';
  if (typeof value === 'bigint' || typeof value === 'symbol') return value.toString();
  if (typeof value === 'function') return '[function]';
  try {
    // toJSON may hand back undefined, which JSON.stringify passes through.
    const json: string | undefined = JSON.stringify(value);
    return json ?? 'null';
  } catch {
    // Circular structures cannot come from JSON, but a resolver might hand one over.
    return '[unserializable]';
  }
}

function isEmpty(value: unknown): boolean {
  if (isMissing(value)) return true;
  if (typeof value === 'string' || Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

type Container = readonly unknown[] | Record<string, unknown>;

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

function hasKey(container: Container, key: string): boolean {
  if (Array.isArray(container)) {
    const index = asNumber(key);
    return index !== null && Number.isInteger(index) && index >= 0 && index < container.length;
  }
  return Object.hasOwn(container, key);
}

function hasValue(container: Container, target: string): boolean {
  const values: readonly unknown[] = Array.isArray(container) ? container : Object.values(container);
  return values.some((value) => !isMissing(value) && looselyEqual(value, target));
}

/** What a result may carry: scalars as they are, structures as capped JSON. */
export function toActualValue(value: unknown): ActualValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  return cap(toText(value));
}

function cap(text: string): string {
  return text.length <= MAX_ACTUAL_LENGTH ? text : `${text.slice(0, MAX_ACTUAL_LENGTH - 1)}…`;
}
