/**
 * What the agent copies out of a job's directory before scrubbing and
 * uploading it: only a regular file really inside, read through the one
 * handle it checked. Real files, links, FIFOs and devices on the real file
 * system; the sandbox's tricks played for real, races included.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { chmod, link, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { copyContainedFile, fileInside, readContainedFile } from '../../src/agent/sandbox/contained-file.js';
import { errorCode } from '../../src/errors/index.js';

const LIMIT = 1024 * 1024;
/** What the agent must never read for a script: stands for its own environment, keys, /etc/shadow. */
const OUTSIDE_CONTENT = 'AGENT_KEY=agent-private-key-0001\n';
const INSIDE_CONTENT = 'a screenshot, honestly\n';

let base: string;
let root: string;
let outside: string;
let scratch: string;
let secretFile: string;
let copies = 0;

/** Making device nodes takes CAP_MKNOD, which a container may not have. */
function canMakeDevices(): boolean {
  const probe = join(tmpdir(), `outpost-mknod-probe-${process.pid}`);
  const made = spawnSync('mknod', [probe, 'c', '1', '3']).status === 0;
  rmSync(probe, { force: true });
  return made;
}

function destination(): string {
  copies += 1;
  return join(scratch, `copy-${copies}`);
}

async function refusal(path: string, limit = LIMIT): Promise<{ code: string | undefined; message: string; destination: string }> {
  const to = destination();
  const error = await copyContainedFile(path, root, to, limit).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error, `${path} was copied`).toBeInstanceOf(Error);
  return { code: errorCode(error), message: (error as Error).message, destination: to };
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'outpost-containment-'));
  outside = join(base, 'agent');
  scratch = join(base, 'scratch');
  await mkdir(outside, { mode: 0o755 });
  await mkdir(scratch, { mode: 0o700 });
  secretFile = join(outside, 'secret');
  await writeFile(secretFile, OUTSIDE_CONTENT, { mode: 0o600 });
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

beforeEach(async () => {
  root = await mkdtemp(join(base, 'job-'));
});

