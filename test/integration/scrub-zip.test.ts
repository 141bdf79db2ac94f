import { createHash } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { errorCode } from '../../src/errors/index.js';
import { SCRUB_MARKER, Scrubber, scrubZipFile } from '../../src/scrub/index.js';
import { secretSpellings, spellingsFound } from '../support/secret-spellings.js';
import { readZip, type ReadEntry } from '../support/zip.js';

const M = SCRUB_MARKER;
const SECRET = 'Pa55-wörd/"q"&+x';
const OTHER_SECRET = 'second-secret-value';
const spellings = [...secretSpellings(SECRET), ...secretSpellings(OTHER_SECRET)];

interface Entry {
  name: string;
  data: Buffer;
  compress: boolean;
}

function pseudoRandom(length: number, seed: number): Buffer {
  const data = Buffer.alloc(length);
  let state = seed;
  for (let index = 0; index < length; index++) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    data[index] = state >>> 16;
  }
  return data;
}

function sha1(data: Buffer): string {
  return createHash('sha1').update(data).digest('hex');
}

function ndjson(...lines: unknown[]): Buffer {
  return Buffer.from(`${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
}

const basicAuth = `Basic ${Buffer.from(`alice:${SECRET}`).toString('base64')}`;
const traceTrace = ndjson(
  {
    type: 'context-options',
    version: 8,
    options: { extraHTTPHeaders: [{ name: 'X-Api-Key', value: 'operator-key-1' }] },
  },
  { type: 'before', callId: 'call@1', apiName: 'page.fill', params: { selector: '#password', value: SECRET } },
  {
    type: 'before',
    callId: 'call@2',
    apiName: 'apiRequestContext.fetch',
    params: {
      url: `https://api.test/login?token=${encodeURIComponent(SECRET)}`,
      headers: [{ name: 'Authorization', value: basicAuth }],
    },
  },
  { type: 'console', messageType: 'log', text: `logged in with ${JSON.stringify({ password: SECRET })}` },
  { type: 'log', callId: 'call@3', message: `second ${OTHER_SECRET} and ${Buffer.from(OTHER_SECRET).toString('hex')}` },
  { type: 'after', callId: 'call@3', result: { value: 'nothing secret' } },
);
const bodyWithSecret = Buffer.from(JSON.stringify({ access_token: SECRET, user: 'alice' }));
const traceNetwork = ndjson({
  type: 'resource-snapshot',
  snapshot: {
    request: {
      method: 'POST',
      url: 'https://app.test/session',
      headers: [
        { name: 'cookie', value: 'session=s-12345' },
        { name: 'accept', value: 'application/json' },
      ],
      postData: { _sha1: `${sha1(bodyWithSecret)}.json` },
    },
    response: {
      status: 200,
      headers: [
        { name: 'Set-Cookie', value: 'session=s-67890; HttpOnly' },
        { name: 'x-auth-token', value: 'server-token-2' },
      ],
      content: { _sha1: `${sha1(bodyWithSecret)}.json` },
    },
  },
});
const image = pseudoRandom(400_000, 1);
const binaryWithSecret = Buffer.concat([pseudoRandom(70_000, 2), Buffer.from(SECRET), pseudoRandom(70_000, 3)]);
const stacks = Buffer.from(JSON.stringify({ files: ['/app/login.spec.ts'], stacks: [[1, [[0, 12, 5, 'login']]]] }));
// Long enough to cross many read chunks, with secrets wherever they fall.
const bigLog = Buffer.from(
  Array.from({ length: 40_000 }, (_unused, line) =>
    line % 997 === 0 ? `line ${line} ${SECRET}` : `line ${line} ok ${'-'.repeat(line % 80)}`,
  ).join('\n'),
);

const entries: Entry[] = [
  { name: 'trace.trace', data: traceTrace, compress: true },
  { name: 'trace.network', data: traceNetwork, compress: true },
  { name: 'trace.stacks', data: stacks, compress: true },
  { name: `resources/${sha1(bodyWithSecret)}.json`, data: bodyWithSecret, compress: true },
  { name: `resources/${sha1(image)}.png`, data: image, compress: false },
  { name: `resources/${sha1(binaryWithSecret)}`, data: binaryWithSecret, compress: false },
  { name: 'resources/console.log', data: bigLog, compress: true },
];
// No secret in these; trace.network's credentials are headers, which only the header option touches.
const untouched = new Set(['trace.stacks', 'trace.network', `resources/${sha1(image)}.png`]);

async function writeZip(path: string, files: Entry[]): Promise<void> {
  const zip = new yazl.ZipFile();
  const mtime = new Date('2025-01-02T03:04:06Z');
  zip.addEmptyDirectory('resources/', { mtime });
  for (const file of files) zip.addBuffer(file.data, file.name, { compress: file.compress, mtime });
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(path));
}

