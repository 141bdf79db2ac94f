import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockPathFor, withInstallLock } from '../../src/runtimes/install-lock.js';

describe('install lock', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-lock-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(lockPathFor(dir), { force: true });
  });

  it('lets one holder work at a time, and the waiter knows it waited', async () => {
    const events: string[] = [];
    let waited = 0;
    const work = (name: string) => async () => {
      events.push(`${name} start`);
      await sleep(300);
      events.push(`${name} end`);
    };
    await Promise.all([
      withInstallLock(dir, work('a')),
      sleep(20).then(() => withInstallLock(dir, work('b'), { onWait: () => (waited += 1) })),
    ]);
    expect(events).toEqual(['a start', 'a end', 'b start', 'b end']);
    expect(waited).toBe(1);
    expect(existsSync(lockPathFor(dir))).toBe(false);
  });

  it('frees the lock when the work throws', async () => {
    await expect(withInstallLock(dir, () => Promise.reject(new Error('npm broke')))).rejects.toThrow('npm broke');
    expect(existsSync(lockPathFor(dir))).toBe(false);
  });

  it('takes over a lock left by a process that has died', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(lockPathFor(dir), dead.stdout);
    let waited = false;
    const answer = await withInstallLock(dir, async () => 'ran', { onWait: () => (waited = true), timeoutMs: 2000 });
    expect(answer).toBe('ran');
    expect(waited).toBe(false);
  });

  it('gives up on a live holder after the timeout', async () => {
    // This process's parent is alive and is not this process.
    writeFileSync(lockPathFor(dir), String(process.ppid));
    await expect(withInstallLock(dir, async () => 'ran', { timeoutMs: 300 })).rejects.toThrow(/installing .* for too long/);
  });
});
