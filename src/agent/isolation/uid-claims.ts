/**
 * Claims on sandbox user ids shared by every agent on one host. Two agents
 * with the same SANDBOX_UID_BASE would otherwise hand the same fresh id to
 * two jobs at once, and each, ending its own job, would kill the other's
 * processes. A claim is a file per id, created exclusively and holding its
 * owner (process id and start time, since process ids are reused); a claim
 * whose owner is gone (an agent killed with -9) is taken over.
 */
import { existsSync } from 'node:fs';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where claims live: memory-backed and host-wide where the system has it. */
export function defaultClaimsDirectory(): string {
  return existsSync('/run/lock') ? '/run/lock/outpost-sandbox-uids' : join(tmpdir(), 'outpost-sandbox-uids');
}

export class UidClaims {
  readonly #owner: Promise<string>;
  #ready: Promise<void> | undefined;

  constructor(private readonly directory: string = defaultClaimsDirectory()) {
    this.#owner = identity(process.pid).then((owner) => owner ?? `${process.pid} ?`);
  }

  /** Whether this agent now holds `uid`: false when another live agent does. */
  async claim(uid: number): Promise<boolean> {
    this.#ready ??= mkdir(this.directory, { recursive: true, mode: 0o700 }).then(() => undefined);
    await this.#ready;
    const path = this.#path(uid);
    const owner = await this.#owner;
    if (await createExclusive(path, owner)) return true;
    const holder = await readFile(path, 'utf8').catch(() => undefined);
    if (holder === undefined) return createExclusive(path, owner); // released meanwhile
    if (await ownerLives(holder)) return false;
    // Taken over through a rename only one agent can win; the loser finds nothing there and moves on.
    const aside = `${path}.stale-${process.pid}-${Math.random().toString(36).slice(2)}`;
    try {
      await rename(path, aside);
    } catch {
      return false;
    }
    const moved = await readFile(aside, 'utf8').catch(() => undefined);
    if (moved !== holder) {
      // A live agent claimed it between the read and the rename: its claim goes back.
      await link(aside, path).catch(() => undefined);
      await unlink(aside).catch(() => undefined);
      return false;
    }
    await unlink(aside).catch(() => undefined);
    return createExclusive(path, owner);
  }

  async release(uid: number): Promise<void> {
    const path = this.#path(uid);
    const holder = await readFile(path, 'utf8').catch(() => undefined);
    if (holder === (await this.#owner)) await unlink(path).catch(() => undefined);
  }

  #path(uid: number): string {
    return join(this.directory, String(uid));
  }
}

async function createExclusive(path: string, content: string): Promise<boolean> {
  try {
    await writeFile(path, content, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** `<pid> <start time>` of a live process; undefined when there is none. */
async function identity(pid: number): Promise<string | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return `${pid} ${fields[19]}`;
  } catch {
    return undefined;
  }
}

async function ownerLives(holder: string): Promise<boolean> {
  const pid = Number(holder.split(' ')[0]);
  // Unreadable content is a claim being written right now: treat it as held.
  if (!Number.isInteger(pid) || pid <= 0) return true;
  return (await identity(pid)) === holder;
}