describe('copyContainedFile', () => {
  it('copies a regular file inside the job directory byte for byte, and says where it was', async () => {
    const bytes = Buffer.concat([Buffer.from(INSIDE_CONTENT), Buffer.alloc(3 * 1024 * 1024 + 17, 0xa5)]);
    await mkdir(join(root, 'results'));
    await writeFile(join(root, 'results', 'shot.png'), bytes);
    const to = destination();
    const copied = await copyContainedFile(join(root, 'results', 'shot.png'), root, to, 8 * 1024 * 1024);
    expect(copied.size).toBe(bytes.length);
    expect(copied.source.endsWith(join('results', 'shot.png'))).toBe(true);
    expect((await readFile(to)).equals(bytes)).toBe(true);
  });

  it('refuses a symlink to a file outside the job directory', async () => {
    await symlink(secretFile, join(root, 'trace.zip'));
    const refused = await refusal(join(root, 'trace.zip'));
    expect(refused.code).toBe('ARTIFACT_NOT_CONTAINED');
    expect(refused.message).toContain("leads out of the job's directory");
    expect(refused.message).not.toContain(secretFile);
    expect(existsSync(refused.destination)).toBe(false);
  });

  it('refuses a link to the agent\'s own /proc/self/environ', async () => {
    await symlink('/proc/self/environ', join(root, 'env.txt'));
    expect((await refusal(join(root, 'env.txt'))).code).toBe('ARTIFACT_NOT_CONTAINED');
  });

  it('refuses a path outside the job directory named directly, or by climbing out of it', async () => {
    expect((await refusal(secretFile)).code).toBe('ARTIFACT_NOT_CONTAINED');
    expect((await refusal(join(root, '..', 'agent', 'secret'))).code).toBe('ARTIFACT_NOT_CONTAINED');
  });

  it('refuses a directory inside the job directory that links out', async () => {
    await symlink(outside, join(root, 'results'));
    expect((await refusal(join(root, 'results', 'secret'))).code).toBe('ARTIFACT_NOT_CONTAINED');
  });

  it('refuses a file that passed fileInside and was then replaced by a link out', async () => {
    const path = join(root, 'video.webm');
    await writeFile(path, INSIDE_CONTENT);
    // The check by name passes…
    expect(await fileInside(path, root)).toBeDefined();
    // …then the script swaps a link in, atomically, as it could while a warm sandbox still runs.
    await symlink(secretFile, join(root, 'swap'));
    await rename(join(root, 'swap'), path);
    const refused = await refusal(path);
    expect(refused.code).toBe('ARTIFACT_NOT_CONTAINED');
    expect(existsSync(refused.destination)).toBe(false);
  });

  it('refuses a hard link inside the job directory to a file outside it', async () => {
    // Root may link anything; what stops the sandbox user from doing the same is the next test.
    await link(secretFile, join(root, 'attachment.txt'));
    const refused = await refusal(join(root, 'attachment.txt'));
    expect(refused.code).toBe('ARTIFACT_NOT_CONTAINED');
    expect(refused.message).toContain('2 hard links');
    expect(existsSync(refused.destination)).toBe(false);
  });

  const canSwitchUser = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;
  it.skipIf(!canSwitchUser)('leaves an unprivileged user unable to hard-link a root-owned 0600 file into its directory', async () => {
    // The sandbox user owns its job directory and nothing of the agent's: with
    // fs.protected_hardlinks=1 the kernel refuses it a link to a file it cannot read and write.
    await chmod(root, 0o777);
    await chmod(base, 0o755);
    const protectedLinks = readFileSync('/proc/sys/fs/protected_hardlinks', 'utf8').trim();
    const linked = spawnSync(
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', 'ln', secretFile, join(root, 'stolen')],
      { encoding: 'utf8' },
    );
    await chmod(base, 0o700);
    if (protectedLinks === '1') {
      expect(linked.status).not.toBe(0);
      expect(linked.stderr).toMatch(/Operation not permitted/);
      expect(existsSync(join(root, 'stolen'))).toBe(false);
    } else {
      // A host without the protection: the link exists, and the copy still refuses it for its second name.
      expect((await refusal(join(root, 'stolen'))).code).toBe('ARTIFACT_NOT_CONTAINED');
    }
  });

  it('refuses a FIFO without waiting for a writer', async () => {
    execFileSync('mkfifo', [join(root, 'trace.zip')]);
    const started = Date.now();
    const refused = await refusal(join(root, 'trace.zip'));
    expect(refused.code).toBe('ARTIFACT_NOT_REGULAR_FILE');
    expect(refused.message).toContain('a FIFO');
    expect(Date.now() - started).toBeLessThan(2000);
  }, 5000);

  it('refuses a link inside the job directory to a FIFO there, without waiting', async () => {
    execFileSync('mkfifo', [join(root, 'pipe')]);
    await symlink(join(root, 'pipe'), join(root, 'shot.png'));
    expect((await refusal(join(root, 'shot.png'))).code).toBe('ARTIFACT_NOT_REGULAR_FILE');
  }, 5000);

  it.skipIf(!canMakeDevices())('refuses a device node inside the job directory', async () => {
    // The null device (1, 3): a link to /dev/null would be refused as outside already.
    execFileSync('mknod', [join(root, 'shot.png'), 'c', '1', '3']);
    const refused = await refusal(join(root, 'shot.png'));
    expect(refused.code).toBe('ARTIFACT_NOT_REGULAR_FILE');
    expect(refused.message).toContain('a character device');
  });

  it('refuses a directory', async () => {
    await mkdir(join(root, 'results'));
    const refused = await refusal(join(root, 'results'));
    expect(refused.code).toBe('ARTIFACT_NOT_REGULAR_FILE');
    expect(refused.message).toContain('a directory');
  });

  it('refuses a missing file and a dangling link as missing', async () => {
    expect((await refusal(join(root, 'nothing.png'))).code).toBe('ARTIFACT_MISSING');
    await symlink(join(root, 'gone'), join(root, 'dangling.png'));
    expect((await refusal(join(root, 'dangling.png'))).code).toBe('ARTIFACT_MISSING');
  });

  it('refuses a file over the limit, leaving no copy', async () => {
    await writeFile(join(root, 'big.webm'), Buffer.alloc(4097, 1));
    const refused = await refusal(join(root, 'big.webm'), 4096);
    expect(refused.code).toBe('ARTIFACT_TOO_LARGE');
    expect(refused.message).toContain('4097 bytes, over the 4096-byte limit');
    expect(existsSync(refused.destination)).toBe(false);
    // At the limit exactly, it is copied.
    await writeFile(join(root, 'fits.webm'), Buffer.alloc(4096, 1));
    expect((await copyContainedFile(join(root, 'fits.webm'), root, destination(), 4096)).size).toBe(4096);
  });

  it('never writes through a link at the destination', async () => {
    await writeFile(join(root, 'shot.png'), INSIDE_CONTENT);
    const to = destination();
    await symlink(join(outside, 'planted'), to);
    const error = await copyContainedFile(join(root, 'shot.png'), root, to, LIMIT).catch((thrown: unknown) => thrown);
    expect((error as NodeJS.ErrnoException).code).toBe('EEXIST');
    expect(existsSync(join(outside, 'planted'))).toBe(false);
  });
});

