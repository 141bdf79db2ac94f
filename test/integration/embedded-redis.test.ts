import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/agent/embedded-redis.js';

const started: EmbeddedRedis[] = [];
afterEach(async () => {
  for (const redis of started.splice(0)) await redis.stop();
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
