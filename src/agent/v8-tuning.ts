import v8 from 'node:v8';

/**
 * V8 settings for an agent that runs for weeks, applied before anything else
 * is loaded. Both are read when they apply (at every collection; at each
 * WebAssembly compilation), which is why they can be set after start, and
 * neither can go in NODE_OPTIONS. Measured in docs/performance.md.
 *
 * - V8 grows the old generation by up to 4× its live size between full
 *   collections, so an agent whose live heap is ~30 MB climbs past 200 MB of
 *   RSS under a thousand checks a second, almost all of it garbage. A 20 %
 *   growth step keeps it near the live size, at the cost of more frequent
 *   (mostly concurrent) full collections; no hard heap limit, so a burst never
 *   ends in an out-of-memory crash.
 * - undici parses HTTP with llhttp compiled to WebAssembly. Its parser is one
 *   very large function; once hot, V8 recompiles it with its optimizing tier,
 *   which took some 40 MB of compiler memory for a tenth of a second, seconds
 *   after start: the agent's peak RSS. The baseline tier parses the few
 *   responses a second the agent gets from the service just as well.
 */
export function tuneV8ForLongRunningAgent(): void {
  v8.setFlagsFromString('--heap-growing-percent=20');
  v8.setFlagsFromString('--liftoff-only');
}
