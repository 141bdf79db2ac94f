/**
 * An artifact on its way out: a scrubbed copy made in a directory of the
 * agent's own (in the job's directory the script could have left a link under
 * the copy's name, and the agent would write through it), uploaded, removed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ArtifactRef } from '../protocol/agent-api.js';
import type { ArtifactUploader } from './artifact-uploader.js';
import type { JobScrubber } from './script-jobs.js';

export async function scrubAndUpload(
  scrubber: JobScrubber,
  uploader: ArtifactUploader,
  artifact: { jobId: string; name: string; contentType: string; path: string },
  signal?: AbortSignal,
): Promise<ArtifactRef> {
  const { jobId, name, contentType, path } = artifact;
  const scratch = await mkdtemp(join(tmpdir(), 'outpost-scrubbed-'));
  try {
    const scrubbed = join(scratch, 'artifact');
    try {
      await scrubber.file(path, scrubbed, contentType);
    } catch (error) {
      // What cannot be scrubbed is not sent; the rest of the result still is.
      uploader.failed('unscrubbable');
      const reason = error instanceof Error ? error.message : String(error);
      return { name, contentType, size: 0, uploaded: false, error: `not uploaded: it could not be scrubbed (${scrubber.text(reason)})` };
    }
    return await uploader.upload(jobId, name, contentType, scrubbed, signal);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
