/**
 * What housekeeping removes from disk: sandbox directories a job left behind
 * (the agent was killed before it could clean up), engine installs that never
 * finished or that no engine of this agent version uses, and dependency cache
 * files nobody has fetched again in a long time.
 */
import { readdir, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A job's directory lives as long as its job: at most a Playwright suite's 30
 * minutes plus its upload. Twice that and more is left over from a job that
 * is gone, whatever happened to it.
 */
export const STALE_SANDBOX_MS = 2 * 60 * 60_000;
/** An engine install takes minutes; a staging directory an hour old was abandoned. */
export const STALE_STAGING_MS = 60 * 60_000;

const SANDBOX_ENTRY = /^(job|suite)-/;
// Only what the agent itself made is touched, whatever else an operator keeps in these directories.
const ENGINE_STAGING = /^\.(node|bun)_\w+-/;
const ENGINE_STAMP = 'engine.json';
/** A check's corner of the cache (check-<hash>), and the per-user corners earlier agents made. */
const CACHE_SLOT = /^(check-[0-9a-f]{16}|uid-\d+|agent)$/;
const CACHE_TOOLS = ['npm', 'bun'];

/** Job and suite directories under the sandbox root not changed for STALE_SANDBOX_MS. */
export async function removeStaleSandboxes(root: string, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const name of await entries(root)) {
    if (!SANDBOX_ENTRY.test(name)) continue;
    if (await olderThan(join(root, name), now - STALE_SANDBOX_MS)) {
      await rm(join(root, name), { recursive: true, force: true, maxRetries: 3 });
      removed += 1;
    }
  }
  return removed;
}

/** Abandoned staging directories (`.<engine>-…`), and installed engines (stamped) no current engine is. */
export async function removeUnusedEngines(directory: string, current: ReadonlySet<string>, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const name of await entries(directory)) {
    const path = join(directory, name);
    const abandoned = ENGINE_STAGING.test(name) && (await olderThan(path, now - STALE_STAGING_MS));
    const outdated = !current.has(name) && (await exists(join(path, ENGINE_STAMP)));
    if (abandoned || outdated) {
      await rm(path, { recursive: true, force: true, maxRetries: 3 });
      removed += 1;
    }
  }
  return removed;
}

/**
 * Files under the dependency cache written longer than `maxAgeMs` ago, then
 * the directories that left empty. Package caches are content-addressed: a
 * file removed is fetched again by the next install that needs it.
 */
export async function pruneDependencyCache(cache: string, maxAgeMs: number, now = Date.now()): Promise<{ files: number; bytes: number }> {
  const pruned = { files: 0, bytes: 0 };
  if (maxAgeMs <= 0) return pruned;
  const walk = async (directory: string): Promise<void> => {
    for (const entry of await readdir(directory, { withFileTypes: true }).catch(() => [])) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) {
        await walk(path);
        // Only an empty one goes; another slot may be writing into it right now otherwise.
        await rmdir(path).catch(() => undefined);
      } else {
        const info = await stat(path).catch(() => undefined);
        if (info && info.mtimeMs < now - maxAgeMs) {
          await rm(path, { force: true });
          pruned.files += 1;
          pruned.bytes += info.size;
        }
      }
    }
  };
  // Within each corner's directory, which stays: it is made once, and handed to each job's user in turn.
  for (const slot of await entries(cache)) {
    if (!CACHE_SLOT.test(slot)) continue;
    for (const tool of CACHE_TOOLS) {
      const path = join(cache, slot, tool);
      if ((await stat(path).catch(() => undefined))?.isDirectory()) await walk(path);
    }
  }
  return pruned;
}

async function entries(directory: string): Promise<string[]> {
  return readdir(directory).catch(() => []);
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}

async function olderThan(path: string, cutoff: number): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  return info !== undefined && info.mtimeMs < cutoff;
}
