import { OutpostError } from './outpost-error.js';

/** A code bundle cannot be unpacked: not a gzipped tar, truncated, or an entry that would land outside the project directory (an absolute path, .. or a link). */
export class CodeBundleInvalidError extends OutpostError {
  readonly code = 'CODE_BUNDLE_INVALID';
}
