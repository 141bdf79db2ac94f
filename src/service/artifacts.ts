import { createWriteStream } from 'node:fs';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export class ArtifactTooLargeError extends Error {
  readonly code = 'ARTIFACT_TOO_LARGE';
}

/**
 * Streams an upload to disk, never holding it in memory, and stops the moment
 * it passes `limit` bytes: nothing of an oversized upload is kept. The
 * SHA-256 is computed on the way, so a stored file is never read again to hash it.
 */
export async function storeArtifact(
  source: Readable,
  directory: string,
  fileName: string,
  limit: number,
): Promise<{ path: string; size: number; sha256: string }> {
  await mkdir(directory, { recursive: true });
  const path = join(directory, fileName);
  // Written aside and renamed over: an upload under the same name replaces the old
  // bytes, and a failed one leaves the previous artifact as it was.
  const partial = `${path}.${randomUUID()}.part`;
  let size = 0;
  const hash = createHash('sha256');
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > limit) callback(new ArtifactTooLargeError(`artifact exceeds ${limit} bytes`));
      else {
        hash.update(chunk);
        callback(null, chunk);
      }
    },
  });
  try {
    await pipeline(source, counter, createWriteStream(partial));
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return { path, size, sha256: hash.digest('hex') };
}
