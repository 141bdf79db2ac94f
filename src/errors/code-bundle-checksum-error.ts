import { OutpostError } from './outpost-error.js';

/** A downloaded code bundle's SHA-256 is not the one the job named: the bytes changed on the way or at rest, and are not run. */
export class CodeBundleChecksumError extends OutpostError {
  readonly code = 'CODE_BUNDLE_CHECKSUM_MISMATCH';
}
