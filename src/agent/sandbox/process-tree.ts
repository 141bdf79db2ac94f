/**
 * What the kernel knows about a sandbox's processes, read from /proc: the
 * sandbox may fork, double-fork or call setsid, so its process group alone
 * does not find everything it started; its own user id does, and so does
 * descent from a namespace's first process, where orphans are reparented.
 */
import { readdir, readFile } from 'node:fs/promises';

export interface ProcessSelector {
  /** Processes of this process group. */
  pgid?: number;
  /** Processes whose real user id is this one: a sandbox user's every process. */
  uid?: number;
  /** This process and everything below it (a PID namespace's processes all descend from its outer start). */
  root?: number;
}

export interface ProcessInfo {
  pid: number;
  threads: number;
  ppid: number;
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
    const ppid = Number(fields[1]);
    const pgid = Number(fields[2]);
    const rssPages = Number(fields[21]);
    const uidLine = /^Uid:\s+(\d+)/m.exec(status);
    const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
    return { pid, threads, ppid, pgid, uid: uidLine ? Number(uidLine[1]) : -1, rssBytes: rssPages * PAGE_SIZE };
  } catch {
    return undefined; // gone between the listing and the read
  }
}

export async function allProcesses(): Promise<ProcessInfo[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const pids = entries.filter((entry) => /^\d+$/.test(entry)).map(Number);
  const infos = await Promise.all(pids.map(readProcess));
  return infos.filter((info): info is ProcessInfo => info !== undefined);
}

export async function listProcesses(selector: ProcessSelector): Promise<ProcessInfo[]> {
  const all = await allProcesses();
  const below = selector.root === undefined ? new Set<number>() : descendants(all, selector.root);
  return all.filter(
    (info) =>
      below.has(info.pid) ||
      (selector.pgid !== undefined && info.pgid === selector.pgid) ||
      (selector.uid !== undefined && info.uid === selector.uid),
  );
}

function descendants(all: ProcessInfo[], root: number): Set<number> {
  const children = new Map<number, number[]>();
  for (const info of all) children.set(info.ppid, [...(children.get(info.ppid) ?? []), info.pid]);
  const found = new Set<number>();
  const stack = all.some((info) => info.pid === root) ? [root] : [];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (found.has(pid)) continue;
    found.add(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return found;
}

/**
 * The memory these processes hold together. Resident sizes double-count what
 * they share (a browser's dozen processes map the same binary and fonts, and
 * their sum overstates the job by gigabytes), so each process counts its
 * proportional share (PSS); its resident size only where the kernel will not
 * say more.
 */
export async function memoryBytes(processes: ProcessInfo[]): Promise<number> {
  const shares = await Promise.all(processes.map(async (info) => (await proportionalBytes(info.pid)) ?? info.rssBytes));
  return shares.reduce((total, bytes) => total + bytes, 0);
}

async function proportionalBytes(pid: number): Promise<number | undefined> {
  try {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kilobytes = /^Pss:\s+(\d+) kB/m.exec(rollup)?.[1];
    return kilobytes === undefined ? undefined : Number(kilobytes) * 1024;
  } catch {
    return undefined; // gone, or not ours to read
  }
}

/** SIGKILLs the group and, when given, every process of the user or below the root; repeats until none is left (fork bombs). */
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

/** User ids that have a live process now. */
export async function liveUids(): Promise<Set<number>> {
  return new Set((await allProcesses()).map((info) => info.uid));
}

/** Whether the process is gone (a zombie counts as gone: it holds nothing and runs nothing). */
export async function processGone(pid: number): Promise<boolean> {
  return (await readProcess(pid)) === undefined;
}
