/**
 * How a sandbox runs Playwright: the runtime's Node.js with the permission
 * grants and heap size of one job directory. Cold and warm sandboxes start
 * with exactly these flags, so a script cannot tell them apart by what it may do.
 */
import { dirname, join } from 'node:path';
import { permissionFlags, quietWarningFlags } from '../sandbox/node-permissions.js';
import type { InstalledRuntime } from './multistep-runner.js';

export const PLAYWRIGHT_CONFIG_FILE = 'playwright.config.cjs';

/** `temp`: the job's private temporary directory (namespaces), where Playwright keeps its transform cache. */
export function nodeFlags(
  runtime: InstalledRuntime,
  root: string,
  memoryLimitBytes: number,
  chromiumPath: string | undefined,
  temp?: string,
): string[] {
  const maxOldSpaceMb = Math.max(128, Math.floor(memoryLimitBytes / 1024 / 1024 / 2));
  const own = [root, ...(temp ? [temp] : [])];
  return [
    ...quietWarningFlags(runtime.nodeJsVersion),
    ...permissionFlags(runtime.nodeJsVersion, {
      read: [runtime.directory, ...own, ...(chromiumPath ? [dirname(chromiumPath)] : [])],
      write: own,
    }),
    `--max-old-space-size=${maxOldSpaceMb}`,
  ];
}

/** Arguments after Playwright's cli.js. */
export function playwrightArgs(root: string): string[] {
  return ['test', '--config', join(root, PLAYWRIGHT_CONFIG_FILE)];
}
