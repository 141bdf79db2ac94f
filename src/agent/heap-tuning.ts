import v8 from 'node:v8';

/**
 * V8 grows the old generation by up to 4× its live size between full
 * collections, so an agent whose live heap is ~30 MB climbs past 200 MB of RSS
 * under a thousand checks a second, almost all of it garbage. A 20 % growth
 * step keeps it near 140 MB, at the cost of more frequent (mostly concurrent)
 * full collections; no hard heap limit, so a burst never ends in an
 * out-of-memory crash. The flag is read at every collection, which is why it
 * can be set after start. Measured in docs/performance.md.
 */
export function tuneHeapForLongRunningAgent(): void {
  v8.setFlagsFromString('--heap-growing-percent=20');
}
