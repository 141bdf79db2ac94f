import { createServer } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { ApiClient } from '../../src/dev/api-client.js';

export interface Child {
  process: ChildProcess;
  /** Resolves with the first stdout line that `match` accepts. */
  waitFor<T>(match: (line: string) => T | undefined, ms?: number): Promise<T>;
  stop(): Promise<void>;
}

export function start(command: string, args: string[], env: Record<string, string | undefined>): Child {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiters = new Set<(line: string) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const waiter of waiters) waiter(line);
  });
  return {
    process: child,
    waitFor<T>(match: (line: string) => T | undefined, ms = 30_000) {
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${command} ${args.join(' ')}: no expected line in ${ms} ms`)), ms);
        const check = (line: string) => {
          const value = match(line);
          if (value === undefined) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(value);
        };
        for (const line of lines) check(line);
        waiters.add(check);
      });
    },
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Peak resident set of a process so far (VmHWM), in MB. */
export function peakRssMb(pid: number): number {
  return statusMb(pid, 'VmHWM');
}

/** A process's resident set now (VmRSS), in MB. */
export function residentMb(pid: number): number {
  return statusMb(pid, 'VmRSS');
}

function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

/**
 * A process's resident memory now, split: anonymous pages (heap, stacks,
 * anything it wrote), which only it can use, and file pages, which for these
 * processes are mostly their executable's code and data as read from disk:
 * shared with every other process running the same file, and dropped by the
 * kernel under pressure. The split goes by kind, not by sharing: an
 * executable no other process runs (the images' Node.js in the bench, say)
 * has its pages private, file pages all the same.
 */
export function residentParts(pid: number): { anonymousMb: number; fileMb: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
  return {
    anonymousMb: kb('Anonymous') / 1024,
    fileMb: (kb('Rss') - kb('Anonymous')) / 1024,
  };
}

export function jsonLine<T>(line: string): T | undefined {
  try {
    return JSON.parse(line) as T;
  } catch {
    return undefined;
  }
}

/** A loopback port free right now, for a child process to listen on. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * Polls every 100 ms by default: often enough to time a run of several seconds
 * to a few percent, rarely enough that rendering /metrics costs the agent
 * nothing worth measuring.
 */
export async function until(condition: () => Promise<boolean>, ms: number, what: string, everyMs = 100): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, everyMs));
  }
}

/** CPU time (user + system) a process has used so far, its threads included, in seconds. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** Clock ticks per second of /proc's CPU times: 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

/** The process ids whose command is `name` (such as the machine's PostgreSQL and its backends). */
export function pidsNamed(name: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Children of a process (one level), such as the agent's embedded redis-server. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export interface BenchService {
  child: Child;
  base: string;
  accountId: string;
  apiKey: string;
  location: { id: string; slugName: string };
  /** The private location key an agent of the location uses. */
  rawKey: string;
}

/** The real service (`outpost service`) on a free loopback port, with an account, a location and its key. */
export async function startBenchService(cli: string, children: Child[]): Promise<BenchService> {
  const accountId = randomUUID();
  const apiKey = `bench_${randomUUID()}`;
  const port = await freePort();
  // Options NODE_OPTIONS refuses (--cpu-prof, --heap-prof) go on the command line.
  const nodeArgs = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = start(process.execPath, [...nodeArgs, cli, 'service'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    BOOTSTRAP_ACCOUNT_ID: accountId,
    BOOTSTRAP_API_KEY: apiKey,
    LOG_LEVEL: 'INFO',
    // The benchmark creates and reads thousands of checks and sessions; users are limited, it is not.
    RATE_LIMIT_MAX: '0',
  });
  children.push(child);
  await child.waitFor((line) => (line.includes('service listening') ? true : undefined));
  const base = `http://127.0.0.1:${port}`;
  const api = new ApiClient(base, accountId, apiKey);
  const location = await api.call<{ id: string; slugName: string }>('POST', '/v1/private-locations', {
    name: 'Bench',
    slugName: 'bench',
  });
  const { rawKey } = await api.call<{ rawKey: string }>('POST', `/v1/private-locations/${location.id}/keys`);
  return { child, base, accountId, apiKey, location, rawKey };
}
