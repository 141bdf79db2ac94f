/**
 * One sandbox process: started in a process group of its own (and, when the
 * agent may, as a user of its own), watched for time and memory, its output
 * kept up to a cap, and everything it started killed when it ends — whether
 * it finished, timed out, blew its memory or was cancelled.
 *
 * Starting and watching are apart so a warm sandbox can be started before
 * its job exists and watched only from the moment the job is handed to it.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { killAll, residentBytes, type ProcessSelector } from './process-tree.js';
import { SandboxIdentities, type SandboxUser } from './sandbox-user.js';

export interface SandboxSpawnOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  user: SandboxUser | null;
}

export interface SandboxLimits {
  timeoutMs: number;
  /** Resident memory of all the sandbox's processes together. */
  memoryLimitBytes: number;
  /** Bytes kept of stdout and of stderr each; the rest is counted, not kept. */
  outputLimitBytes: number;
  signal?: AbortSignal;
}

export type SandboxRunOptions = SandboxSpawnOptions & SandboxLimits;

export interface SandboxProcess {
  child: ChildProcessByStdio<Writable, Readable, Readable>;
  /** Everything this sandbox started: its process group and, when it has one, its user. */
  selector: ProcessSelector;
  /** Settles once the process has exited and its output streams closed; never rejects. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
  hasExited(): boolean;
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

export function spawnSandbox(options: SandboxSpawnOptions): SandboxProcess {
  const { command, args } = options.user
    ? SandboxIdentities.wrap(options.user, options.command, options.args)
    : { command: options.command, args: options.args };
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true, // its own process group, killed as one
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // A sandbox that is gone before its job is written to it must not take the agent down with EPIPE.
  child.stdin.on('error', () => undefined);
  let exited = false;
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => {
      exited = true;
      resolve({ code: null, signal: null, error });
    });
    child.once('close', (code, signal) => {
      exited = true;
      resolve({ code, signal });
    });
  });
  return {
    child,
    selector: { pgid: child.pid, ...(options.user ? { uid: options.user.uid } : {}) },
    exited: done,
    hasExited: () => exited || child.exitCode !== null || child.signalCode !== null,
  };
}

/** A cold run: started and watched at once, its stdin closed. */
export async function runSandboxed(options: SandboxRunOptions): Promise<SandboxRunOutcome> {
  const sandbox = spawnSandbox(options);
  sandbox.child.stdin.end();
  return superviseSandbox(sandbox, options);
}

/**
 * Watches a started sandbox until it ends, then kills whatever it left. Time,
 * memory and output count from this call, which is when its job began.
 */
export async function superviseSandbox(sandbox: SandboxProcess, limits: SandboxLimits): Promise<SandboxRunOutcome> {
  const started = performance.now();
  const { child, selector } = sandbox;

  const stdout = new CappedBuffer(limits.outputLimitBytes);
  const stderr = new CappedBuffer(limits.outputLimitBytes);
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));

  let killedFor: SandboxRunOutcome['killedFor'] = null;
  let peakMemoryBytes = 0;
  // Set once the sandbox has exited. Its user runs the next job as soon as this returns, so
  // nothing of this one may kill by that user afterwards: a memory sample under way at the
  // exit ends nothing, and a kill started by a limit is finished before this returns.
  let over = false;
  let killing: Promise<void> | undefined;
  const end = (reason: NonNullable<SandboxRunOutcome['killedFor']>): void => {
    if (over) return;
    killedFor ??= reason;
    const kill = killAll(selector);
    killing = killing ? Promise.all([killing, kill]).then(() => undefined) : kill;
  };
  const timer = setTimeout(() => end('timeout'), limits.timeoutMs);
  let watching = false;
  const sample = (): void => {
    if (watching) return;
    watching = true;
    void residentBytes(selector)
      .then((bytes) => {
        if (over) return;
        peakMemoryBytes = Math.max(peakMemoryBytes, bytes);
        if (bytes > limits.memoryLimitBytes) end('memory');
      })
      .finally(() => {
        watching = false;
      });
  };
  // At once too: a warm sandbox is already its full size, and its job may be over before the first interval.
  sample();
  const watchdog = setInterval(sample, WATCH_INTERVAL_MS);
  const onAbort = (): void => end('cancelled');
  limits.signal?.addEventListener('abort', onAbort, { once: true });
  if (limits.signal?.aborted) onAbort();

  try {
    const { code, signal, error } = await sandbox.exited;
    if (error) stderr.push(Buffer.from(`${error.message}\n`));
    return {
      exitCode: code,
      exitSignal: signal,
      killedFor,
      stdout: stdout.text(),
      stderr: stderr.text(),
      droppedBytes: stdout.dropped + stderr.dropped,
      peakMemoryBytes,
      durationMs: performance.now() - started,
    };
  } finally {
    over = true;
    clearTimeout(timer);
    clearInterval(watchdog);
    limits.signal?.removeEventListener('abort', onAbort);
    await killing;
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
