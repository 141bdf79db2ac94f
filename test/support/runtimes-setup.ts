import { installRuntimes } from '../../src/runtimes/install.js';
import { matchesLockfile, runtimePaths } from '../../src/runtimes/installed.js';

/** The runtimes every test may rely on being installed in the project's runtimes/ directory. */
export const TEST_RUNTIMES = ['2026.04', '2025.04'];

/**
 * vitest global setup: installs the test runtimes once per run. When they
 * already match their lockfiles this is a file read each and prints nothing;
 * the first run downloads them (two Node.js binaries, Playwright) and shows it.
 */
export default async function setup(): Promise<void> {
  const current = TEST_RUNTIMES.every((id) => matchesLockfile(runtimePaths(id).dir));
  await installRuntimes(TEST_RUNTIMES, { progress: current ? undefined : process.stdout });
}
