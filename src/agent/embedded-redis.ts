import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
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

const READY_TIMEOUT_MS = 10_000;

export const REDIS_MISSING_MESSAGE =
  'REDIS_URL is not set, so the agent starts its own redis-server, but no redis-server was found on PATH.\n' +
  'Install it (Debian/Ubuntu: apt-get install redis-server; Alpine: apk add redis; macOS: brew install redis)\n' +
  'or point the agent at a Redis you run: REDIS_URL=redis://host:6379';

/**
 * Starts a private redis-server: no persistence, no TCP port, a socket only
 * this user can open (in a directory of mode 0700), and a random password
 * besides: check scripts may run as this very user, and must not reach the
 * agent's queues. It lives exactly as long as the agent.
 */
export async function startEmbeddedRedis(binary = 'redis-server'): Promise<EmbeddedRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'outpost-redis-'));
  const socketPath = join(dir, 'redis.sock');
  const password = randomBytes(32).toString('hex');
  const child = spawn(
    binary,
    [
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
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
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
      resolve(new RedisStartError(`redis-server exited (${signal ?? code}) before it was ready: ${output.trim()}`));
    });
  });

  const giveUp = new AbortController();
  const outcome = await Promise.race([waitForSocket(socketPath, password, giveUp.signal), failed]);
  giveUp.abort();
  if (outcome instanceof Error) {
    await terminate(child);
    await rm(dir, { recursive: true, force: true });
    throw outcome;
  }
  return {
    socketPath,
    password,
    async stop() {
      await terminate(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
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
