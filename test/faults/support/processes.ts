/**
 * Processes a fault scenario starts, signals, pauses and kills: each one kept
 * in a registry so that every test can end all of its own, even when it
 * failed half-way, and so that none outlives the test worker.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { eachOutputLine } from '../../support/output-lines.js';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly startedAt: number;
  /** The last lines it wrote (stdout and stderr), at most MAX_LINES. */
  readonly lines: string[];
  /** Set once it has exited. */
  exit(): ExitInfo | undefined;
  hasExited(): boolean;
  /** Sends a signal (SIGKILL, SIGTERM, SIGSTOP, SIGCONT, …); a no-op once it has exited. */
  signal(signal: NodeJS.Signals): void;
  /** Resolves true once it has exited, false when `ms` pass first. */
  waitExit(ms: number): Promise<boolean>;
  /** The first of its JSON log lines that `matches`, up to `ms`. */
  waitForEntry(matches: (entry: Record<string, unknown>) => boolean, ms: number, what: string): Promise<Record<string, unknown>>;
  /** SIGCONT (so a paused one is left in no odd state) and SIGKILL; resolves once it has exited. */
  kill(): Promise<void>;
  tail(count?: number): string;
}

const MAX_LINES = 2000;
const live = new Set<ManagedProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // The worker ends (a crash, a timeout): nothing the suite started stays behind.
  process.once('exit', () => {
    for (const child of live) {
      try {
        process.kill(child.pid, 'SIGCONT');
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  });
}

export function spawnManaged(name: string, command: string, args: string[], env: Record<string, string>, cwd: string): ManagedProcess {
  installExitHook();
  const child: ChildProcess = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`${name} did not start (${command})`);
  const pid = child.pid;
  const lines: string[] = [];
  const entries: Record<string, unknown>[] = [];
  const collect = (stream: NodeJS.ReadableStream) =>
    eachOutputLine(stream, (line, entry) => {
      lines.push(line);
      if (lines.length > MAX_LINES) lines.splice(0, lines.length - MAX_LINES);
      if (!entry) return;
      entries.push(entry);
      if (entries.length > MAX_LINES) entries.splice(0, entries.length - MAX_LINES);
    });
  collect(child.stdout!);
  collect(child.stderr!);
  let exitInfo: ExitInfo | undefined;
  const exited = new Promise<ExitInfo>((resolve) =>
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal, at: Date.now() };
      live.delete(managed);
      resolve(exitInfo);
    }),
  );
  const managed: ManagedProcess = {
    name,
    pid,
    startedAt: Date.now(),
    lines,
    exit: () => exitInfo,
    hasExited: () => exitInfo !== undefined,
    signal(signal) {
      if (exitInfo) return;
      try {
        process.kill(pid, signal);
      } catch {
        // exited meanwhile
      }
    },
    async waitExit(ms) {
      if (exitInfo) return true;
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
      ]);
      clearTimeout(timer);
      return result;
    },
    async waitForEntry(matches, ms, what) {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = entries.find(matches);
        if (found) return found;
        if (exitInfo) throw new Error(`${name} exited (${JSON.stringify(exitInfo)}) before ${what}; it said:\n${managed.tail()}`);
        if (Date.now() > deadline) throw new Error(`${name} did not log ${what} within ${ms} ms; it said:\n${managed.tail()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async kill() {
      if (exitInfo) return;
      managed.signal('SIGCONT');
      managed.signal('SIGKILL');
      await exited;
    },
    tail: (count = 40) => lines.slice(-count).join('\n'),
  };
  live.add(managed);
  return managed;
}

/** Every process still running that the suite started. */
export function liveProcesses(): ManagedProcess[] {
  return [...live];
}

/** Ends every process the suite started that still runs (SIGCONT, SIGKILL), and waits for each. */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((child) => child.kill()));
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every `everyMs` until it returns true; false when `ms` pass first. */
export async function until(probe: () => boolean | Promise<boolean>, ms: number, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}
