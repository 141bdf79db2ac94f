/**
 * What the kernel knows about a sandbox's processes, read from /proc: the
 * sandbox may fork, double-fork or call setsid, so its process group alone
 * does not find everything it started; its own user id does.
 */
import { readdir, readFile } from 'node:fs/promises';

export interface ProcessSelector {
  /** Processes of this process group. */
  pgid?: number;
  /** Processes whose real user id is this one: a sandbox user's every process. */
  uid?: number;
}

interface ProcessInfo {
  pid: number;
  pgid: number;
  uid: number;
  rssBytes: number;
}

const PAGE_SIZE = 4096;

async function readProcess(pid: number): Promise<ProcessInfo | undefined> {
  try {
    const [stat, status] = await Promise.all([
      readFile(`/proc/${pid}/stat`, 'utf8'),
      readFile(`/proc/${pid}/status`, 'utf8'),
    ]);
    // The command name (field 2) may hold spaces and parentheses: fields count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // A zombie is already dead: it waits for its new parent (init) to reap it and holds nothing.
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    const pgid = Number(fields[2]);
    const rssPages = Number(fields[21]);
    const uidLine = /^Uid:\s+(\d+)/m.exec(status);
    return { pid, pgid, uid: uidLine ? Number(uidLine[1]) : -1, rssBytes: rssPages * PAGE_SIZE };
  } catch {
    return undefined; // gone between the listing and the read
  }
}

export async function listProcesses(selector: ProcessSelector): Promise<ProcessInfo[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const pids = entries.filter((entry) => /^\d+$/.test(entry)).map(Number);
  const infos = await Promise.all(pids.map(readProcess));
  return infos.filter(
    (info): info is ProcessInfo =>
      info !== undefined &&
      ((selector.pgid !== undefined && info.pgid === selector.pgid) ||
        (selector.uid !== undefined && info.uid === selector.uid)),
  );
}

export async function residentBytes(selector: ProcessSelector): Promise<number> {
  return (await listProcesses(selector)).reduce((total, info) => total + info.rssBytes, 0);
}

/** SIGKILLs the group and, when given, every process of the user; repeats until none is left (fork bombs). */
export async function killAll(selector: ProcessSelector, rounds = 20): Promise<void> {
  for (let round = 0; round < rounds; round += 1) {
    if (selector.pgid !== undefined) {
      try {
        process.kill(-selector.pgid, 'SIGKILL');
      } catch {
        // no such group any more
      }
    }
    const left = await listProcesses(selector);
    if (left.length === 0) return;
    for (const { pid } of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await new Promise((done) => setTimeout(done, 25));
  }
}
