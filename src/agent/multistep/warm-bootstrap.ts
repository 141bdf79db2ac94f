/**
 * The program a warm sandbox starts with, written into its directory (so it
 * needs no path of the agent's package, from src or dist, to be readable by
 * the sandbox user). It loads Playwright's runner and a spare test worker
 * before any job exists, then runs one job's `playwright test` in the same
 * process: see the comments inside.
 */
export const WARM_BOOTSTRAP_FILE = 'warm-bootstrap.cjs';

/** The stdin message that hands a warm sandbox its job. */
export interface WarmJobMessage {
  /** The whole environment of the run, replacing the one the process started with. */
  env: Record<string, string>;
  /** Arguments of Playwright's CLI, as after `cli.js`. */
  argv: string[];
}

export const WARM_BOOTSTRAP_SOURCE = String.raw`'use strict';
// Written by the Outpost agent into a warm sandbox's directory. Runs as the
// sandbox's user under the same Node.js flags a cold run gets. It loads
// Playwright's runner before any job exists, then waits on stdin for one job
// ({ env, argv }) and runs the CLI in this process, once: the process exits
// with the run. With the "worker" argument it is the spare test worker the
// runner forked ahead: it loads the worker's modules and waits for its
// environment over IPC.
const { join, dirname } = require('node:path');
const { createRequire } = require('node:module');
const childProcess = require('node:child_process');

const [cliPath, role] = process.argv.slice(2);
const fromCli = createRequire(cliPath);
const lib = dirname(fromCli.resolve('playwright/lib/program'));

function replaceEnvironment(env) {
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, env);
}

// Playwright registers its ESM loader hooks (a thread of their own that loads
// Babel) when it loads the config; doing it now takes that off the job's time.
// Newer Playwright ignores a second call; older ones would register twice, so
// their entry point is replaced by a no-op once it has run.
function registerEsmLoaderAhead() {
  try {
    const host = require(join(lib, 'common', 'esmLoaderHost.js'));
    if (typeof host.registerESMLoader !== 'function') return;
    host.registerESMLoader();
    try {
      host.registerESMLoader = () => true;
    } catch {
      // a getter: this Playwright's registration is idempotent
    }
  } catch {
    // not this Playwright's layout: the run registers it as usual
  }
}

if (role === 'worker') {
  try {
    require(join(lib, 'worker', 'workerMain.js'));
    fromCli('@playwright/test');
    registerEsmLoaderAhead();
  } catch {
    // loaded again, for real, when the runner asks
  }
  process.once('message', (message) => {
    replaceEnvironment(message.env);
    // Sends "ready" to the runner, which then initialises it as a worker.
    require(join(lib, 'common', 'process.js'));
  });
} else {
  const processScript = join(lib, 'common', 'process.js');
  const { program } = fromCli('playwright/lib/program');
  fromCli('@playwright/test');
  registerEsmLoaderAhead();

  // One spare worker, forked now with this process's flags, handed to the
  // runner's first fork of a test worker if that fork asks for nothing else.
  const realFork = childProcess.fork;
  const SPARE_STDIO = ['ignore', 'pipe', 'pipe', 'ipc'];
  let spare = realFork(__filename, [cliPath, 'worker'], { detached: false, stdio: SPARE_STDIO });
  spare.on('error', () => undefined);
  childProcess.fork = function fork(modulePath, args, options) {
    const taken = spare;
    spare = undefined;
    const plain =
      modulePath === processScript && !Array.isArray(args) && args && typeof args === 'object' &&
      args.detached === false && args.execArgv === undefined && args.cwd === undefined &&
      JSON.stringify(args.stdio) === JSON.stringify(SPARE_STDIO);
    if (taken && plain && taken.connected && taken.exitCode === null) {
      taken.removeAllListeners('error');
      taken.send({ env: args.env ?? process.env });
      return taken;
    }
    taken?.kill('SIGKILL');
    return realFork.apply(this, arguments);
  };

  let input = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => (input += chunk));
  process.stdin.once('end', () => {
    const job = JSON.parse(input);
    replaceEnvironment(job.env);
    process.argv = [process.argv[0], cliPath, ...job.argv];
    program.parse(process.argv);
  });
}
`;
