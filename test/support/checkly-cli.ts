import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { runtimePaths } from '../../src/runtimes/installed.js';

/**
 * Runs the public `checkly` CLI (a devDependency) against an Outpost service.
 * It needs Node.js >= 22.13: it runs on runtime 2026.04's Node 24, which the
 * global setup installs. CHECKLY_ENV=local makes it call CHECKLY_API_URL.
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const CHECKLY_CLI = join(ROOT, 'node_modules', 'checkly', 'bin', 'run.cjs');
export const CHECKLY_NODE = runtimePaths('2026.04').node;

export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliTarget {
  url: string;
  apiKey: string;
  accountId: string;
}

export interface CliOptions {
  cwd?: string;
  timeoutMs?: number;
  env?: Record<string, string>;
}

export interface CheckCli {
  /** Runs `checkly …`, in a child process: never on this process's event loop, which the service needs. */
  run(this: void, args: string[], options?: CliOptions): Promise<CliOutcome>;
  /** The output of a command that must succeed. */
  ok(this: void, args: string[], options?: CliOptions): Promise<string>;
}

/** `home` takes whatever the CLI saves (switch, logout), never the real home; `cwd` is the default project. */
export function checklyCli(target: () => CliTarget, home: string, cwd: string): CheckCli {
  const run = (args: string[], options: CliOptions = {}): Promise<CliOutcome> =>
    new Promise((done, fail) => {
      const { url, apiKey, accountId } = target();
      const child = spawn(CHECKLY_NODE, [CHECKLY_CLI, ...args], {
        cwd: options.cwd ?? cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: options.timeoutMs ?? 20_000,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: home,
          XDG_CONFIG_HOME: join(home, '.config'),
          XDG_CACHE_HOME: join(home, '.cache'),
          CHECKLY_ENV: 'local',
          CHECKLY_API_URL: url,
          CHECKLY_API_KEY: apiKey,
          CHECKLY_ACCOUNT_ID: accountId,
          CHECKLY_SKIP_NEW_VERSION_CHECK: 'true',
          NO_COLOR: '1',
          ...options.env,
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', fail);
      child.on('close', (code) => done({ code, stdout, stderr }));
    });
  return {
    run,
    async ok(args, options) {
      const outcome = await run(args, options);
      expect(outcome.code, `checkly ${args.join(' ')}\n${outcome.stdout}\n${outcome.stderr}`).toBe(0);
      return outcome.stdout;
    },
  };
}
