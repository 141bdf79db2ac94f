import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { SCRUB_MARKER, Scrubber } from '../../src/scrub/index.js';
import { secretSpellings, spellingsFound } from '../support/secret-spellings.js';

const M = SCRUB_MARKER;

function scrubChunks(scrubber: Scrubber, chunks: Buffer[]): Promise<Buffer> {
  return buffer(Readable.from(chunks, { objectMode: false }).pipe(scrubber.createScrubStream()));
}

/** Deterministic chunk sizes, so a failure names a chunking that can be replayed. */
function* sizes(seed: number, max: number): Generator<number> {
  let state = seed;
  for (;;) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    yield 1 + (state % max);
  }
}

function chunked(data: Buffer, seed: number, max: number): Buffer[] {
  const chunks: Buffer[] = [];
  const size = sizes(seed, max);
  for (let start = 0; start < data.length; ) {
    const length = size.next().value as number;
    chunks.push(data.subarray(start, start + length));
    start += length;
  }
  return chunks;
}

describe('createScrubStream', () => {
  const secret = 'tök€n-😀-"secret"';
  const scrubber = new Scrubber([secret, 'other-value']);
  const basic = Buffer.from(`bob:${secret}`).toString('base64');
  const text =
    `${'x'.repeat(150)} plain ${secret} json ${JSON.stringify(secret)} url ${encodeURIComponent(secret)} ` +
    `basic ${basic} hex ${Buffer.from(secret).toString('hex')} other-value ${secret}${secret} end`;
  const input = Buffer.from(text, 'utf8');
  const expected = Buffer.from(scrubber.scrubText(text), 'utf8');

  it('scrubs bytes the same way scrubText scrubs the string', async () => {
    expect(spellingsFound(expected, secretSpellings(secret))).toEqual([]);
    expect(expected.toString()).toContain(`plain ${M} json "${M}" url ${M} `);
    expect(await scrubChunks(scrubber, [input])).toEqual(expected);
  });

  it('finds secrets split across two chunks at every split position, inside multi-byte characters too', async () => {
    for (let split = 0; split <= input.length; split++) {
      const output = await scrubChunks(scrubber, [input.subarray(0, split), input.subarray(split)]);
      expect(output.equals(expected), `split at byte ${split}`).toBe(true);
    }
  });

  it('finds secrets however the input is chunked, down to single bytes', async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const output = await scrubChunks(scrubber, chunked(input, seed, seed <= 20 ? 3 : 64));
      expect(output.equals(expected), `chunking seed ${seed}`).toBe(true);
    }
    const bytes = [...input].map((byte) => Buffer.from([byte]));
    expect((await scrubChunks(scrubber, bytes)).equals(expected)).toBe(true);
  });

  it('passes binary data without a secret through byte for byte, and replaces one inside it', async () => {
    const binary = Buffer.alloc(300_000);
    let state = 7;
    for (let index = 0; index < binary.length; index++) {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      binary[index] = state >>> 16;
    }
    expect((await scrubChunks(scrubber, chunked(binary, 3, 70_000))).equals(binary)).toBe(true);

    const withSecret = Buffer.concat([binary.subarray(0, 1000), Buffer.from(secret), binary.subarray(1000)]);
    const output = await scrubChunks(scrubber, chunked(withSecret, 5, 997));
    expect(output.equals(Buffer.concat([binary.subarray(0, 1000), Buffer.from(M), binary.subarray(1000)]))).toBe(true);
  });

  it('scrubs a 128 KB secret split across many chunks', async () => {
    const big = Buffer.alloc(128 * 1024, 'k3y!').toString('latin1');
    const own = new Scrubber([big]);
    const data = Buffer.from(`head ${big} mid ${Buffer.from(big).toString('base64')} tail`);
    const output = await scrubChunks(own, chunked(data, 11, 20_000));
    expect(output.toString()).toBe(`head ${M} mid ${M} tail`);
  });

  it('is a plain pass-through when there is nothing to scrub', async () => {
    const none = new Scrubber(['abc']);
    expect(none.active).toBe(false);
    expect((await scrubChunks(none, [input])).equals(input)).toBe(true);
  });
});
