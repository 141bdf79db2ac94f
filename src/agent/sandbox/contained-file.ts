/**
 * Files a sandbox wrote, as the agent may take them. The agent reads (and
 * uploads) as itself, so a path the script controls — a report's attachment,
 * a link left in the job directory — must resolve to a regular file really
 * inside the job's directory; a link elsewhere, a FIFO or a device is never
 * followed. The sandbox's processes are all gone by the time the agent looks,
 * so what is checked is what is read.
 */
import { realpath, stat } from 'node:fs/promises';
import { sep } from 'node:path';

/** The real path of `path` when it is a regular file inside `root`; undefined otherwise. */
export async function fileInside(path: string, root: string): Promise<string | undefined> {
  try {
    const [real, realRoot] = await Promise.all([realpath(path), realpath(root)]);
    return real.startsWith(`${realRoot}${sep}`) && (await stat(real)).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}
