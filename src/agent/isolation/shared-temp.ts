/**
 * What a job without a mount namespace of its own leaves in the machine's
 * shared temporary directories: everything its user owns there is counted
 * against its limits while it runs (/dev/shm is memory, /tmp and /var/tmp
 * disk) and removed when it ends, so no later job finds it.
 */
import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { directoryBytes } from '../sandbox/disk-usage.js';
import type { HeldBytes } from '../sandbox/sandbox-process.js';

const MEMORY_BACKED = ['/dev/shm'];
const DISK_BACKED = ['/tmp', '/var/tmp'];

/**
 * The user's entries in a shared directory: its own top-level entries, and
 * its entries one level into the world-writable directories there (such as
 * /tmp/.X11-unix), the only other places it can create anything.
 */
async function entriesOf(directory: string, uid: number): Promise<string[]> {
  const found: string[] = [];
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return found;
  }
  for (const name of names) {
    const path = join(directory, name);
    try {
      const stats = await lstat(path);
      if (stats.uid === uid) found.push(path);
      else if (stats.isDirectory() && (stats.mode & 0o002) !== 0) {
        for (const inner of await readdir(path).catch(() => [] as string[])) {
          const innerPath = join(path, inner);
          const innerStats = await lstat(innerPath).catch(() => undefined);
          if (innerStats?.uid === uid) found.push(innerPath);
        }
      }
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function bytesOf(directories: string[], uid: number): Promise<number> {
  let total = 0;
  for (const directory of directories) {
    for (const path of await entriesOf(directory, uid)) {
      const stats = await lstat(path).catch(() => undefined);
      if (!stats) continue;
      total += stats.isDirectory() ? await directoryBytes(path, uid) : stats.blocks * 512;
    }
  }
  return total;
}

export async function userTempBytes(uid: number): Promise<HeldBytes> {
  const [memory, disk] = await Promise.all([bytesOf(MEMORY_BACKED, uid), bytesOf(DISK_BACKED, uid)]);
  return { memory, disk };
}

/** Call once nothing of the user runs: nothing can add to it while it goes. */
export async function removeUserTemp(uid: number): Promise<void> {
  for (const directory of [...MEMORY_BACKED, ...DISK_BACKED]) {
    for (const path of await entriesOf(directory, uid)) {
      await rm(path, { recursive: true, force: true }).catch(() => undefined);
    }
  }
}
