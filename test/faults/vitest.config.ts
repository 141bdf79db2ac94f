import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The fault suite (npm run test:faults): real service, agent and redis-server
 * processes killed, paused and restarted. One file at a time, on a quiet
 * machine: the scenarios measure time. Its files end in .fault.ts, so the
 * main suite (test/**\/*.test.ts) never picks them up.
 */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../../', import.meta.url)),
    include: ['test/faults/**/*.fault.ts'],
    fileParallelism: false,
    maxWorkers: 1,
    // Each scenario bounds its own waits; these only catch a harness that hangs.
    testTimeout: 300_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
    reporters: ['default'],
  },
});
