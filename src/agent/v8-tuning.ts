import v8 from 'node:v8';

/**
 * V8 settings for an agent that runs for weeks. Neither can go in
 * NODE_OPTIONS. The images give them on node's command line
 * (`node <flags> cli.js`), which is the only way they take effect on
 * Node.js 24: its V8 no longer applies --liftoff-only set from within a
 * running process. Started any other way (`npm start`, `npx outpost`), the
 * agent sets them itself before anything else is loaded, which Node.js 20
 * and 22 honour. Measured in docs/performance.md.
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
export const AGENT_V8_FLAGS = ['--heap-growing-percent=20', '--liftoff-only'] as const;

/**
 * Set from within only, and only on a V8 that has them: Node.js 20's V8 (11)
 * does not, and refuses to start with an unknown flag on its command line, or
 * prints an error for one set from within.
 *
 * - Maglev, V8's middle tier from V8 12 (Node.js 22), hands each finished
 *   compilation job to a helper thread to be torn down. Under load the jobs
 *   pile up there faster than they go, their memory malloc'ed all the while:
 *   half of V8's peak malloc'ed memory in a loop of requests on Node.js 24.
 *   Torn down where they finish, each job's memory is back at once.
 */
const V8_MAJOR = Number(process.versions.v8.split('.')[0]);
export const AGENT_RUNTIME_V8_FLAGS: readonly string[] = V8_MAJOR >= 12 ? ['--no-maglev-destroy-on-background'] : [];

export function tuneV8ForLongRunningAgent(): void {
  for (const flag of [...AGENT_V8_FLAGS, ...AGENT_RUNTIME_V8_FLAGS]) v8.setFlagsFromString(flag);
}
