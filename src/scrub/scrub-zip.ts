/**
 * A zip (a Playwright trace.zip) rewritten entry by entry, each entry's bytes
 * streamed through the scrubber: neither the archive nor any one entry is
 * ever held whole. Entries keep their names, order, times, modes and whether
 * they were compressed; one with nothing to replace comes out byte-identical.
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
    await writeArchive(input, entries, outputPath, (name, data, fail) => {
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
    for (const entry of entries) copyEntry(input, entry, output, transform, fail);
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
  output: yazl.ZipFile,
  transform: EntryTransform,
  fail: Fail,
): void {
  const name = entry.fileName;
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
