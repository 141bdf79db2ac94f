export { Scrubber } from './scrubber.js';
export { scrubZipFile, type ScrubZipOptions } from './scrub-zip.js';
export { SCRUB_MARKER } from './marker.js';
export { MIN_SECRET_LENGTH, MAX_SECRET_BYTES } from './scrubbable.js';
