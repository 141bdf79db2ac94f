import { OutpostError } from './outpost-error.js';

/** A file a script named as an artifact does not exist (or is a link to nothing). */
export class ArtifactMissingError extends OutpostError {
  readonly code = 'ARTIFACT_MISSING';
}
