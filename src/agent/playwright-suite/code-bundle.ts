/**
 * A suite's code: downloaded from the service, refused unless its SHA-256 is
 * the one the job named, then unpacked into the job's project directory —
 * and refused whole if any entry would land outside it.
 */
import { isAbsolute, posix, resolve, sep } from 'node:path';
import { list, extract, type ReadEntry } from 'tar';
import { CodeBundleChecksumError, CodeBundleInvalidError } from '../../errors/index.js';
import { MAX_CODE_BUNDLE_BYTES, type CodeBundleRef } from '../../protocol/playwright-settings.js';
import type { ServiceClient } from '../service-client.js';
import type { SandboxUser } from '../isolation/isolation.js';

/** Unpacked, a project's sources stay far below this; a gzip bomb does not. */
const MAX_UNPACKED_BYTES = 512 * 1024 * 1024;
const MAX_ENTRIES = 50_000;
const ALLOWED_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'SymbolicLink']);

export async function downloadCodeBundle(
  client: Pick<ServiceClient, 'downloadCodeBundle'>,
  bundle: CodeBundleRef,
  destination: string,
  signal?: AbortSignal,
): Promise<void> {
  const received = await client.downloadCodeBundle(bundle.id, destination, MAX_CODE_BUNDLE_BYTES, signal);
  if (received.sha256 !== bundle.sha256) {
    throw new CodeBundleChecksumError(
      `Code bundle ${bundle.id} has SHA-256 ${received.sha256} (${received.size} bytes), not ${bundle.sha256} as the job says; it was not run`,
    );
  }
}

/**
 * Why an entry may not be unpacked under the project directory, or undefined
 * when it may. Links may point only inside the project: a link out would let
 * the next entry, or the agent reading the report, write or read elsewhere.
 */
export function entryProblem(entry: Pick<ReadEntry, 'path' | 'type' | 'linkpath'>): string | undefined {
  const path = entry.path;
  if (path.includes('\0')) return 'has a NUL character in its name';
  if (isAbsolute(path) || /^[A-Za-z]:/.test(path)) return 'has an absolute path';
  if (path.split(/[\\/]/).includes('..')) return 'climbs out with ..';
  if (!ALLOWED_TYPES.has(entry.type)) return `is a ${entry.type}, which a project has no use for`;
  if (entry.type === 'SymbolicLink') {
    const target = entry.linkpath ?? '';
    if (isAbsolute(target)) return `links to the absolute path ${target}`;
    const landing = posix.normalize(posix.join(posix.dirname(path), target));
    if (landing === '..' || landing.startsWith('../')) return `links outside the project (${target})`;
  }
  return undefined;
}

/** Checks every entry first, then unpacks: a bad bundle leaves nothing behind to half-run. */
export async function unpackCodeBundle(archive: string, directory: string, user: SandboxUser | null): Promise<void> {
  const problems: string[] = [];
  let entries = 0;
  let bytes = 0;
  try {
    await list({
      file: archive,
      strict: true,
      onReadEntry: (entry) => {
        entries += 1;
        bytes += entry.size ?? 0;
        const problem = entryProblem(entry);
        if (problem && problems.length < 5) problems.push(`${JSON.stringify(entry.path)} ${problem}`);
      },
    });
  } catch (error) {
    throw new CodeBundleInvalidError(`The code bundle is not a readable tar.gz: ${(error as Error).message}`, { cause: error });
  }
  if (problems.length > 0) throw new CodeBundleInvalidError(`The code bundle was refused: ${problems.join('; ')}`);
  if (entries === 0) throw new CodeBundleInvalidError('The code bundle holds no files');
  if (entries > MAX_ENTRIES) throw new CodeBundleInvalidError(`The code bundle holds ${entries} entries, over the ${MAX_ENTRIES} allowed`);
  if (bytes > MAX_UNPACKED_BYTES) {
    throw new CodeBundleInvalidError(`The code bundle unpacks to ${bytes} bytes, over the ${MAX_UNPACKED_BYTES} allowed`);
  }
  const root = resolve(directory);
  await extract({
    file: archive,
    cwd: root,
    strict: true,
    // The sandbox user owns what it runs; nothing keeps the owner recorded in the archive.
    ...(user ? { uid: user.uid, gid: user.gid } : { preserveOwner: false }),
    // Checked again as it unpacks, in case the archive reads differently a second time.
    filter: (path, entry) => {
      const target = resolve(root, path);
      return (target === root || target.startsWith(`${root}${sep}`)) && !entryProblem(entry as ReadEntry);
    },
  });
}
