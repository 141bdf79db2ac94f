/**
 * One job's scrubber, as the script side uses it: texts and results in
 * memory, files streamed (zips entry by entry), built from the job's secrets.
 *
 * A file's declared content type is the script's word and decides nothing:
 * every file is scrubbed by what its first bytes say it is. A zip is rewritten
 * entry by entry (its entries are compressed, so a scan of its bytes would
 * see nothing); everything else — text, JSON, and "images" and "videos" too,
 * which may hold text whatever they are called — goes through the byte scrub,
 * which is binary-safe and leaves bytes without a secret as they were.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { ArchiveInvalidError } from '../errors/index.js';
import { Scrubber, scrubZipFile } from '../scrub/index.js';
import type { JobScrubber } from './script-harness/scrubbers.js';

/** A zip's local file header; and the end record alone, which is all an empty zip is. */
const ZIP_SIGNATURES = [Buffer.from('PK\x03\x04', 'latin1'), Buffer.from('PK\x05\x06', 'latin1')];

export function createJobScrubber(secrets: string[], options: { sensitiveHeaders: boolean }): JobScrubber {
  const scrubber = new Scrubber(secrets);
  return {
    text: (text) => scrubber.scrubText(text),
    value: <T>(value: T) => scrubber.scrubValue(value) as T,
    async file(input, output) {
      if (await looksLikeZip(input)) {
        try {
          await scrubZipFile(input, output, scrubber, { scrubSensitiveHeaders: options.sensitiveHeaders });
          return;
        } catch (error) {
          if (!(error instanceof ArchiveInvalidError)) throw error;
          // Not a zip after all (or a broken one): its bytes are still scrubbed, as any other file's.
          await rm(output, { force: true });
        }
      }
      await pipeline(createReadStream(input), scrubber.createScrubStream(), createWriteStream(output));
    },
  };
}

async function looksLikeZip(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return bytesRead === head.length && ZIP_SIGNATURES.some((signature) => signature.equals(head));
  } finally {
    await handle.close();
  }
}
