/**
 * Warm sandboxes for multi-step checks: a process of the runtime's Node.js,
 * started as the slot's user in a directory of its own with the same flags a
 * cold run gets, Playwright's runner and a spare test worker already loaded
 * (warm-bootstrap.ts). The job's files are written into that directory and
 * its environment and arguments sent on stdin; the process runs that one job
 * and exits.
 */
import { dirname, join } from 'node:path';
import { reserveJobDirectory } from './job-directory.js';
import type { InstalledRuntime } from './multistep-runner.js';
import { nodeFlags } from './runner-command.js';
import { WARM_BOOTSTRAP_FILE, WARM_BOOTSTRAP_SOURCE, type WarmJobMessage } from './warm-bootstrap.js';
import { spawnSandbox, superviseSandbox, type SandboxLimits, type SandboxRunOutcome } from '../sandbox/sandbox-process.js';
import { startEnvironment } from '../sandbox/sandbox-environment.js';
import type { SandboxUser } from '../sandbox/sandbox-user.js';
import { WarmPool, type WarmSandbox } from '../sandbox/warm-pool.js';

export interface WarmSandboxSettings {
  sandboxRoot: string;
  memoryLimitBytes: number;
  agentEnv: NodeJS.ProcessEnv;
  /** Looked up at each start: Chromium may be installed after the agent started. */
  chromiumPath: () => string | undefined;
  maxAgeMs: number;
  onError?(error: unknown): void;
}

export function createWarmPool(settings: WarmSandboxSettings): WarmPool<InstalledRuntime> {
  return new WarmPool((runtime, user) => launchWarmSandbox(runtime, user, settings), {
    maxAgeMs: settings.maxAgeMs,
    onError: (error) => settings.onError?.(error),
  });
}

async function launchWarmSandbox(runtime: InstalledRuntime, user: SandboxUser | null, settings: WarmSandboxSettings): Promise<WarmSandbox> {
  const directory = await reserveJobDirectory({
    sandboxRoot: settings.sandboxRoot,
    runtimeNodeModules: join(runtime.directory, 'node_modules'),
    user,
    extraFiles: { [WARM_BOOTSTRAP_FILE]: WARM_BOOTSTRAP_SOURCE },
  });
  const root = directory.root;
  try {
    const process = spawnSandbox({
      command: runtime.node,
      args: [
        ...nodeFlags(runtime, root, settings.memoryLimitBytes, settings.chromiumPath()),
        join(root, WARM_BOOTSTRAP_FILE),
        runtime.playwrightCli,
      ],
      cwd: root,
      env: startEnvironment({ home: root, nodeBinDirectory: dirname(runtime.node), agentEnv: settings.agentEnv }),
      user,
    });
    // Until its job comes, what it prints is nobody's: read and dropped, so it never blocks on a full pipe.
    process.child.stdout.resume();
    process.child.stderr.resume();
    return { runtimeId: runtime.id, process, root, remove: () => directory.remove(), startedAt: Date.now() };
  } catch (error) {
    await directory.remove();
    throw error;
  }
}

/** Hands a warm sandbox its job and watches it from that moment, as a cold run is watched from its start. */
export async function runWarm(sandbox: WarmSandbox, message: WarmJobMessage, limits: SandboxLimits): Promise<SandboxRunOutcome> {
  const outcome = superviseSandbox(sandbox.process, limits);
  sandbox.process.child.stdin.end(`${JSON.stringify(message)}\n`);
  return outcome;
}