describe('scrubZipFile', () => {
  let directory: string;
  let input: string;
  const scrubber = new Scrubber([SECRET, OTHER_SECRET]);

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'outpost-scrub-zip-'));
    input = join(directory, 'trace.zip');
    await writeZip(input, entries);
    // The fixture does hold every kind of leak the scrubber must catch.
    const original = await readZip(input);
    expect(original.flatMap((entry) => spellingsFound(entry.data, spellings)).length).toBeGreaterThan(5);
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('scrubs every form of every secret in every entry, and leaves entries without one byte-identical', async () => {
    const output = join(directory, 'scrubbed.zip');
    await scrubZipFile(input, output, scrubber);
    const scrubbed = await readZip(output);
    expect(scrubbed.map((entry) => entry.name)).toEqual(['resources/', ...entries.map((entry) => entry.name)]);
    for (const [index, entry] of entries.entries()) {
      const after = scrubbed[index + 1]!;
      expect(spellingsFound(after.data, spellings), entry.name).toEqual([]);
      expect(after.compressionMethod, entry.name).toBe(entry.compress ? 8 : 0);
      if (untouched.has(entry.name)) expect(after.data.equals(entry.data), entry.name).toBe(true);
      else expect(after.data.equals(entry.data), entry.name).toBe(false);
    }
    const byName = new Map(scrubbed.map((entry) => [entry.name, entry.data]));
    const secretEnd = 70_000 + Buffer.byteLength(SECRET);
    const binaryScrubbed = Buffer.concat([
      binaryWithSecret.subarray(0, 70_000),
      Buffer.from(M),
      binaryWithSecret.subarray(secretEnd),
    ]);
    expect(byName.get(`resources/${sha1(binaryWithSecret)}`)!.equals(binaryScrubbed)).toBe(true);
    const body = JSON.parse(byName.get(`resources/${sha1(bodyWithSecret)}.json`)!.toString());
    expect(body).toEqual({ access_token: M, user: 'alice' });
    expect(byName.get('resources/console.log')!.toString()).toBe(bigLog.toString().replaceAll(SECRET, M));
    const lines = byName.get('trace.trace')!.toString().trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines[1].params.value).toBe(M);
    expect(lines[2].params.url).toBe(`https://api.test/login?token=${M}`);
    expect(lines[3].text).toBe(`logged in with {"password":"${M}"}`);
    // Headers are left alone unless asked for: this one holds no secret.
    expect(lines[0].options.extraHTTPHeaders[0].value).toBe('operator-key-1');
  });

  it('replaces credential header values in the NDJSON entries when asked to', async () => {
    const output = join(directory, 'headers.zip');
    await scrubZipFile(input, output, scrubber, { scrubSensitiveHeaders: true });
    const byName = new Map((await readZip(output)).map((entry) => [entry.name, entry.data]));
    const trace = byName.get('trace.trace')!.toString().trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(trace[0].options.extraHTTPHeaders).toEqual([{ name: 'X-Api-Key', value: M }]);
    expect(trace[2].params.headers).toEqual([{ name: 'Authorization', value: M }]);
    const network = JSON.parse(byName.get('trace.network')!.toString());
    expect(network.snapshot.request.headers).toEqual([
      { name: 'cookie', value: M },
      { name: 'accept', value: 'application/json' },
    ]);
    expect(network.snapshot.response.headers).toEqual([
      { name: 'Set-Cookie', value: M },
      { name: 'x-auth-token', value: M },
    ]);
    expect(byName.get('trace.stacks')!.equals(stacks)).toBe(true);
    expect(byName.get(`resources/${sha1(image)}.png`)!.equals(image)).toBe(true);
  });

  it('copies the archive unchanged in content when there is no secret to scrub', async () => {
    const output = join(directory, 'copy.zip');
    await scrubZipFile(input, output, new Scrubber([]));
    const copy = await readZip(output);
    const original = await readZip(input);
    const digests = (read: ReadEntry[]): string[][] => read.map((entry) => [entry.name, sha1(entry.data)]);
    expect(digests(copy)).toEqual(digests(original));
  });

  it('refuses a file that is not a zip, leaving no output behind', async () => {
    const notZip = join(directory, 'not.zip');
    await writeFile(notZip, 'this is not a zip archive at all'.repeat(10));
    const output = join(directory, 'never.zip');
    const failure = await scrubZipFile(notZip, output, scrubber).catch((error: unknown) => error);
    expect(errorCode(failure)).toBe('ARCHIVE_INVALID');
    expect(existsSync(output)).toBe(false);
  });

  it('fails on an entry whose data is corrupt, leaving no output behind', async () => {
    const corrupt = join(directory, 'corrupt.zip');
    const zip = new yazl.ZipFile();
    zip.addBuffer(pseudoRandom(30_000, 4), 'resources/body', { compress: true });
    zip.end();
    const bytes = await buffer(zip.outputStream);
    // Garble the middle of the entry's deflate stream; the directory at the end stays readable.
    for (let offset = 1000; offset < 1100; offset++) bytes[offset] = 0xff;
    await writeFile(corrupt, bytes);
    const output = join(directory, 'never2.zip');
    const failure = await scrubZipFile(corrupt, output, scrubber).catch((error: unknown) => error);
    expect(errorCode(failure)).toBe('ARCHIVE_INVALID');
    expect(existsSync(output)).toBe(false);
  });
});

