/**
 * A job directory a script made hard to remove (directories of mode 000)
 * still goes when the agent owns it without being root, as a non-root agent
 * under namespaces isolation does.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const NOBODY = 65534;
const BUILT = resolve(import.meta.dirname, '../../dist/agent/sandbox/remove-tree.js');
const work = mkdtempSync(join(tmpdir(), 'outpost-remove-tree-'));
chmodSync(work, 0o755);

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A job directory owned by `nobody`, with a directory inside it that even its owner cannot open. */
function lockedTree(): string {
  // The sandbox root is the agent's own, as for a non-root agent.
  const sandboxRoot = join(work, 'sandboxes');
  mkdirSync(sandboxRoot, { recursive: true });
  chownSync(sandboxRoot, NOBODY, NOBODY);
  const root = join(sandboxRoot, `job-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  writeFileSync(join(root, 'a', 'b', 'file'), 'x');
  for (const path of [root, join(root, 'a'), join(root, 'a', 'b'), join(root, 'a', 'b', 'file')]) chownSync(path, NOBODY, NOBODY);
  chmodSync(join(root, 'a'), 0o000);
  return root;
}

/** Runs `code` as nobody, with the built module next to it (nobody may not reach the checkout). */
function asNobody(code: string, root: string): { status: number | null; stderr: string } {
  const module = join(work, 'remove-tree.mjs');
  copyFileSync(BUILT, module);
  const result = spawnSync('/usr/bin/setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', process.execPath, '--input-type=module', '-e', code, module, root], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: result.status, stderr: result.stderr };
}

describe.skipIf(process.getuid?.() !== 0)('removing a job directory as its non-root owner', () => {
  it('cannot be done by a plain recursive remove', () => {
    const root = lockedTree();
    const plain = asNobody(`import { rm } from 'node:fs/promises'; await rm(process.argv[2], { recursive: true, force: true });`, root);
    expect(plain.status).not.toBe(0);
    expect(existsSync(root)).toBe(true);
  });

  it('is done by removeTree, which opens the modes up first', () => {
    execFileSync('test', ['-f', BUILT]);
    const root = lockedTree();
    const done = asNobody(`const { removeTree } = await import(process.argv[1]); await removeTree(process.argv[2]);`, root);
    expect(done.stderr).toBe('');
    expect(done.status).toBe(0);
    expect(existsSync(root)).toBe(false);
  });
});
