/**
 * Screenshots a script saved itself, in a multi-step or browser check's job
 * directory: found after the run and uploaded beside the report's attachments.
 */
import { lstat, readdir } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';

/** Screenshots a script saved itself, at most this many. */
export const MAX_SCRIPT_SCREENSHOTS = 20;
const IMAGE_TYPES: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg' };
/** The runtime's, or the agent's links (HOME's `.cache`): never a script's screenshot. */
const SKIPPED = new Set(['node_modules', '.cache']);
const MAX_DEPTH = 6;
const MAX_ENTRIES = 5000;

export interface FoundImage {
  path: string;
  name: string;
  contentType: string;
}

/**
 * Image files the script wrote into its directory (`page.screenshot({ path })`,
 * relative to the job directory as to a project's root, or beside the script
 * in `check/`) that are not in `known` (what the report lists, the files the
 * agent wrote): regular files only, links never followed, a bounded walk.
 * Read after everything of the job is gone.
 */
export async function scriptScreenshots(root: string, known: ReadonlySet<string>): Promise<FoundImage[]> {
  const found: FoundImage[] = [];
  let seen = 0;
  const walk = async (directory: string, depth: number): Promise<void> => {
    let entries;
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (found.length >= MAX_SCRIPT_SCREENSHOTS || ++seen > MAX_ENTRIES) return;
      const path = join(directory, entry.name);
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH && !(depth === 0 && SKIPPED.has(entry.name))) await walk(path, depth + 1);
        continue;
      }
      const contentType = IMAGE_TYPES[extname(entry.name).toLowerCase()];
      if (!entry.isFile() || !contentType || known.has(path)) continue;
      // A Dirent says what the entry was when listed; lstat again, and the upload checks once more.
      const stats = await lstat(path).catch(() => undefined);
      if (!stats?.isFile()) continue;
      found.push({ path, name: basename(entry.name, extname(entry.name)), contentType });
    }
  };
  await walk(root, 0);
  return found.filter((image) => !relative(root, image.path).startsWith('..'));
}
