/**
 * A job's own directory: the check's script and dependency files under
 * `check/`, the agent's Playwright config beside it, owned by the sandbox
 * user and nobody else, removed when the job ends.
 */
import { chmod, chown, lchown, mkdir, mkdtemp, readdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { InvalidSettingsError } from '../../errors/index.js';
import { removeTree } from '../sandbox/remove-tree.js';
import type { SandboxUser } from '../isolation/isolation.js';

export interface DependencyFile {
  path: string;
  content: string;
}

export interface JobDirectory {
  root: string;
  checkDirectory: string;
  remove(): Promise<void>;
}

export const SCRIPT_FILE = 'check.spec.js';

/** The parent of every job directory: traversable, not listable, so one job cannot find another's. */
export async function prepareSandboxRoot(root: string): Promise<void> {
  await mkdir(root, { recursive: true });
  await chmod(root, 0o711);
}

export interface JobFiles {
  script: string;
  dependencies: DependencyFile[];
  playwrightConfig: (root: string) => string;
}

/** A job's directory and its files at once: a cold run. */
export async function createJobDirectory(
  options: JobFiles & { sandboxRoot: string; runtimeNodeModules: string; user: SandboxUser | null },
): Promise<JobDirectory> {
  const directory = await reserveJobDirectory(options);
  try {
    await fillJobDirectory(directory, options, options.user);
    return directory;
  } catch (error) {
    await directory.remove();
    throw error;
  }
}

/**
 * A directory for a job not known yet (a warm sandbox starts in it): only
 * what any run of the runtime needs, and `extraFiles` beside it.
 */
export async function reserveJobDirectory(options: {
  sandboxRoot: string;
  runtimeNodeModules: string;
  user: SandboxUser | null;
  extraFiles?: Record<string, string>;
}): Promise<JobDirectory> {
  const root = await mkdtemp(join(options.sandboxRoot, 'job-'));
  const remove = () => removeTree(root);
  try {
    await chmod(root, 0o700);
    // Module lookups stop here instead of walking up into directories the sandbox may not read.
    await writeFile(join(root, 'package.json'), '{ "private": true }\n');
    await writeFile(join(root, 'tsconfig.json'), '{}\n');
    await symlink(options.runtimeNodeModules, join(root, 'node_modules'), 'dir');
    for (const [name, content] of Object.entries(options.extraFiles ?? {})) await writeFile(join(root, name), content);
    if (options.user) await chownTree(root, options.user);
    return { root, checkDirectory: join(root, 'check'), remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

/**
 * The job's own files, into a reserved directory. Only the agent and a
 * sandbox that has run nothing of a check's yet have had the directory, so
 * nothing in it can redirect these writes.
 */
export async function fillJobDirectory(directory: JobDirectory, files: JobFiles, user: SandboxUser | null): Promise<void> {
  await mkdir(directory.checkDirectory);
  for (const dependency of files.dependencies) {
    const target = join(directory.checkDirectory, safeRelativePath(dependency.path));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, dependency.content);
  }
  await writeFile(join(directory.checkDirectory, SCRIPT_FILE), files.script);
  await writeFile(join(directory.root, 'playwright.config.cjs'), files.playwrightConfig(directory.root));
  if (user) await chownTree(directory.root, user);
}

function safeRelativePath(path: string): string {
  const normal = normalize(path);
  if (path.length === 0 || isAbsolute(path) || normal.startsWith(`..${sep}`) || normal === '..' || normal.includes('\0')) {
    throw new InvalidSettingsError(`dependency path ${JSON.stringify(path)} must be relative and stay inside the check's directory`);
  }
  if (normal === SCRIPT_FILE) throw new InvalidSettingsError(`dependency path ${SCRIPT_FILE} is the check's own script`);
  return normal;
}

/** Hands a directory and everything in it to the job's user; links are changed, never followed. */
export async function chownTree(root: string, user: SandboxUser): Promise<void> {
  await chown(root, user.uid, user.gid);
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    // lchown: a link (node_modules to the runtime) stays pointing where it did, at what stays the agent's.
    await lchown(path, user.uid, user.gid);
  }
}