describe('readContainedFile', () => {
  it('reads a regular file inside, under the same rules as the copy', async () => {
    await writeFile(join(root, 'report.json'), '{"ok":true}');
    expect((await readContainedFile(join(root, 'report.json'), root, 100)).toString()).toBe('{"ok":true}');
    await symlink(secretFile, join(root, 'linked.json'));
    expect(errorCode(await readContainedFile(join(root, 'linked.json'), root, 100).catch((error: unknown) => error))).toBe('ARTIFACT_NOT_CONTAINED');
    expect(errorCode(await readContainedFile(join(root, 'report.json'), root, 10).catch((error: unknown) => error))).toBe('ARTIFACT_TOO_LARGE');
  });
});

/**
 * A process of the script's, still running, flips a path between a file of
 * its own and a way out, as fast as it can, while the agent copies it. Each
 * copy either is refused or holds the script's file: never the agent's.
 */
describe('copyContainedFile against a path swapped while it is copied', () => {
  let swapper: ChildProcess | undefined;

  afterEach(() => {
    swapper?.kill('SIGKILL');
    swapper = undefined;
  });

  function startSwapper(code: string, ...args: string[]): Promise<void> {
    swapper = spawn(process.execPath, ['-e', code, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    // It says when it has swapped once, so the race is on before the first copy.
    return new Promise((resolve, reject) => {
      swapper!.stdout!.once('data', () => resolve());
      swapper!.once('exit', (status) => reject(new Error(`the swapper exited with ${String(status)}`)));
    });
  }

  async function copyWhileSwapping(path: string, rounds: number): Promise<{ copied: number; refused: Set<string> }> {
    let copied = 0;
    const refused = new Set<string>();
    for (let round = 0; round < rounds; round++) {
      const to = destination();
      try {
        await copyContainedFile(path, root, to, LIMIT);
        const content = await readFile(to, 'utf8');
        expect(content).not.toContain('AGENT_KEY');
        expect(content).toBe(INSIDE_CONTENT);
        copied += 1;
      } catch (error) {
        const code = errorCode(error);
        expect(code, String(error)).toMatch(/^ARTIFACT_(NOT_CONTAINED|MISSING|NOT_REGULAR_FILE)$/);
        refused.add(code!);
        expect(existsSync(to)).toBe(false);
      }
    }
    return { copied, refused };
  }

  it('never copies the agent\'s file when the file itself is swapped for a link', async () => {
    const path = join(root, 'trace.zip');
    await startSwapper(
      `const fs = require('node:fs');
       const [path, target, content] = process.argv.slice(1);
       let told = false;
       for (;;) {
         fs.writeFileSync(path + '.file', content); fs.renameSync(path + '.file', path);
         try { fs.unlinkSync(path + '.link'); } catch {}
         fs.symlinkSync(target, path + '.link'); fs.renameSync(path + '.link', path);
         if (!told) { process.stdout.write('swapping\\n'); told = true; }
       }`,
      path,
      secretFile,
      INSIDE_CONTENT,
    );
    const { refused } = await copyWhileSwapping(path, 400);
    expect(refused.has('ARTIFACT_NOT_CONTAINED')).toBe(true);
  }, 30_000);

  it('never copies the agent\'s file when a directory on the way is swapped for a link', async () => {
    // Here O_NOFOLLOW does not help (it covers the last component): the open file's dev/ino and its /proc/self/fd path do.
    await mkdir(join(root, 'results'));
    await writeFile(join(root, 'results', 'secret'), INSIDE_CONTENT);
    await startSwapper(
      `const fs = require('node:fs');
       const [directory, target] = process.argv.slice(1);
       fs.symlinkSync(target, directory + '.link');
       let told = false;
       for (;;) {
         fs.renameSync(directory, directory + '.real'); fs.renameSync(directory + '.link', directory);
         fs.renameSync(directory, directory + '.link'); fs.renameSync(directory + '.real', directory);
         if (!told) { process.stdout.write('swapping\\n'); told = true; }
       }`,
      join(root, 'results'),
      outside,
    );
    const { refused } = await copyWhileSwapping(join(root, 'results', 'secret'), 1000);
    expect(refused.size).toBeGreaterThan(0);
  }, 30_000);

  it('never hangs on a FIFO swapped in after the check', async () => {
    const path = join(root, 'shot.png');
    await startSwapper(
      `const fs = require('node:fs');
       const [path, content] = process.argv.slice(1);
       let told = false;
       for (;;) {
         fs.writeFileSync(path + '.file', content); fs.renameSync(path + '.file', path);
         fs.mkdirSync(path + '.d', { recursive: true });
         require('node:child_process').execFileSync('mkfifo', [path + '.d/fifo']);
         fs.renameSync(path + '.d/fifo', path);
         if (!told) { process.stdout.write('swapping\\n'); told = true; }
       }`,
      path,
      INSIDE_CONTENT,
    );
    const { refused } = await copyWhileSwapping(path, 100);
    expect(refused.size).toBeGreaterThan(0);
  }, 30_000);
});
