import { OutpostError } from './outpost-error.js';

/**
 * A file a script named as an artifact is not one of the job's own: its path
 * leads out of the job's directory (a link, a swapped directory), it changed
 * between being checked and being opened, or it has other hard links.
 */
export class ArtifactNotContainedError extends OutpostError {
  readonly code = 'ARTIFACT_NOT_CONTAINED';
}
