/**
 * An artifact on its way out. The file the script left is copied once,
 * through a handle checked to be a regular file of the job's directory, into a
 * directory of the agent's own; the copy is scrubbed into a second file there
 * (in the job's directory the script could have left a link under either
 * name, and the agent would write through it), which is uploaded; both are
 * removed. Nothing after the copy reads the job's directory, so a link or a
 * FIFO swapped in once the path was checked is never followed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArtifactOverLimitError } from '../errors/index.js';
import { MAX_ARTIFACT_BYTES, type ArtifactRef } from '../protocol/agent-api.js';
import { safeArtifactLabel } from './artifact-label.js';
import type { ArtifactUploader } from './artifact-uploader.js';
import { copyContainedFile } from './sandbox/contained-file.js';
import type { JobScrubber } from './script-harness/scrubbers.js';

export interface ArtifactToUpload {
  jobId: string;
  name: string;
  contentType: string;
  /** The file, as the script named it. */
  path: string;
  /** The job's directory: the file must be a regular file inside it. */
  root: string;
}

export async function scrubAndUpload(
  scrubber: JobScrubber,
  uploader: ArtifactUploader,
  artifact: ArtifactToUpload,
  signal?: AbortSignal,
  options: { limitBytes?: number } = {},
): Promise<ArtifactRef> {
  // Callers pass safe labels already; whatever they passed, none leaves unscrubbed or outside the rule.
  const { name, contentType } = safeArtifactLabel(scrubber, { name: artifact.name, contentType: artifact.contentType });
  const scratch = await mkdtemp(join(tmpdir(), 'outpost-scrubbed-'));
  try {
    const original = join(scratch, 'original');
    const scrubbed = join(scratch, 'scrubbed');
    try {
      await copyContainedFile(artifact.path, artifact.root, original, options.limitBytes ?? MAX_ARTIFACT_BYTES);
    } catch (error) {
      uploader.failed(error instanceof ArtifactOverLimitError ? 'too_large' : 'unreadable');
      return { name, contentType, size: 0, uploaded: false, error: `not uploaded: ${scrubber.text(reasonOf(error))}` };
    }
    try {
      await scrubber.file(original, scrubbed, contentType);
    } catch (error) {
      // What cannot be scrubbed is not sent; the rest of the result still is.
      uploader.failed('unscrubbable');
      return { name, contentType, size: 0, uploaded: false, error: `not uploaded: it could not be scrubbed (${scrubber.text(reasonOf(error))})` };
    }
    // Half the scratch space back before the upload, which may take a while.
    await rm(original, { force: true });
    return await uploader.upload(artifact.jobId, name, contentType, scrubbed, signal);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
