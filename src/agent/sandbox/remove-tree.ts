/**
 * Removes a directory a job wrote. A script may leave directories it made
 * unreadable or unwritable (mode 000); when the agent is their owner but not
 * root, they would stay forever, so their modes are opened up and the
 * removal tried again. Links are never followed.
 */
import { chmod, lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

export async function removeTree(root: string): Promise<void> {
  try {
    await rm(root, { recursive: true, force: true, maxRetries: 3 });
    return;
  } catch {
    // opened up below, then once more
  }
  await openUp(root);
  await rm(root, { recursive: true, force: true, maxRetries: 3 });
}

async function openUp(directory: string): Promise<void> {
  const stats = await lstat(directory).catch(() => undefined);
  if (!stats?.isDirectory()) return;
  await chmod(directory, 0o700).catch(() => undefined);
  for (const name of await readdir(directory).catch(() => [] as string[])) await openUp(join(directory, name));
}
