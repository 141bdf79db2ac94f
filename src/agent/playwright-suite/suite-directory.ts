/**
 * A suite job's own directory under the sandbox root: the downloaded bundle,
 * the unpacked project, the report. Owned by the job's sandbox user and
 * nobody else, removed when the job ends.
 */
import { chmod, chown, lchown, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxUser } from '../sandbox/sandbox-user.js';

export interface SuiteDirectory {
  root: string;
  /** Where the bundle is unpacked and the commands run. */
  project: string;
  bundle: string;
  report: string;
  remove(): Promise<void>;
}

export async function createSuiteDirectory(sandboxRoot: string): Promise<SuiteDirectory> {
  const root = await mkdtemp(join(sandboxRoot, 'suite-'));
  const remove = () => rm(root, { recursive: true, force: true, maxRetries: 3 });
  try {
    await chmod(root, 0o700);
    const project = join(root, 'project');
    await mkdir(project);
    return { root, project, bundle: join(root, 'bundle.tar.gz'), report: join(root, 'report.json'), remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

/** Hands the directory to the sandbox user; links are changed, never followed. */
export async function giveTo(root: string, user: SandboxUser | null): Promise<void> {
  if (!user) return;
  await chown(root, user.uid, user.gid);
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    await lchown(join(entry.parentPath, entry.name), user.uid, user.gid);
  }
}

/**
 * The slot's own corner of DEPENDENCY_CACHE: package managers write their
 * cache as whoever runs them, so each sandbox user gets a directory it owns.
 */
export async function dependencyCacheFor(cache: string, user: SandboxUser | null): Promise<string> {
  await mkdir(cache, { recursive: true });
  await chmod(cache, 0o711);
  const own = join(cache, user ? `uid-${user.uid}` : 'agent');
  await mkdir(own, { recursive: true, mode: 0o700 });
  if (user) await chown(own, user.uid, user.gid);
  return own;
}
