import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCRUB_MARKER, Scrubber } from '../../src/scrub/index.js';

const MiB = 1024 * 1024;
const BLOCKS = 150;
const SECRET = 'large-file-secret-Ünïcode-42';
const SECRET_BYTES = Buffer.from(SECRET);
const BASIC = Buffer.from(`Basic ${Buffer.from(`u:${SECRET}`).toString('base64')}`);

/** One MiB of trace-like text lines, the same every run. */
function textBlock(): Buffer {
  const lines: string[] = [];
  let state = 17;
  let size = 0;
  while (size < MiB) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const line = `{"type":"log","time":${state},"message":"request ${state.toString(36)} done in ${state % 997} ms"}\n`;
    lines.push(line);
    size += line.length;
  }
  return Buffer.from(lines.join('')).subarray(0, MiB);
}

/** Counts occurrences of `needle` in a byte stream, across chunk boundaries. */
function counter(needle: Buffer): Writable & { count: number } {
  let tail = Buffer.alloc(0);
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      const data = Buffer.concat([tail, chunk]);
      for (let at = data.indexOf(needle); at !== -1; at = data.indexOf(needle, at + needle.length)) sink.count++;
      // Keep less than one needle, so no occurrence is counted twice.
      tail = data.subarray(Math.max(0, data.length - (needle.length - 1)));
      callback();
    },
  }) as Writable & { count: number };
  sink.count = 0;
  return sink;
}

describe('scrub stream on a large file', () => {
  let directory: string;
  let input: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'outpost-scrub-large-'));
    input = join(directory, 'large.ndjson');
    const block = textBlock();
    const out = createWriteStream(input);
    for (let index = 0; index < BLOCKS; index++) {
      const copy = Buffer.from(block);
      // Around the 64 KiB read boundaries, at a different byte each time, so some are split.
      const at = 64 * 1024 * (1 + (index % 15)) - (index % SECRET_BYTES.length);
      SECRET_BYTES.copy(copy, at);
      BASIC.copy(copy, at < MiB / 2 ? at + 300_000 + index : at - 300_000 - index);
      if (!out.write(copy)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('scrubs 150 MB with memory growth far below the file size', async () => {
    const scrubber = new Scrubber([SECRET]);
    const output = join(directory, 'scrubbed.ndjson');
    const before = process.memoryUsage();
    let peakRss = before.rss;
    let peakArrayBuffers = before.arrayBuffers;
    let chunks = 0;
    const sampler = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        if (chunks++ % 16 === 0) {
          const now = process.memoryUsage();
          peakRss = Math.max(peakRss, now.rss);
          peakArrayBuffers = Math.max(peakArrayBuffers, now.arrayBuffers);
        }
        callback(null, chunk);
      },
    });
    await pipeline(createReadStream(input), scrubber.createScrubStream(), sampler, createWriteStream(output));

    expect((await stat(input)).size).toBe(BLOCKS * MiB);
    expect(peakRss - before.rss).toBeLessThan(64 * MiB);
    expect(peakArrayBuffers - before.arrayBuffers).toBeLessThan(64 * MiB);

    const secrets = counter(SECRET_BYTES);
    const markers = counter(Buffer.from(SCRUB_MARKER));
    await pipeline(createReadStream(output), new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        secrets.write(chunk);
        callback(null, chunk);
      },
    }), markers);
    expect(secrets.count).toBe(0);
    // Each block held the secret once and once inside a Basic credential.
    expect(markers.count).toBe(2 * BLOCKS);
  }, 60_000);
});
