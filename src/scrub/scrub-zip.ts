/**
 * A zip (a Playwright trace.zip) rewritten entry by entry, each entry's bytes
 * streamed through the scrubber: neither the archive nor any one entry is
 * ever held whole. Entries keep their order, times, modes and whether they
 * were compressed; one with nothing to replace comes out byte-identical.
 * Their names are scrubbed too (a resource named after a token).
 *
 * Nothing else of the input is carried over: the writer makes every header
 * afresh, with no archive comment, no entry comments and only its own extra
 * fields, so whatever the input held there (or in bytes between entries, or
 * in local headers that disagree with the central directory) stays behind.
 */
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline, type Readable } from 'node:stream';
import { pipeline as pipelineAsync } from 'node:stream/promises';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { ArchiveInvalidError } from '../errors/index.js';
import { HeaderScrubStream } from './header-scrub-stream.js';
import { SCRUB_MARKER } from './marker.js';
import type { Scrubber } from './scrubber.js';

export interface ScrubZipOptions {
  /** Also replace the values of credential headers in the trace's NDJSON entries (runtime 2025.04 and later). */
  scrubSensitiveHeaders?: boolean;
}

/** Playwright's newline-delimited JSON entries: trace.trace, trace.network, and per-context 1-trace.trace and so on. */
const NDJSON_ENTRY = /\.(trace|network)$/;

const COMPRESSION_STORED = 0;

type Fail = (error: unknown) => void;
type EntryTransform = (name: string, data: Readable, fail: Fail) => NodeJS.ReadableStream;

export async function scrubZipFile(
  inputPath: string,
  outputPath: string,
  scrubber: Scrubber,
  options: ScrubZipOptions = {},
): Promise<void> {
  const scrubHeaders = options.scrubSensitiveHeaders === true;
  const input = await openArchive(inputPath);
  try {
    const entries = await readEntries(input);
    const names = scrubbedNames(entries, scrubber);
    await writeArchive(input, entries, names, outputPath, (name, data, fail) => {
      // pipeline calls back with undefined when the entry went through.
      const done = (error?: NodeJS.ErrnoException | null): void => {
        if (error) fail(new ArchiveInvalidError(`${name}: ${error.message}`, { cause: error }));
      };
      if (scrubHeaders && NDJSON_ENTRY.test(name)) {
        return pipeline(data, new HeaderScrubStream(SCRUB_MARKER), scrubber.createScrubStream(), done);
      }
      return pipeline(data, scrubber.createScrubStream(), done);
    });
  } catch (error) {
    // A half-written archive must not be mistaken for a scrubbed one.
    await rm(outputPath, { force: true });
    throw error;
  } finally {
    input.close();
  }
}

async function writeArchive(
  input: yauzl.ZipFile,
  entries: yauzl.Entry[],
  names: (string | undefined)[],
  outputPath: string,
  transform: EntryTransform,
): Promise<void> {
  const output = new yazl.ZipFile();
  const written = pipelineAsync(output.outputStream, createWriteStream(outputPath));
  // The writer pipes entries with pipe(), which passes no errors on: they come here.
  let fail: Fail = () => undefined;
  const failed = new Promise<never>((_resolve, reject) => {
    fail = reject;
  });
  output.on('error', fail);
  try {
    for (const [index, entry] of entries.entries()) {
      const name = names[index];
      if (name !== undefined) copyEntry(input, entry, name, output, transform, fail);
    }
    output.end();
    await Promise.race([written, failed]);
  } catch (error) {
    (output.outputStream as Readable).destroy();
    await written.catch(() => undefined);
    throw error;
  }
}

