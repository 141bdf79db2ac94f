/**
 * Bytes a job has written: the blocks its files take, walked without
 * following links (a link to the runtime is not the job's writing), each
 * inode counted once (hard links), gone-while-walking entries ignored.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Past this many entries the walk stops: a job that made more is measured by what was seen. */
const MAX_ENTRIES = 200_000;

export async function directoryBytes(root: string, owner?: number): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  let entries = 0;
  const stack = [root];
  while (stack.length > 0 && entries < MAX_ENTRIES) {
    const directory = stack.pop()!;
    let names: string[];
    try {
      names = await readdir(directory);
    } catch {
      continue;
    }
    for (const name of names) {
      entries += 1;
      const path = join(directory, name);
      try {
        const stats = await lstat(path);
        if (stats.isDirectory()) stack.push(path);
        if (owner !== undefined && stats.uid !== owner) continue;
        const key = `${stats.dev}:${stats.ino}`;
        if (seen.has(key)) continue;
        seen.add(key);
        total += stats.blocks * 512;
      } catch {
        // removed while walking
      }
    }
  }
  return total;
}
