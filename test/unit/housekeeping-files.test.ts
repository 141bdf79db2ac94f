import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  STALE_SANDBOX_MS,
  STALE_STAGING_MS,
  pruneDependencyCache,
  removeStaleSandboxes,
  removeUnusedEngines,
} from '../../src/agent/housekeeping/stale-files.js';

const made: string[] = [];
afterEach(async () => {
  for (const directory of made.splice(0)) await rm(directory, { recursive: true, force: true });
});

async function scratch(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'outpost-housekeeping-'));
  made.push(directory);
  return directory;
}

async function aged(path: string, ageMs: number, file = false): Promise<void> {
  if (file) await writeFile(path, 'x'.repeat(10));
  else await mkdir(join(path, 'inside'), { recursive: true });
  const when = new Date(Date.now() - ageMs);
  await utimes(path, when, when);
}

describe('housekeeping on disk', () => {
  it('removes job and suite directories older than any job lives, and nothing else', async () => {
    const root = await scratch();
    await aged(join(root, 'job-old'), STALE_SANDBOX_MS + 60_000);
    await aged(join(root, 'suite-old'), STALE_SANDBOX_MS + 60_000);
    await aged(join(root, 'job-running'), STALE_SANDBOX_MS - 60_000);
    await aged(join(root, 'not-ours'), STALE_SANDBOX_MS * 10);
    expect(await removeStaleSandboxes(root)).toBe(2);
    expect((await readdir(root)).sort()).toEqual(['job-running', 'not-ours']);
  });

  it('removes abandoned engine installs and engines this version does not use, and nothing it did not make', async () => {
    const engines = await scratch();
    for (const name of ['node_24-v24.13.1', 'node_24-v24.1.0']) {
      await mkdir(join(engines, name));
      await writeFile(join(engines, name, 'engine.json'), '{}');
    }
    await aged(join(engines, '.node_24-v24.13.1-abc'), STALE_STAGING_MS + 60_000);
    await aged(join(engines, '.bun_1_3-1.3.14-def'), 60_000);
    await aged(join(engines, '.operators-own'), STALE_STAGING_MS * 100);
    await aged(join(engines, 'operators-tools'), STALE_STAGING_MS * 100);
    expect(await removeUnusedEngines(engines, new Set(['node_24-v24.13.1', 'bun_1_3-1.3.14']))).toBe(2);
    expect((await readdir(engines)).sort()).toEqual(['.bun_1_3-1.3.14-def', '.operators-own', 'node_24-v24.13.1', 'operators-tools']);
  });

  it('prunes cached files older than the limit, and the directories that leaves empty', async () => {
    const cache = await scratch();
    const content = join(cache, 'uid-61000', 'npm', '_cacache', 'content-v2', 'sha512', 'ab');
    await mkdir(content, { recursive: true });
    await aged(join(content, 'old'), 20 * 86_400_000, true);
    await aged(join(cache, 'operators-file'), 20 * 86_400_000, true);
    await mkdir(join(cache, 'agent', 'npm', 'fresh'), { recursive: true });
    await aged(join(cache, 'agent', 'npm', 'fresh', 'new'), 86_400_000, true);
    expect(await pruneDependencyCache(cache, 14 * 86_400_000)).toEqual({ files: 1, bytes: 10 });
    expect(await readdir(join(cache, 'uid-61000'))).toEqual(['npm']);
    expect(await readdir(join(cache, 'uid-61000', 'npm'))).toEqual([]);
    expect((await readdir(cache)).sort()).toEqual(['agent', 'operators-file', 'uid-61000']);
    expect(await readdir(join(cache, 'agent', 'npm', 'fresh'))).toEqual(['new']);
    // 0: the cache is kept whatever its age.
    await aged(join(cache, 'agent', 'npm', 'fresh', 'new'), 3650 * 86_400_000, true);
    expect(await pruneDependencyCache(cache, 0)).toEqual({ files: 0, bytes: 0 });
  });
});
