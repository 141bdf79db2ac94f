/**
 * One job's scrubber: built once from the job's secret values, then used on
 * everything the job reports before it leaves the machine.
 */
import { PassThrough, type Transform } from 'node:stream';
import { SCRUB_MARKER } from './marker.js';
import { PatternMatcher } from './pattern-matcher.js';
import { ScrubStream } from './scrub-stream.js';
import { scrubDeep } from './scrub-value.js';
import { scrubbableSecrets } from './scrubbable.js';
import { secretForms } from './secret-forms.js';

export class Scrubber {
  /** Matches in JavaScript strings. */
  readonly #text: PatternMatcher;
  /** Matches in bytes read as latin1: each form spelled as its UTF-8 bytes. */
  readonly #bytes: PatternMatcher;

  /**
   * `secrets`: the values of the agent's SERVICE_SECRET_* variables and of the
   * check's secret variables. Values on the skip list are ignored; one over
   * MAX_SECRET_BYTES throws SecretTooLargeError.
   */
  constructor(secrets: Iterable<string>) {
    const forms = scrubbableSecrets(secrets).flatMap(secretForms);
    this.#text = new PatternMatcher(forms);
    this.#bytes = new PatternMatcher(forms.map((form) => Buffer.from(form, 'utf8').toString('latin1')));
  }

  /** Whether there is anything to scrub; when not, every method returns its input unchanged. */
  get active(): boolean {
    return !this.#text.empty;
  }

  scrubText(text: string): string {
    return this.active ? this.#text.replaceAll(text, SCRUB_MARKER) : text;
  }

  /** Every string in a JSON value, object keys included; numbers that spell a secret become the marker. */
  scrubValue(value: unknown): unknown {
    return this.active ? scrubDeep(value, (text) => this.#text.replaceAll(text, SCRUB_MARKER)) : value;
  }

  /** A byte stream scrubbed as it passes, with memory bounded by the longest form, not by the input. */
  createScrubStream(): Transform {
    return this.active ? new ScrubStream(this.#bytes, SCRUB_MARKER) : new PassThrough();
  }
}
