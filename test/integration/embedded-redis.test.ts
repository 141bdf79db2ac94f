import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/agent/embedded-redis.js';
import { startAgentProcess } from '../support/agent-process.js';
import { closedPort } from '../support/target.js';

const ROOT = resolve(import.meta.dirname, '../..');
const started: EmbeddedRedis[] = [];
const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const redis of started.splice(0)) await redis.stop();
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function start(): Promise<EmbeddedRedis> {
  const redis = await startEmbeddedRedis();
  started.push(redis);
  return redis;
}

async function client(path: string, password?: string): Promise<Redis> {
  const redis = new Redis({ path, password, lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}

/** Every process's command line that can be read here. */
async function commandLines(): Promise<string> {
  const lines: string[] = [];
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    lines.push(await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''));
  }
  return lines.join('\n');
}

describe('embedded redis-server', () => {
  it('refuses a client without its password, and answers one with it', async () => {
    const redis = await start();
    const stranger = await client(redis.socketPath);
    try {
      await expect(stranger.ping()).rejects.toThrow(/NOAUTH/);
      await expect(stranger.keys('*')).rejects.toThrow(/NOAUTH/);
      await expect(stranger.auth('not-the-password')).rejects.toThrow(/WRONGPASS/);
      await expect(stranger.ping()).rejects.toThrow(/NOAUTH/);
    } finally {
      stranger.disconnect();
    }

    const agent = await client(redis.socketPath, redis.password);
    try {
      expect(await agent.ping()).toBe('PONG');
    } finally {
      agent.disconnect();
    }
  });

  it('makes a new random password at each start, keeps it out of command lines, and its socket in a 0700 directory', async () => {
    const [first, second] = [await start(), await start()];
    expect(first.password).toMatch(/^[0-9a-f]{64}$/);
    expect(second.password).toMatch(/^[0-9a-f]{64}$/);
    expect(first.password).not.toBe(second.password);
    expect((await stat(dirname(first.socketPath))).mode & 0o777).toBe(0o700);
    const everyCommandLine = await commandLines();
    expect(everyCommandLine).toContain(first.socketPath);
    expect(everyCommandLine).not.toContain(first.password);
    expect(everyCommandLine).not.toContain(second.password);
  });
});

/** The processes whose parent is `pid`, read from /proc/<pid>/stat (comm, state, ppid). */
async function childrenOf(pid: number): Promise<{ pid: number; comm: string; state: string }[]> {
  const children = [];
  for (const name of (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry))) {
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const match = /^\d+ \((.*)\) (\S) (\d+) /s.exec(stat);
    if (match && Number(match[3]) === pid) children.push({ pid: Number(name), comm: match[1]!, state: match[2]! });
  }
  return children;
}

/** Gone: no such process, or a zombie (dead, not reaped yet by whoever inherited it). */
async function isGone(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat === undefined || /^\d+ \(.*\) Z /s.test(stat);
}

async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await isGone(pid))) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Kills `pid` if it is still the redis-server it was (a pid may be reused). */
async function killRedisServer(pid: number): Promise<void> {
  const comm = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
  if (comm.trim() === 'redis-server' && !(await isGone(pid))) process.kill(pid, 'SIGKILL');
}

/** A socket directory as an agent killed long ago leaves it: a socket nothing listens on. */
async function deadSocketDirectory(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'outpost-redis-'));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  const listenThenDie = "require('node:net').createServer().listen(process.argv[1], () => process.kill(process.pid, 'SIGKILL'))";
  spawnSync(process.execPath, ['-e', listenThenDie, join(dir, 'redis.sock')], { timeout: 5000 });
  expect(existsSync(join(dir, 'redis.sock'))).toBe(true);
  return dir;
}

const anHourAgo = () => new Date(Date.now() - 3_600_000);

