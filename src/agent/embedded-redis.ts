import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisServerMissingError, RedisStartError } from '../errors/index.js';
import { sleep } from './backoff.js';

export interface EmbeddedRedis {
  /** Unix socket path; no TCP port is opened. */
  socketPath: string;
  /** Required of every client (`requirepass`); new at each start. */
  password: string;
  stop(): Promise<void>;
}

/**
 * What ends the server when the agent process dies without stopping it
 * (SIGKILL, OOM killer, a crash): `pdeathsig`, the kernel's parent-death
 * signal set by util-linux setpriv, or `watchdog`, a small process that kills
 * it once its pipe from the agent closes. `auto` (the default) takes
 * `pdeathsig` when setpriv can set it here, else `watchdog`.
 */
export type RedisLifeline = 'auto' | 'pdeathsig' | 'watchdog';

export interface EmbeddedRedisOptions {
  lifeline?: RedisLifeline;
}

const READY_TIMEOUT_MS = 10_000;
const DIRECTORY_PREFIX = 'outpost-redis-';
// Far beyond READY_TIMEOUT_MS: a directory this old belongs to a server that
// answers by now, or to none (see removeStaleDirectories).
const STALE_AFTER_MS = 60_000;

export const REDIS_MISSING_MESSAGE =
  'REDIS_URL is not set, so the agent starts its own redis-server, but no redis-server was found on PATH.\n' +
  'Install it (Debian/Ubuntu: apt-get install redis-server; Alpine: apk add redis; macOS: brew install redis)\n' +
  'or point the agent at a Redis you run: REDIS_URL=redis://host:6379';

/**
 * Starts a private redis-server: no persistence, no TCP port, a socket only
 * this user can open (in a directory of mode 0700), and a random password
 * besides: check scripts may run as this very user, and must not reach the
 * agent's queues. It lives exactly as long as the agent, however the agent
 * ends (see RedisLifeline).
 *
 * Call it from the main thread: the parent-death signal follows the thread
 * that spawned the server, so a server started from a worker thread would be
 * killed when that thread ends.
 */
export async function startEmbeddedRedis(binary = 'redis-server', options: EmbeddedRedisOptions = {}): Promise<EmbeddedRedis> {
  // Left behind by agents killed before they could stop their server. Never
  // fails the start: at worst a few empty directories stay.
  await removeStaleDirectories().catch(() => undefined);
  const lifeline = !options.lifeline || options.lifeline === 'auto' ? await usableLifeline() : options.lifeline;
  const dir = await mkdtemp(join(tmpdir(), DIRECTORY_PREFIX));
  const socketPath = join(dir, 'redis.sock');
  const password = randomBytes(32).toString('hex');
  const argv = [
    binary,
    // The password goes in on stdin (`-`: read configuration from stdin), not
    // in the arguments, which every process on the host can read.
    '-',
    '--port', '0',
    '--unixsocket', socketPath,
    '--unixsocketperm', '700',
    '--save', '',
    '--appendonly', 'no',
    '--dir', dir,
    '--loglevel', 'warning',
  ];
  const [command, ...args] = lifeline === 'pdeathsig' ? underParentDeathSignal(argv) : argv;
  const child = spawn(command!, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const watchdog = lifeline === 'watchdog' && child.pid !== undefined ? startWatchdog(child.pid) : undefined;
  // The watchdog kills by pid: once the server is gone that pid may be reused.
  child.once('exit', () => watchdog?.kill('SIGKILL'));
  // A binary that is missing or exits early closes the pipe: that is told by 'error' or 'exit' below.
  child.stdin.on('error', () => undefined);
  child.stdin.end(`requirepass ${password}\n`);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));

  const failed = new Promise<Error>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      resolve(error.code === 'ENOENT' ? new RedisServerMissingError(REDIS_MISSING_MESSAGE) : error);
    });
    child.once('exit', (code, signal) => {
      // Through setpriv the binary is looked up by sh's exec, which says "not found" with 127.
      if (lifeline === 'pdeathsig' && code === 127) resolve(new RedisServerMissingError(REDIS_MISSING_MESSAGE));
      else resolve(new RedisStartError(`redis-server exited (${signal ?? code}) before it was ready: ${output.trim()}`));
    });
  });

  const stop = async () => {
    await terminate(child);
    if (watchdog) await terminate(watchdog);
    await rm(dir, { recursive: true, force: true });
  };
  const giveUp = new AbortController();
  const outcome = await Promise.race([waitForSocket(socketPath, password, giveUp.signal), failed]);
  giveUp.abort();
  if (outcome instanceof Error) {
    await stop();
    throw outcome;
  }
  return { socketPath, password, stop };
}

