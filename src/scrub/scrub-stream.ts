/**
 * A byte stream with every pattern replaced, whatever the chunking. Bytes are
 * handled as latin1 text, one character per byte, and the patterns as the
 * latin1 spelling of their UTF-8 bytes: the round trip is exact for any data,
 * binary included, and a multi-byte character split across chunks needs no
 * decoding to be matched.
 */
import { Transform, type TransformCallback } from 'node:stream';
import type { PatternMatcher } from './pattern-matcher.js';

export class ScrubStream extends Transform {
  readonly #matcher: PatternMatcher;
  readonly #replacement: string;
  /** A match starting in the last longest − 1 characters may still run into the next chunk. */
  readonly #tail: number;
  #pending = '';

  constructor(matcher: PatternMatcher, replacement: string) {
    super();
    this.#matcher = matcher;
    this.#replacement = replacement;
    this.#tail = Math.max(matcher.longest - 1, 0);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#pending += chunk.toString('latin1');
    // At least as much new data as tail before a scan, so a long tail is not rescanned for every small chunk.
    if (this.#pending.length > 2 * this.#tail) this.#scrub(false);
    callback();
  }

  override _flush(callback: TransformCallback): void {
    this.#scrub(true);
    callback();
  }

  #scrub(final: boolean): void {
    const text = this.#pending;
    const until = final ? text.length : text.length - this.#tail;
    const { output, consumed } = this.#matcher.replaceBefore(text, until, this.#replacement);
    if (output.length > 0) this.push(Buffer.from(output, 'latin1'));
    this.#pending = text.slice(consumed);
  }
}
