import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory Outpost is installed in: the nearest one above this module
 * that holds package.json. Found rather than assumed, because the module sits
 * at different depths in src/, dist/ and the agent bundle (dist/agent-bundle/).
 */
export const INSTALL_ROOT: string = findInstallRoot(dirname(fileURLToPath(import.meta.url)));

function findInstallRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return dirname(start);
  }
}
