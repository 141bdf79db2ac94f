import { createRequire } from 'node:module';

// package.json sits one level above both src/ and dist/.
const manifest = createRequire(import.meta.url)('../package.json') as { version: string };

export const VERSION: string = manifest.version;
