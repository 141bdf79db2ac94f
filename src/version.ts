import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLED_VERSION } from './build-info.js';
import { INSTALL_ROOT } from './install-root.js';

export const VERSION: string =
  BUNDLED_VERSION ?? (JSON.parse(readFileSync(join(INSTALL_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
