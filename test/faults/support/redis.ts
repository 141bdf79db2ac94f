/**
 * A redis-server of the scenario's own on a fixed loopback port, which can be
 * stopped and started again on the same port and data directory: with
 * persistence (append-only file, fsync on every write) or without.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { closedPort } from '../../support/target.js';
import { spawnManaged, type ManagedProcess } from './processes.js';

export interface RestartableRedis {
  readonly port: number;
  readonly url: string;
  readonly persistent: boolean;
  readonly process: ManagedProcess | undefined;
  /** Starts it (again) and waits until it answers PING. */
  start(): Promise<void>;
  /** SIGTERM (Redis' clean shutdown) and wait; SIGKILL after 10 s. */
  stop(): Promise<void>;
  /** Stops it and removes its data directory. */
  close(): Promise<void>;
}

export async function createRedis(options: { persistent: boolean }): Promise<RestartableRedis> {
  const port = await closedPort();
  const dir = await mkdtemp(join(tmpdir(), 'outpost-fault-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ManagedProcess | undefined;
  const persistence = options.persistent
    ? ['--appendonly', 'yes', '--appendfsync', 'always', '--save', '']
    : ['--save', '', '--appendonly', 'no'];
  const redis: RestartableRedis = {
    port,
    url,
    persistent: options.persistent,
    get process() {
      return child;
    },
    async start() {
      if (child && !child.hasExited()) throw new Error('redis-server is already running');
      child = spawnManaged(
        `redis-server :${port}`,
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--daemonize', 'no', ...persistence],
        { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        dir,
      );
      await waitForPing(url, child, 10_000);
    },
    async stop() {
      if (!child || child.hasExited()) return;
      child.signal('SIGTERM');
      if (!(await child.waitExit(10_000))) await child.kill();
    },
    async close() {
      await child?.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
  await redis.start();
  return redis;
}

async function waitForPing(url: string, child: ManagedProcess, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.hasExited()) throw new Error(`redis-server exited at start:\n${child.tail()}`);
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      probe.disconnect();
    }
  }
}
