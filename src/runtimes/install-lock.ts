/**
 * One installer per runtime directory at a time, across processes: two `npm ci`
 * runs in one directory delete each other's files. The lock is a file in the
 * temporary directory (the runtime directory is under version control) holding
 * the owner's pid, so a lock left by a process that died is taken over.
 */
import { createHash } from 'node:crypto';
import { open, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const POLL_MS = 250;
// Between the exclusive open and the pid being written; older and still empty, the writer died.
const EMPTY_LOCK_GRACE_MS = 5000;

/** Locks this process holds: a pid alone cannot tell them from a dead process's lock once pids are reused. */
const held = new Set<string>();

export interface LockOptions {
  /** Called once if another process holds the lock and this one has to wait. */
  onWait?: () => void;
  /** Give up after this long; an install of three runtimes over a slow proxy takes minutes. */
  timeoutMs?: number;
}

/** The lock file of a runtime directory: one per directory, whatever path spelling leads to it. */
export function lockPathFor(dir: string): string {
  return join(tmpdir(), `outpost-runtime-${createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 16)}.lock`);
}

/** Runs `work` holding the lock of `dir`, waiting for another holder first. */
export async function withInstallLock<T>(dir: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const lockPath = lockPathFor(dir);
  const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
  let waited = false;
  for (;;) {
    if (await tryAcquire(lockPath)) break;
    if (!(await ownerAlive(lockPath))) {
      // Not airtight: two waiters that see the same dead owner in the same
      // instant may both take over. That needs an installer to die and two more
      // to be waiting on it, rare enough not to warrant more machinery.
      await rm(lockPath, { force: true });
      continue;
    }
    if (Date.now() >= deadline) throw new Error(`another process has been installing ${dir} for too long (lock ${lockPath})`);
    if (!waited) options.onWait?.();
    waited = true;
    await sleep(POLL_MS);
  }
  try {
    return await work();
  } finally {
    held.delete(lockPath);
    await rm(lockPath, { force: true });
  }
}

async function tryAcquire(lockPath: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(lockPath, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  held.add(lockPath);
  try {
    await handle.writeFile(String(process.pid));
  } catch (error) {
    held.delete(lockPath);
    await rm(lockPath, { force: true });
    throw error;
  } finally {
    await handle.close();
  }
  return true;
}

async function ownerAlive(lockPath: string): Promise<boolean> {
  let text: string;
  try {
    text = (await readFile(lockPath, 'utf8')).trim();
  } catch {
    return false;
  }
  const pid = Number(text);
  if (!/^\d+$/.test(text) || pid <= 0) {
    const age = await stat(lockPath).then((info) => Date.now() - info.mtimeMs, () => Infinity);
    return age < EMPTY_LOCK_GRACE_MS;
  }
  if (pid === process.pid) return held.has(lockPath);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
