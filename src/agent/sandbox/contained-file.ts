/**
 * Files a sandbox wrote, as the agent may take them. The agent reads (and
 * uploads) as itself, so a path the script controls — a report's attachment,
 * a link left in the job directory — must resolve to a regular file really
 * inside the job's directory; a link elsewhere, a FIFO or a device is never
 * followed.
 *
 * A check by name and a later open by name are two looks at a path the
 * script may still change in between (a warm sandbox, a process left behind,
 * a link swapped in). So what leaves the machine is taken by
 * copyContainedFile: checked, opened once without following links, the open
 * file itself checked again, and copied from that one handle into a directory
 * of the agent's own. Everything after — scrubbing, uploading — reads the
 * copy, never the job's directory.
 *
 * A hard link is the one kind of link that is a regular file inside the
 * directory whatever it points at. What keeps the sandbox from making one to
 * a file of the agent's (its configuration, a key, /etc/shadow) is the kernel:
 * with fs.protected_hardlinks=1 (every mainstream distribution's default) a
 * user may only link to a file it owns or can both read and write, and the
 * sandbox user owns nothing of the agent's. /proc and other pseudo file
 * systems cannot be hard-linked from a job's directory at all (another file
 * system). On top of that, copyContainedFile refuses a file with more than
 * one link: what a script or Playwright writes has exactly one, so a second
 * name means it was linked from elsewhere, whatever the host's sysctl says.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, rm, stat, type FileHandle } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { ArtifactMissingError, ArtifactNotContainedError, ArtifactNotRegularError, ArtifactOverLimitError } from '../../errors/index.js';

/** The real path of `path` when it is a regular file inside `root`; undefined otherwise. */
export async function fileInside(path: string, root: string): Promise<string | undefined> {
  try {
    const [real, realRoot] = await Promise.all([realpath(path), realpath(root)]);
    return real.startsWith(`${realRoot}${sep}`) && (await stat(real)).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}

export interface ContainedCopy {
  /** Where, inside the root, the copied file really was. */
  source: string;
  /** Bytes copied. */
  size: number;
}

/**
 * Neither follows a link in the last component nor waits for a writer (a
 * FIFO), nor lets a terminal become the agent's controlling one.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
/** The copy is new, the agent's alone, and never written through a link. */
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const CHUNK_BYTES = 1024 * 1024;

/**
 * Copies `path`, which the script controls, to `destination`, which the agent
 * does (a new file in a directory of its own; never an existing one), when it
 * is a regular file inside `root` of at most `limitBytes` bytes. Throws
 * ArtifactMissingError, ArtifactNotContainedError, ArtifactNotRegularError or
 * ArtifactOverLimitError saying why not, and leaves no destination behind then.
 */
export async function copyContainedFile(path: string, root: string, destination: string, limitBytes: number): Promise<ContainedCopy> {
  return withContainedFile(path, root, limitBytes, async (handle, source, shown) => ({
    source,
    size: await copyFrom(handle, destination, shown, limitBytes),
  }));
}

/** The bytes of `path` under the same rules as copyContainedFile, read into memory (a report, say). */
export async function readContainedFile(path: string, root: string, limitBytes: number): Promise<Buffer> {
  return withContainedFile(path, root, limitBytes, async (handle, _source, shown) => {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, limitBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, total);
      if (bytesRead === 0) return Buffer.concat(chunks, total);
      total += bytesRead;
      if (total > limitBytes) throw grewPast(shown, limitBytes);
      chunks.push(chunk.subarray(0, bytesRead));
    }
  });
}

/**
 * Checks `path` and opens it once, then hands `use` that handle, which is
 * all it may read: whatever the path names afterwards does not matter.
 */