function copyEntry(
  input: yauzl.ZipFile,
  entry: yauzl.Entry,
  name: string,
  output: yazl.ZipFile,
  transform: EntryTransform,
  fail: Fail,
): void {
  const metadata = { mtime: entry.getLastModDate(), mode: entryMode(entry) };
  try {
    if (name.endsWith('/')) {
      output.addEmptyDirectory(name, metadata);
      return;
    }
    const compress = entry.compressionMethod !== COMPRESSION_STORED;
    // Lazily: an entry is opened only when the writer reaches it, so one entry is in flight at a time.
    output.addReadStreamLazy(name, { ...metadata, compress }, (callback) => {
      input.openReadStream(entry, (error, data) => {
        if (error !== null) return fail(new ArchiveInvalidError(`${name}: ${error.message}`, { cause: error }));
        callback(null, transform(name, data, fail));
      });
    });
  } catch (error) {
    // The writer refuses names no zip should hold: absolute paths, "..".
    throw new ArchiveInvalidError(`${name}: ${(error as Error).message}`, { cause: error });
  }
}

/** A name's UTF-8 bytes must fit the zip's 16-bit length field. */
const MAX_NAME_BYTES = 0xffff;

/**
 * Each entry's name as written: scrubbed, and still one a zip may hold and no
 * other entry has. A name that scrubbing turned into one already taken gets a
 * number (a directory that repeats is written once: undefined); one that is
 * no longer a valid name becomes `entry-<n>`. Never a reason to fail.
 */
function scrubbedNames(entries: yauzl.Entry[], scrubber: Scrubber): (string | undefined)[] {
  const taken = new Set<string>();
  return entries.map((entry, index) => {
    const directory = entry.fileName.endsWith('/');
    let name = scrubbedName(entry, scrubber);
    if (directory && !name.endsWith('/')) name += '/';
    if (!directory && name.endsWith('/')) name = name.replace(/\/+$/, '');
    if (!validName(name)) name = directory ? `entry-${index + 1}/` : `entry-${index + 1}`;
    if (taken.has(name)) {
      if (directory) return undefined;
      name = numbered(name, taken);
    }
    taken.add(name);
    return name;
  });
}

/**
 * The name as the reader decoded it, scrubbed. A name stored without the
 * UTF-8 flag is decoded as CP437, which spells a non-ASCII secret's UTF-8
 * bytes as other characters: the stored bytes are read as UTF-8 too, and a
 * secret found that way means that reading, scrubbed, is the name.
 */
function scrubbedName(entry: yauzl.Entry, scrubber: Scrubber): string {
  const raw = (entry.fileNameRaw as Buffer | undefined)?.toString('utf8');
  if (raw !== undefined) {
    const scrubbedRaw = scrubber.scrubText(raw);
    if (scrubbedRaw !== raw) return scrubbedRaw.replace(/\\/g, '/');
  }
  return scrubber.scrubText(entry.fileName);
}

/** What the writer takes: not empty, not absolute, no "..", and not too long. */
function validName(name: string): boolean {
  const bare = name.endsWith('/') ? name.slice(0, -1) : name;
  return (
    bare !== '' &&
    !/^[a-zA-Z]:/.test(name) &&
    !name.startsWith('/') &&
    !name.includes('\\') &&
    !name.split('/').includes('..') &&
    Buffer.byteLength(name) <= MAX_NAME_BYTES - 16
  );
}

/** `name-2.ext`, `name-3.ext`…: the first not taken. */
function numbered(name: string, taken: Set<string>): string {
  const slash = name.lastIndexOf('/');
  const dot = name.lastIndexOf('.');
  const cut = dot > slash + 1 ? dot : name.length;
  for (let number = 2; ; number++) {
    const candidate = `${name.slice(0, cut)}-${number}${name.slice(cut)}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Unix permission bits, when the archive was made on a system that records them. */
function entryMode(entry: yauzl.Entry): number | undefined {
  const mode = entry.externalFileAttributes >>> 16;
  return mode === 0 ? undefined : mode;
}

async function openArchive(path: string): Promise<yauzl.ZipFile> {
  try {
    return await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, decodeStrings: true });
  } catch (error) {
    throw asArchiveError(error);
  }
}

/** The central directory only: names and metadata, no entry data. */
function readEntries(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on('entry', (entry: yauzl.Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', (error: unknown) => reject(asArchiveError(error)));
    zip.readEntry();
  });
}

/** File system errors stay as they are; anything else yauzl reports means the archive is bad. */
function asArchiveError(error: unknown): Error {
  if (error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string') return error;
  return new ArchiveInvalidError(error instanceof Error ? error.message : String(error), { cause: error });
}
