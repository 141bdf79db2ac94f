import { readdir, readFile } from 'node:fs/promises';

/** One process on the machine, as /proc shows it. */
export interface ProcessEntry {
  pid: number;
  /** Real user id. */
  uid: number;
  comm: string;
  /** R, S, D, T, Z (a zombie: dead, not yet reaped by its parent), X, …; see proc(5). */
  state: string;
  /** The arguments joined by spaces; empty for kernel threads and zombies. */
  cmdline: string;
}

/** Every process this user may look at now; those that end while being read are left out. */
export async function processTable(): Promise<ProcessEntry[]> {
  const entries: ProcessEntry[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = await readFile(`/proc/${name}/status`, 'utf8');
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1);
      const comm = /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '';
      const state = /^State:\s+(\S)/m.exec(status)?.[1] ?? '?';
      const cmdline = (await readFile(`/proc/${name}/cmdline`)).toString('utf8').replace(/\0+$/, '').replace(/\0/g, ' ');
      entries.push({ pid: Number(name), uid, comm, state, cmdline });
    } catch {
      // ended meanwhile
    }
  }
  return entries;
}
