/**
 * Which values the scrubber looks for. Some values a user marks secret would
 * wreck every trace if replaced wherever they appear, and hide nothing worth
 * hiding: they are skipped.
 */
import { SecretTooLargeError } from '../errors/index.js';

/**
 * Shorter values are common in any text (ids, numbers, words, punctuation), so
 * replacing them would mangle logs and traces; and a value this short is
 * guessed in moments anyway.
 */
export const MIN_SECRET_LENGTH = 4;

/**
 * The longest value scrubbed. A stream keeps the longest encoded form of a
 * secret as its tail between chunks, so this bounds the memory a scrub takes.
 */
export const MAX_SECRET_BYTES = 128 * 1024;

/** Values that appear in nearly every URL and glob of a trace. */
const SKIPPED_VALUES: ReadonlySet<string> = new Set(['/', '*', 'http://', 'https://']);

export function isScrubbable(value: string): boolean {
  if (SKIPPED_VALUES.has(value)) return false;
  if (value.trim() === '') return false;
  return [...value].length >= MIN_SECRET_LENGTH;
}

/** The distinct values worth scrubbing; throws SecretTooLargeError for one too long to handle. */
export function scrubbableSecrets(values: Iterable<string>): string[] {
  const secrets = new Set<string>();
  for (const value of values) {
    if (!isScrubbable(value)) continue;
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > MAX_SECRET_BYTES) {
      throw new SecretTooLargeError(`a secret of ${bytes} bytes is over the scrubber's limit of ${MAX_SECRET_BYTES}`);
    }
    secrets.add(value);
  }
  return [...secrets];
}
