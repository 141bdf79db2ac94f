/**
 * Warm sandboxes for multi-step checks: a process of the runtime's Node.js,
 * started in a confinement of its own, in a directory of its own, with the
 * same flags a cold run gets, Playwright's runner and a spare test worker
 * already loaded (warm-bootstrap.ts). The job's files are written into that
 * directory and its environment and arguments sent on stdin; the process
 * runs that one job and exits.
 */
import { dirname, join } from 'node:path';
import type { IsolationBackend } from '../isolation/isolation.js';
import { reserveJobDirectory } from './job-directory.js';
import type { InstalledRuntime } from './multistep-runner.js';
import { nodeFlags } from './runner-command.js';
import { WARM_BOOTSTRAP_FILE, WARM_BOOTSTRAP_SOURCE, type WarmJobMessage } from './warm-bootstrap.js';
import type { SandboxProcess, SandboxRunOutcome } from '../sandbox/sandbox-process.js';
import { startEnvironment } from '../sandbox/sandbox-environment.js';
import { WarmPool, type WarmSandbox } from '../sandbox/warm-pool.js';

export interface WarmSandboxSettings {
  sandboxRoot: string;
  memoryLimitBytes: number;
  agentEnv: NodeJS.ProcessEnv;
  /** Looked up at each start: Chromium may be installed after the agent started. */
  chromiumPath: () => string | undefined;
  isolation: IsolationBackend;
  maxAgeMs: number;
  onError?(error: unknown): void;
}

export function createWarmPool(settings: WarmSandboxSettings): WarmPool<InstalledRuntime> {
  return new WarmPool((runtime) => launchWarmSandbox(runtime, settings), {
    maxAgeMs: settings.maxAgeMs,
    onError: (error) => settings.onError?.(error),
  });
}

async function launchWarmSandbox(runtime: InstalledRuntime, settings: WarmSandboxSettings): Promise<WarmSandbox> {
  const confinement = await settings.isolation.confine();
  try {
    const directory = await reserveJobDirectory({
      sandboxRoot: settings.sandboxRoot,
      runtimeNodeModules: join(runtime.directory, 'node_modules'),
      user: confinement.owner,
      extraFiles: { [WARM_BOOTSTRAP_FILE]: WARM_BOOTSTRAP_SOURCE },
    });
    const root = directory.root;
    const chromiumPath = settings.chromiumPath();
    try {
      const process = confinement.spawn({
        command: runtime.node,
        args: [
          ...nodeFlags(runtime, root, settings.memoryLimitBytes, chromiumPath, settings.isolation.privateTemp),
          join(root, WARM_BOOTSTRAP_FILE),
          runtime.playwrightCli,
        ],
        cwd: root,
        env: startEnvironment({
          home: root,
          ...(settings.isolation.privateTemp ? { temp: settings.isolation.privateTemp } : {}),
          nodeBinDirectory: dirname(runtime.node),
          agentEnv: settings.agentEnv,
        }),
        view: { writable: [root], readable: [runtime.directory, ...(chromiumPath ? [dirname(chromiumPath)] : [])] },
      });
      // Until its job comes, what it prints is nobody's: read and dropped, so it never blocks on a full pipe.
      process.child.stdout.resume();
      process.child.stderr.resume();
      return { runtimeId: runtime.id, process, root, remove: () => directory.remove(), startedAt: Date.now(), confinement };
    } catch (error) {
      await directory.remove();
      throw error;
    }
  } catch (error) {
    await confinement.release();
    throw error;
  }
}

/** Hands a warm sandbox its job and watches it from that moment, as a cold run is watched from its start. */
export async function runWarm(
  sandbox: WarmSandbox,
  message: WarmJobMessage,
  supervise: (process: SandboxProcess) => Promise<SandboxRunOutcome>,
): Promise<SandboxRunOutcome> {
  const outcome = supervise(sandbox.process);
  sandbox.process.child.stdin.end(`${JSON.stringify(message)}\n`);
  return outcome;
}