// setpriv sets PR_SET_PDEATHSIG and execs, so the server keeps the pid the
// agent knows, and the kernel sends it SIGKILL when the agent dies, whatever
// kills the agent; nothing that could itself be killed has to stay behind.
// The signal is not sent if the agent died before setpriv set it: sh (after
// setpriv) checks that its parent is still this process before it execs the
// server, which closes that gap.
const PARENT_CHECK = '[ "$PPID" = "$1" ] || exit 70; shift; exec "$@"';

function underParentDeathSignal(argv: string[]): string[] {
  return ['setpriv', '--pdeathsig', 'KILL', '--', '/bin/sh', '-c', PARENT_CHECK, 'outpost-redis', String(process.pid), ...argv];
}

let lifelineHere: Promise<'pdeathsig' | 'watchdog'> | undefined;

/**
 * pdeathsig when the whole chain works here: setpriv present and new enough
 * for --pdeathsig (util-linux 2.33), prctl allowed, /bin/sh there. Tried once
 * with the very command, an empty one after it, rather than guessed from the
 * platform; the watchdog otherwise (macOS, Alpine without util-linux-misc,
 * distroless images), which needs nothing but this Node.js.
 */
function usableLifeline(): Promise<'pdeathsig' | 'watchdog'> {
  if (process.platform !== 'linux') return Promise.resolve('watchdog');
  lifelineHere ??= new Promise((resolve) => {
    const [command, ...args] = underParentDeathSignal([]);
    execFile(command!, args, { timeout: 5000 }, (error) => resolve(error ? 'watchdog' : 'pdeathsig'));
  });
  return lifelineHere;
}

// Only the agent holds the write end of the watchdog's stdin (Node opens it
// close-on-exec, so no other child inherits it), and the kernel closes it when
// the agent dies in any way: end of input means the agent is gone. The agent
// never writes to it.
const WATCHDOG = `
const pid = Number(process.argv[1]);
const end = () => {
  try { process.kill(pid, 'SIGKILL'); } catch {}
  process.exit(0);
};
process.stdin.on('data', () => undefined);
process.stdin.once('end', end);
process.stdin.once('error', end);
`;

function startWatchdog(pid: number): ChildProcess {
  // An empty environment: NODE_OPTIONS and the like are the agent's, not the watchdog's.
  const watchdog = spawn(process.execPath, ['--max-old-space-size=16', '-e', WATCHDOG, String(pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
    env: {},
  });
  watchdog.on('error', () => undefined);
  watchdog.stdin.on('error', () => undefined);
  return watchdog;
}

/**
 * Removes this user's socket directories whose server is gone: the socket is
 * missing or nothing listens on it (ECONNREFUSED). A live server, another
 * agent's included, always accepts the connection, even when stopped; a
 * directory younger than STALE_AFTER_MS may be an agent's that is starting its
 * server now; either is left alone, as is anything that cannot be told apart.
 */
async function removeStaleDirectories(): Promise<void> {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const base = tmpdir();
  const names = (await readdir(base)).filter((name) => name.startsWith(DIRECTORY_PREFIX));
  await Promise.all(
    names.map(async (name) => {
      const dir = join(base, name);
      const info = await lstat(dir).catch(() => undefined);
      if (!info?.isDirectory() || info.uid !== uid || Date.now() - info.mtimeMs < STALE_AFTER_MS) return;
      if ((await socketListener(join(dir, 'redis.sock'))) !== 'none') return;
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }),
  );
}

function socketListener(socketPath: string): Promise<'live' | 'none' | 'unknown'> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const settle = (answer: 'live' | 'none' | 'unknown') => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1000, () => settle('unknown'));
    socket.once('connect', () => settle('live'));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      settle(error.code === 'ECONNREFUSED' || error.code === 'ENOENT' ? 'none' : 'unknown'),
    );
  });
}

async function waitForSocket(socketPath: string, password: string, signal: AbortSignal): Promise<true | Error> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline && !signal.aborted) {
    const probe = new Redis({
      path: socketPath,
      password,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      return true;
    } catch {
      await sleep(50);
    } finally {
      probe.disconnect();
    }
  }
  return new RedisStartError(`redis-server did not accept connections within ${READY_TIMEOUT_MS} ms`);
}

function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
