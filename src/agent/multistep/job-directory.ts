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

/**
 * Where the script is written in `check/` when its settings name no
 * `scriptPath`: a TypeScript name, since Playwright transpiles `.ts` test
 * files itself and plain JavaScript (ES module imports or `require`) is
 * TypeScript too, while `import { type Page }` is not JavaScript.
 */
export const DEFAULT_SCRIPT_FILE = 'check.spec.ts';

/** The parent of every job directory: traversable, not listable, so one job cannot find another's. */
export async function prepareSandboxRoot(root: string): Promise<void> {
  await mkdir(root, { recursive: true });
  await chmod(root, 0o711);
}

export interface JobFiles {
  script: string;
  /** Where the script goes in `check/`: its `scriptPath`, or DEFAULT_SCRIPT_FILE. */
  scriptPath: string;
  dependencies: DependencyFile[];
  playwrightConfig: (root: string) => string;
  /** The kind's own test file in `check/`, which loads the script (browser checks); none: the script is the test. */
  entry?: (root: string) => { name: string; content: string } | undefined;
  /** The kind's links, relative to the job directory → their targets. */
  links?: (root: string) => Record<string, string>;
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
  const entry = files.entry?.(directory.root);
  const scriptPath = checkedLayout(files, entry?.name);
  for (const dependency of files.dependencies) {
    const target = join(directory.checkDirectory, normalize(dependency.path));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, dependency.content);
  }
  const scriptTarget = join(directory.checkDirectory, scriptPath);
  await mkdir(dirname(scriptTarget), { recursive: true });
  await writeFile(scriptTarget, files.script);
  if (entry) await writeFile(join(directory.checkDirectory, entry.name), entry.content);
  for (const [path, target] of Object.entries(files.links?.(directory.root) ?? {})) {
    const link = join(directory.root, path);
    await mkdir(dirname(link), { recursive: true });
    await symlink(target, link);
  }
  await writeFile(join(directory.root, 'playwright.config.cjs'), files.playwrightConfig(directory.root));
  if (user) await chownTree(directory.root, user);
}

/**
 * Every file of `check/` in one layout, or an InvalidSettingsError saying
 * why not: each path inside the directory, none taken twice by the script,
 * a dependency and the agent's entry file, none a file where another needs a
 * folder (`tests` beside `tests/login.spec.ts`). Answers the script's path.
 */
function checkedLayout(files: JobFiles, entryName: string | undefined): string {
  const scriptPath = safeRelativePath(files.scriptPath, 'script path');
  const owners = new Map<string, string>([[scriptPath, "the check's own script"]]);
  if (entryName !== undefined) {
    if (scriptPath === entryName) throw new InvalidSettingsError(`script path ${entryName} is the agent's own file`);
    owners.set(entryName, "the agent's own file");
  }
  for (const dependency of files.dependencies) {
    const path = safeRelativePath(dependency.path, 'dependency path');
    const owner = owners.get(path);
    if (owner && owner !== 'a dependency') throw new InvalidSettingsError(`dependency path ${path} is ${owner}`);
    // The same dependency twice: the later one is written over the earlier, as it always was.
    owners.set(path, 'a dependency');
  }
  for (const path of owners.keys()) {
    for (let folder = dirname(path); folder !== '.'; folder = dirname(folder)) {
      const owner = owners.get(folder);
      if (owner) throw new InvalidSettingsError(`${path} needs a folder ${folder}, which is ${owner}`);
    }
  }
  return scriptPath;
}

function safeRelativePath(path: string, what: string): string {
  const normal = normalize(path);
  if (path.length === 0 || isAbsolute(path) || normal.startsWith(`..${sep}`) || normal === '..' || normal.includes('\0')) {
    throw new InvalidSettingsError(`${what} ${JSON.stringify(path)} must be relative and stay inside the check's directory`);
  }
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
