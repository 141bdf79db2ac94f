import { OutpostError } from './outpost-error.js';

/** A zip archive could not be read: not a zip, truncated, or an entry's data is corrupt. */
export class ArchiveInvalidError extends OutpostError {
  readonly code = 'ARCHIVE_INVALID';
}
