/**
 * The program a sandbox runs for one phase of an API check (its setup
 * scripts, or its teardown scripts): written into the phase's own directory
 * and run by the runtime's Node.js. It reads `input.json`, runs each script in
 * order as the body of an async function with `request` (and, in teardown,
 * `response`) in scope and `require` resolving from the runtime, each within
 * its own time limit, and writes `output.json`: the request and response as
 * the scripts left them, their console output, and the first failure.
 * `progress.json` names the script running, for a run the agent had to kill.
 */
export const SANDBOX_PROGRAM_FILE = 'api-scripts.mjs';
export const INPUT_FILE = 'input.json';
export const OUTPUT_FILE = 'output.json';
export const PROGRESS_FILE = 'progress.json';

export interface PhaseInput {
  phase: 'setup' | 'teardown';
  timeoutMs: number;
  scripts: { origin: string; script: string }[];
  request: unknown;
  response: unknown;
}

export interface PhaseOutput {
  request: unknown;
  response: unknown;
  logs: { time: string; level: string; message: string }[];
  failure: { index: number; origin: string; timedOut: boolean; message: string } | null;
}

export const SANDBOX_PROGRAM = String.raw`// Written by the agent for one phase of one API check run.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { format } from 'node:util';

const root = process.argv[2];
const input = JSON.parse(readFileSync(join(root, 'input.json'), 'utf8'));
const logs = [];
const MAX_LINES = 1000;
const MAX_LINE = 10000;
const log = (level) => (...args) => {
  if (logs.length >= MAX_LINES) return;
  let message;
  try { message = format(...args); } catch { message = '[unprintable]'; }
  logs.push({ time: new Date().toISOString(), level, message: message.length > MAX_LINE ? message.slice(0, MAX_LINE) : message });
};
console.log = log('INFO');
console.info = log('INFO');
console.debug = log('DEBUG');
console.trace = log('DEBUG');
console.warn = log('WARN');
console.error = log('ERROR');

const scriptFile = join(root, 'script.js');
const require = createRequire(scriptFile);
const AsyncFunction = (async () => {}).constructor;
const request = input.request;
const response = input.response;
const TIMED_OUT = Symbol('timed out');

function finish(failure) {
  let text;
  try {
    text = JSON.stringify({ request, response, logs, failure });
  } catch (error) {
    text = JSON.stringify({ request: null, response: null, logs, failure: failure ?? { index: -1, origin: '', timedOut: false, message: 'the request or response could not be written as JSON: ' + describe(error) } });
  }
  writeFileSync(join(root, 'output.json'), text);
  process.exit(0);
}

function describe(error) {
  if (error instanceof Error) return (error.name && error.name !== 'Error' ? error.name + ': ' : '') + error.message;
  try { return String(error); } catch { return 'a value that cannot be printed'; }
}

for (const [index, entry] of input.scripts.entries()) {
  writeFileSync(join(root, 'progress.json'), JSON.stringify({ index, origin: entry.origin }));
  let timer;
  try {
    const run = new AsyncFunction('request', 'response', 'require', 'module', 'exports', '__filename', '__dirname', entry.script);
    const module = { exports: {} };
    await Promise.race([
      run(request, response, require, module, module.exports, scriptFile, root),
      new Promise((_, reject) => { timer = setTimeout(() => reject(TIMED_OUT), input.timeoutMs); }),
    ]);
  } catch (error) {
    finish({ index, origin: entry.origin, timedOut: error === TIMED_OUT, message: error === TIMED_OUT ? 'timed out' : describe(error) });
  } finally {
    clearTimeout(timer);
  }
}
finish(null);
`;
