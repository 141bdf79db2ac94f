/**
 * One job's scrubber, as the script side uses it: texts and results in
 * memory, files streamed (zips entry by entry), built from the job's secrets.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Scrubber, scrubZipFile } from '../scrub/index.js';
import type { JobScrubber } from './script-jobs.js';

const TEXT_TYPES = /^(text\/|application\/(json|x-ndjson|xml))/;

export function createJobScrubber(secrets: string[], options: { sensitiveHeaders: boolean }): JobScrubber {
  const scrubber = new Scrubber(secrets);
  return {
    text: (text) => scrubber.scrubText(text),
    value: <T>(value: T) => scrubber.scrubValue(value) as T,
    async file(input, output, contentType) {
      if (contentType === 'application/zip') {
        await scrubZipFile(input, output, scrubber, { scrubSensitiveHeaders: options.sensitiveHeaders });
      } else if (TEXT_TYPES.test(contentType)) {
        await pipeline(createReadStream(input), scrubber.createScrubStream(), createWriteStream(output));
      } else {
        // Screenshots and videos hold pixels, not text a secret could be found in.
        await pipeline(createReadStream(input), createWriteStream(output));
      }
    },
  };
}