async function withContainedFile<T>(
  path: string,
  root: string,
  limitBytes: number,
  use: (handle: FileHandle, source: string, shown: string) => Promise<T>,
): Promise<T> {
  const realRoot = await realpath(root);
  const inside = (real: string): boolean => real.startsWith(`${realRoot}${sep}`);
  const shown = shownAs(path, realRoot);

  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    throw lookupError(error, shown);
  }
  if (!inside(real)) throw new ArtifactNotContainedError(`${shown} leads out of the job's directory; not read`);

  let checked: Stats;
  try {
    checked = await lstat(real);
  } catch (error) {
    throw lookupError(error, shown);
  }
  // realpath resolved every link; one here now was swapped in since.
  if (checked.isSymbolicLink()) throw new ArtifactNotContainedError(`${shown} was replaced by a link while being checked; not read`);
  if (!checked.isFile()) throw new ArtifactNotRegularError(`${shown} is ${kindOf(checked)}, not a regular file; not read`);
  if (checked.size > limitBytes) throw overLimit(shown, checked.size, limitBytes);

  let handle: FileHandle;
  try {
    handle = await open(real, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new ArtifactNotContainedError(`${shown} was replaced by a link while being checked; not read`, { cause: error });
    if (code === 'ENXIO') throw new ArtifactNotRegularError(`${shown} is a socket, not a regular file; not read`, { cause: error });
    throw lookupError(error, shown);
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw new ArtifactNotRegularError(`${shown} is ${kindOf(opened)}, not a regular file; not read`);
    if (opened.dev !== checked.dev || opened.ino !== checked.ino) {
      throw new ArtifactNotContainedError(`${shown} was replaced while being checked; not read`);
    }
    // O_NOFOLLOW covers the last component only; a directory above it swapped for a link shows here.
    const openedPath = await openedAt(handle, shown);
    if (!inside(openedPath)) throw new ArtifactNotContainedError(`${shown} was opened outside the job's directory; not read`);
    if (opened.nlink !== 1) {
      throw new ArtifactNotContainedError(`${shown} has ${opened.nlink} hard links, so it may be a file from elsewhere; not read`);
    }
    if (opened.size > limitBytes) throw overLimit(shown, opened.size, limitBytes);
    return await use(handle, openedPath, shown);
  } finally {
    await handle.close();
  }
}

/** Every byte the handle gives, to a new file, up to the limit: a file still growing is refused, not cut. */
async function copyFrom(handle: FileHandle, destination: string, shown: string, limitBytes: number): Promise<number> {
  const output = await open(destination, CREATE_FLAGS, 0o600);
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let total = 0;
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > limitBytes) throw grewPast(shown, limitBytes);
      let written = 0;
      while (written < bytesRead) {
        written += (await output.write(buffer, written, bytesRead - written)).bytesWritten;
      }
    }
    await output.close();
    return total;
  } catch (error) {
    await output.close().catch(() => undefined);
    await rm(destination, { force: true });
    throw error;
  }
}

/** The path the kernel holds for an open file: where it really is, whatever was swapped on the way. */
async function openedAt(handle: FileHandle, shown: string): Promise<string> {
  let target: string;
  try {
    target = await readlink(`/proc/self/fd/${handle.fd}`);
  } catch (error) {
    // Without /proc the check cannot be made, and an unchecked file is not taken.
    throw new ArtifactNotContainedError(`${shown}: where the open file lies cannot be told (${(error as Error).message}); not read`, { cause: error });
  }
  if (target.endsWith(' (deleted)')) throw new ArtifactMissingError(`${shown} was removed while being read; not read`);
  return target;
}

function lookupError(error: unknown, shown: string): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return new ArtifactMissingError(`${shown} does not exist (or is a link to nothing)`, { cause: error });
  if (code === 'ELOOP') return new ArtifactNotContainedError(`${shown} is a loop of links; not read`, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}

function overLimit(shown: string, size: number, limitBytes: number): ArtifactOverLimitError {
  return new ArtifactOverLimitError(`${shown} is ${size} bytes, over the ${limitBytes}-byte limit; not read`);
}

function grewPast(shown: string, limitBytes: number): ArtifactOverLimitError {
  return new ArtifactOverLimitError(`${shown} grew past the ${limitBytes}-byte limit while being read; not read`);
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** The path as the job would name it: relative to its directory when it is in it, as given otherwise. */
function shownAs(path: string, realRoot: string): string {
  const within = relative(realRoot, path);
  return within !== '' && !within.startsWith('..') && !within.startsWith(sep) ? within : path;
}
