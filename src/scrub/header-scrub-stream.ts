/**
 * A newline-delimited JSON byte stream with sensitive header values replaced,
 * line by line. A line is held whole while it is read, whatever its length,
 * because JSON can only be rewritten once parsed; lines that need no change
 * pass on as the very bytes that came in.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { mayNameSensitiveHeader, scrubHeadersInLine } from './sensitive-headers.js';

const NEWLINE = 0x0a;

export class HeaderScrubStream extends Transform {
  readonly #replacement: string;
  /** The pieces of the line not yet ended by a newline. */
  #line: Buffer[] = [];

  constructor(replacement: string) {
    super();
    this.#replacement = replacement;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const output: Buffer[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      this.#line.push(chunk.subarray(start, newline + 1));
      output.push(this.#takeLine());
      start = newline + 1;
    }
    if (start < chunk.length) this.#line.push(chunk.subarray(start));
    if (output.length > 0) this.push(output.length === 1 ? output[0] : Buffer.concat(output));
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.#line.length > 0) this.push(this.#takeLine());
    callback();
  }

  #takeLine(): Buffer {
    const line = this.#line.length === 1 ? this.#line[0]! : Buffer.concat(this.#line);
    this.#line = [];
    // Header names are ASCII, so the check needs no UTF-8 decoding.
    if (!mayNameSensitiveHeader(line.toString('latin1'))) return line;
    const terminator = line.at(-1) === NEWLINE ? (line.at(-2) === 0x0d ? 2 : 1) : 0;
    const text = line.subarray(0, line.length - terminator).toString('utf8');
    const scrubbed = scrubHeadersInLine(text, this.#replacement);
    if (scrubbed === text) return line;
    return Buffer.concat([Buffer.from(scrubbed, 'utf8'), line.subarray(line.length - terminator)]);
  }
}