describe('embedded redis-server and the agent process', () => {
  it('ends when the agent is killed with SIGKILL', async () => {
    const temp = await mkdtemp(join(tmpdir(), 'outpost-agent-test-'));
    cleanup.push(() => rm(temp, { recursive: true, force: true }));
    const agent = startAgentProcess({
      cli: join(ROOT, 'dist/cli.js'),
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
        HOME: temp,
        TMPDIR: temp,
        API_KEY: `pl_${'a'.repeat(40)}`,
        API_URL: `http://127.0.0.1:${await closedPort()}`,
        AGENT_HEALTH_PORT: '0',
        AGENT_MODE: 'uptime',
        // An uptime agent starts its redis-server only to queue its jobs there.
        UPTIME_QUEUE: 'redis',
      },
    });
    cleanup.push(() => agent.stop(2000));
    await agent.waitForEntry((entry) => JSON.stringify(entry).includes('started an embedded redis-server'), 10_000, 'its embedded redis-server');

    const [server, ...others] = (await childrenOf(agent.pid)).filter((child) => child.comm === 'redis-server');
    expect(others).toEqual([]);
    expect(server, `no redis-server under the agent; it said:\n${agent.tail()}`).toBeDefined();
    cleanup.push(() => killRedisServer(server!.pid));
    expect(await isGone(server!.pid)).toBe(false);
    expect(agent.hasExited(), agent.tail()).toBe(false);
    // With setpriv here the kernel's parent-death signal is what is tested: no watchdog process beside the server.
    if (existsSync('/usr/bin/setpriv')) expect((await childrenOf(agent.pid)).map((child) => child.comm)).toEqual(['redis-server']);

    process.kill(agent.pid, 'SIGKILL');
    expect(await goneWithin(server!.pid, 3000)).toBe(true);
  });

  it('ends through the watchdog, where setpriv cannot be used, when its process is killed with SIGKILL', async () => {
    const script = [
      `const { startEmbeddedRedis } = await import(${JSON.stringify(join(ROOT, 'dist/agent/embedded-redis.js'))});`,
      "const redis = await startEmbeddedRedis('redis-server', { lifeline: 'watchdog' });",
      'console.log(JSON.stringify({ socketPath: redis.socketPath }));',
      'setInterval(() => undefined, 1000);',
    ].join('\n');
    const owner = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    cleanup.push(() => {
      if (owner.exitCode === null && owner.signalCode === null) owner.kill('SIGKILL');
    });
    const line = await new Promise<string>((resolve, reject) => {
      owner.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString()));
      owner.once('exit', (code) => reject(new Error(`the process exited (${code}) before its redis-server was ready`)));
    });
    cleanup.push(() => rm(dirname((JSON.parse(line) as { socketPath: string }).socketPath), { recursive: true, force: true }));

    const children = await childrenOf(owner.pid!);
    const server = children.find((child) => child.comm === 'redis-server');
    expect(server).toBeDefined();
    cleanup.push(() => killRedisServer(server!.pid));
    expect(children.map((child) => child.comm).sort()).toEqual(['node', 'redis-server']);

    owner.kill('SIGKILL');
    expect(await goneWithin(server!.pid, 3000)).toBe(true);
  });

  it("removes this user's old socket directories whose server is gone, and nothing else", async () => {
    const live = await start();
    await utimes(dirname(live.socketPath), anHourAgo(), anHourAgo());
    const dead = await deadSocketDirectory();
    const empty = await mkdtemp(join(tmpdir(), 'outpost-redis-'));
    cleanup.push(() => rm(empty, { recursive: true, force: true }));
    await utimes(empty, anHourAgo(), anHourAgo());

    // Young, it may be an agent's that is starting its server now.
    await start();
    expect(existsSync(dead)).toBe(true);

    await utimes(dead, anHourAgo(), anHourAgo());
    await start();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(empty)).toBe(false);
    const agent = await client(live.socketPath, live.password);
    try {
      expect(await agent.ping()).toBe('PONG');
    } finally {
      agent.disconnect();
    }
  });
});
