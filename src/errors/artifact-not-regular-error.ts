import { OutpostError } from './outpost-error.js';

/** A file a script named as an artifact is a directory, a FIFO, a socket or a device, not a regular file. */
export class ArtifactNotRegularError extends OutpostError {
  readonly code = 'ARTIFACT_NOT_REGULAR_FILE';
}
