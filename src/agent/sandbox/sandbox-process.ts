/**
 * One sandbox process, as an isolation backend started it, watched for time,
 * memory and disk, its output kept up to a cap, and everything the job
 * started killed when it ends — whether it finished, timed out, went over a
 * limit or was cancelled.
 *
 * Starting and watching are apart so a warm sandbox can be started before
 * its job exists and watched only from the moment the job is handed to it.
 */
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { directoryBytes } from './disk-usage.js';
import { memoryBytes, type ProcessInfo } from './process-tree.js';

export interface SandboxLimits {
  timeoutMs: number;
  /** Memory of all the sandbox's processes together (each one's proportional share of what they share), its temporary file systems included. */
  memoryLimitBytes: number;
  /** Bytes the job may write into `diskPaths` (and shared temporary directories, as its backend counts them). */
  diskLimitBytes?: number;
  diskPaths?: string[];
  /** Bytes kept of stdout and of stderr each; the rest is counted, not kept. */
  outputLimitBytes: number;
  signal?: AbortSignal;
}

export interface HeldBytes {
  /** In memory outside the processes: a private /tmp or /dev/shm, files left in the shared /dev/shm. */
  memory: number;
  /** On disk outside the job's directories: files left in a shared /tmp. */
  disk: number;
}

export type SandboxChild = ChildProcessByStdio<Writable, Readable, Readable>;

export interface SandboxProcess {
  child: SandboxChild;
  /** Settles once the process has exited and its output streams closed; never rejects. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
  hasExited: () => boolean;
  /** Every process of the job now. */
  processes(): Promise<ProcessInfo[]>;
  held(): Promise<HeldBytes>;
  /** Kills everything the job started; resolves when nothing of it is left. */
  kill(): Promise<void>;
}

export interface SandboxRunOutcome {
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  /** Why the agent ended it, when it did. */
  killedFor: 'timeout' | 'memory' | 'disk' | 'cancelled' | null;
  stdout: string;
  stderr: string;
  /** Output bytes beyond the cap, dropped. */
  droppedBytes: number;
  peakMemoryBytes: number;
  peakDiskBytes: number;
  durationMs: number;
}

const WATCH_INTERVAL_MS = 250;
/** Measuring a directory costs a walk of it: at most this share of the time goes to it. */
const DISK_WALK_SHARE = 10;

/** The process itself, in a process group of its own; `extraPipe` adds fd 3 for the backend (bubblewrap's info). */
export function spawnChild(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; extraPipe?: boolean },
): { child: SandboxChild; exited: SandboxProcess['exited']; hasExited: () => boolean } {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true, // its own process group, killed as one
    stdio: options.extraPipe ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
  }) as ChildProcess as SandboxChild;
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
  return { child, exited: done, hasExited: () => exited || child.exitCode !== null || child.signalCode !== null };
}

/** A cold run: started and watched at once, its stdin closed. */
export async function runSandboxed(sandbox: SandboxProcess, limits: SandboxLimits): Promise<SandboxRunOutcome> {
  sandbox.child.stdin.end();
  return superviseSandbox(sandbox, limits);
}

/**
 * Watches a started sandbox until it ends, then kills whatever it left. Time,
 * memory and output count from this call, which is when its job began.
 */
export async function superviseSandbox(sandbox: SandboxProcess, limits: SandboxLimits): Promise<SandboxRunOutcome> {
  const started = performance.now();
  const { child } = sandbox;

  const stdout = new CappedBuffer(limits.outputLimitBytes);
  const stderr = new CappedBuffer(limits.outputLimitBytes);
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));

  let killedFor: SandboxRunOutcome['killedFor'] = null;
  let peakMemoryBytes = 0;
  let peakDiskBytes = 0;
  // Set once the sandbox has exited. Nothing of this job may kill afterwards: a sample under
  // way at the exit ends nothing, and a kill started by a limit is finished before this returns.
  let over = false;
  let killing: Promise<void> | undefined;
  const end = (reason: NonNullable<SandboxRunOutcome['killedFor']>): void => {
    if (over) return;
    killedFor ??= reason;
    const kill = sandbox.kill();
    killing = killing ? Promise.all([killing, kill]).then(() => undefined) : kill;
  };
  const timer = setTimeout(() => end('timeout'), limits.timeoutMs);
  let watching = false;
  let nextDiskWalk = 0;
  const sample = (): void => {
    if (watching) return;
    watching = true;
    void (async () => {
      const [processes, held] = await Promise.all([sandbox.processes(), sandbox.held()]);
      const memory = (await memoryBytes(processes)) + held.memory;
      if (over) return;
      peakMemoryBytes = Math.max(peakMemoryBytes, memory);
      if (memory > limits.memoryLimitBytes) end('memory');
      if (limits.diskLimitBytes !== undefined && performance.now() >= nextDiskWalk) {
        const walkStarted = performance.now();
        let disk = held.disk;
        for (const path of limits.diskPaths ?? []) disk += await directoryBytes(path);
        const walked = performance.now() - walkStarted;
        nextDiskWalk = performance.now() + walked * DISK_WALK_SHARE;
        if (over) return;
        peakDiskBytes = Math.max(peakDiskBytes, disk);
        if (disk > limits.diskLimitBytes) end('disk');
      }
    })()
      .catch(() => undefined)
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
      peakDiskBytes,
      durationMs: performance.now() - started,
    };
  } finally {
    over = true;
    clearTimeout(timer);
    clearInterval(watchdog);
    limits.signal?.removeEventListener('abort', onAbort);
    await killing;
    // Whatever the script left behind (background children, a fork bomb) goes too.
    await sandbox.kill();
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