describe('scrubZipFile on what the archive says besides its entries\' data', () => {
  let directory: string;
  const scrubber = new Scrubber([SECRET, OTHER_SECRET]);

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'outpost-scrub-zip-names-'));
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  async function zipOf(files: { name: string; data?: string; comment?: string }[], comment?: string): Promise<Buffer> {
    const zip = new yazl.ZipFile();
    for (const file of files) {
      if (file.name.endsWith('/')) zip.addEmptyDirectory(file.name);
      else zip.addBuffer(Buffer.from(file.data ?? 'no secret here'), file.name, { compress: false, ...(file.comment ? { fileComment: file.comment } : {}) });
    }
    zip.end(comment === undefined ? undefined : { comment, forceZip64Format: false });
    return buffer(zip.outputStream);
  }

  async function scrubbed(bytes: Buffer, label: string): Promise<{ names: string[]; raw: Buffer; entries: ReadEntry[] }> {
    const input = join(directory, `${label}.zip`);
    const output = join(directory, `${label}-scrubbed.zip`);
    await writeFile(input, bytes);
    await scrubZipFile(input, output, scrubber);
    const entries = await readZip(output);
    const raw = await readFile(output);
    return { names: entries.map((entry) => entry.name), raw, entries };
  }

  it('scrubs a secret, in any spelling, out of entry names, keeping the rest of the name', async () => {
    const base64 = Buffer.from(OTHER_SECRET).toString('base64');
    const { names, raw } = await scrubbed(
      await zipOf([
        { name: `resources/${OTHER_SECRET}.json` },
        { name: `resources/b64-${base64}.png` },
        { name: `resources/${encodeURIComponent(SECRET)}` },
        { name: `nested/${SECRET}.txt` },
      ]),
      'names',
    );
    expect(names).toEqual([`resources/${M}.json`, `resources/b64-${M}.png`, `resources/${M}`, `nested/${M}.txt`]);
    // Nothing of the names is left anywhere in the archive: not in local headers, not in the central directory.
    expect(spellingsFound(raw, spellings)).toEqual([]);
  });

  it('gives names that scrubbing made the same a number each, and writes a repeated directory once', async () => {
    const { names, entries } = await scrubbed(
      await zipOf([
        { name: `${SECRET}/` },
        { name: `${OTHER_SECRET}/` },
        { name: `${SECRET}/a.txt`, data: 'first' },
        { name: `${OTHER_SECRET}/a.txt`, data: 'second' },
        { name: `x-${SECRET}`, data: 'third' },
        { name: `x-${OTHER_SECRET}`, data: 'fourth' },
      ]),
      'duplicates',
    );
    expect(names).toEqual([`${M}/`, `${M}/a.txt`, `${M}/a-2.txt`, `x-${M}`, `x-${M}-2`]);
    expect(entries.map((entry) => entry.data.toString())).toEqual(['', 'first', 'second', 'third', 'fourth']);
  });

  it('finds a non-ASCII secret in a name stored without the UTF-8 flag (read as CP437)', async () => {
    const bytes = await zipOf([{ name: `res/${SECRET}.bin` }]);
    // Clear the UTF-8 flag in the central directory, where the reader takes names from.
    const central = bytes.indexOf(Buffer.from('PK\x01\x02', 'latin1'));
    bytes.writeUInt16LE(bytes.readUInt16LE(central + 8) & ~0x800, central + 8);
    const { names, raw } = await scrubbed(bytes, 'cp437');
    expect(names).toEqual([`res/${M}.bin`]);
    expect(spellingsFound(raw, spellings)).toEqual([]);
  });

  it('drops the archive comment and the entries\' comments', async () => {
    const { raw } = await scrubbed(
      await zipOf([{ name: 'trace.trace', comment: `entry comment ${OTHER_SECRET}` }], `archive comment ${OTHER_SECRET}`),
      'comments',
    );
    expect(raw.includes('comment')).toBe(false);
    expect(spellingsFound(raw, spellings)).toEqual([]);
  });
});
