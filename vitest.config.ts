import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Runtimes 2026.04 and 2025.04 installed before any test file starts (skipped when already there).
    globalSetup: ['test/support/runtimes-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: end-to-end files start a service, an agent and Redis each.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
