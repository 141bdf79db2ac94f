#!/usr/bin/env node
/**
 * `outpost runtimes install <ids…>` without the rest of the CLI. The agent
 * image installs its runtimes with this in a stage that holds only the
 * installer (dist/runtimes and dist/errors, which load no npm package), so a
 * change anywhere else in the source leaves the runtimes' layer cached.
 */
import { OutpostError } from '../errors/index.js';
import { installRuntimes } from './install.js';

try {
  await installRuntimes(process.argv.slice(2), { progress: process.stdout });
} catch (error) {
  // Known failures say what went wrong in their message; anything else keeps its stack.
  console.error(error instanceof OutpostError ? error.message : error);
  process.exit(1);
}
