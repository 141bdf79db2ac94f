import { OutpostError } from './outpost-error.js';

/** A file a script named as an artifact is larger than an artifact may be; it is not copied. */
export class ArtifactOverLimitError extends OutpostError {
  readonly code = 'ARTIFACT_TOO_LARGE';
}
