/**
 * One sandbox process: started in a process group of its own (and, when the
 * agent may, as a user of its own), watched for time and memory, its output
 * kept up to a cap, and everything it started killed when it ends — whether
 * it finished, timed out, blew its memory or was cancelled.
 */
import { spawn } from 'node:child_process';
import { killAll, residentBytes, type ProcessSelector } from './process-tree.js';
import { SandboxIdentities, type SandboxUser } from './sandbox-user.js';

export interface SandboxRunOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  user: SandboxUser | null;
  timeoutMs: number;
  /** Resident memory of all the sandbox's processes together. */
  memoryLimitBytes: number;
  /** Bytes kept of stdout and of stderr each; the rest is counted, not kept. */
  outputLimitBytes: number;
  signal?: AbortSignal;
}

export interface SandboxRunOutcome {
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  /** Why the agent ended it, when it did. */
  killedFor: 'timeout' | 'memory' | 'cancelled' | null;
  stdout: string;
  stderr: string;
  /** Output bytes beyond the cap, dropped. */
  droppedBytes: number;
  peakMemoryBytes: number;
  durationMs: number;
}

const WATCH_INTERVAL_MS = 250;

export async function runSandboxed(options: SandboxRunOptions): Promise<SandboxRunOutcome> {
  const started = performance.now();
  const { command, args } = options.user
    ? SandboxIdentities.wrap(options.user, options.command, options.args)
    : { command: options.command, args: options.args };
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true, // its own process group, killed as one
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const selector: ProcessSelector = { pgid: child.pid, ...(options.user ? { uid: options.user.uid } : {}) };

  const stdout = new CappedBuffer(options.outputLimitBytes);
  const stderr = new CappedBuffer(options.outputLimitBytes);
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));

  let killedFor: SandboxRunOutcome['killedFor'] = null;
  let peakMemoryBytes = 0;
  const end = (reason: NonNullable<SandboxRunOutcome['killedFor']>): void => {
    killedFor ??= reason;
    void killAll(selector);
  };
  const timer = setTimeout(() => end('timeout'), options.timeoutMs);
  let watching = false;
  const watchdog = setInterval(() => {
    if (watching) return;
    watching = true;
    void residentBytes(selector)
      .then((bytes) => {
        peakMemoryBytes = Math.max(peakMemoryBytes, bytes);
        if (bytes > options.memoryLimitBytes) end('memory');
      })
      .finally(() => {
        watching = false;
      });
  }, WATCH_INTERVAL_MS);
  const onAbort = (): void => end('cancelled');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();

  try {
    const [exitCode, exitSignal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
      child.once('error', (error) => {
        stderr.push(Buffer.from(`${error.message}\n`));
        resolve([null, null]);
      });
      child.once('close', (code, signal) => resolve([code, signal]));
    });
    return {
      exitCode,
      exitSignal,
      killedFor,
      stdout: stdout.text(),
      stderr: stderr.text(),
      droppedBytes: stdout.dropped + stderr.dropped,
      peakMemoryBytes,
      durationMs: performance.now() - started,
    };
  } finally {
    clearTimeout(timer);
    clearInterval(watchdog);
    options.signal?.removeEventListener('abort', onAbort);
    // Whatever the script left behind (background children, a fork bomb) goes too.
    await killAll(selector);
  }
}

class CappedBuffer {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  dropped = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    const room = this.limit - this.#kept;
    if (room <= 0) {
      this.dropped += chunk.length;
      return;
    }
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.#chunks.push(kept);
    this.#kept += kept.length;
    this.dropped += chunk.length - kept.length;
  }

  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}
