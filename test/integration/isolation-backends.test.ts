/**
 * The isolation backends on their own, with real processes: what a confined
 * process can see and do, how its identity is chosen and how everything of it
 * is ended, one test per way a job could reach past its confinement.
 */
import { spawn } from 'node:child_process';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseIsolation } from '../../src/agent/isolation/choose-isolation.js';
import type { Confinement, IsolationBackend, IsolationKind, JobLimits } from '../../src/agent/isolation/isolation.js';
import { killUser } from '../../src/agent/isolation/kill-as-user.js';
import { UidPool } from '../../src/agent/isolation/uid-pool.js';
import { prepareSandboxRoot } from '../../src/agent/multistep/job-directory.js';
import { listProcesses } from '../../src/agent/sandbox/process-tree.js';
import { runSandboxed, type SandboxRunOutcome } from '../../src/agent/sandbox/sandbox-process.js';
import { startTestAgent } from '../support/agent.js';
import { AGENT_KEY, isolationProblem } from '../support/script-harness.js';
import { defaultSandboxConfig } from '../../src/agent/config.js';

const LIMITS: JobLimits = { processes: 128, openFiles: 256, memoryBytes: 256 * 1024 * 1024, diskBytes: 64 * 1024 * 1024 };
const UID_BASE = 64100;
const UID_COUNT = 8;
let root: string;
let readOnly: string;
const problems: Partial<Record<IsolationKind, string>> = {};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'outpost-isolation-test-'));
  await prepareSandboxRoot(root);
  readOnly = await mkdtemp(join(tmpdir(), 'outpost-isolation-runtime-'));
  await writeFile(join(readOnly, 'index.js'), 'module.exports = 1;\n');
  for (const kind of ['namespaces', 'users'] as const) problems[kind] = await isolationProblem(kind, root);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(readOnly, { recursive: true, force: true });
});

async function backend(kind: IsolationKind, limits: JobLimits = LIMITS): Promise<IsolationBackend> {
  return (await chooseIsolation({ mode: kind, allowUnsafe: true, uidBase: UID_BASE, uidCount: UID_COUNT, limits, directory: root })).backend;
}

async function shell(confinement: Confinement, script: string, timeoutMs = 10_000): Promise<SandboxRunOutcome> {
  const cwd = await mkdtemp(join(root, 'job-'));
  if (confinement.owner) await chown(cwd, confinement.owner.uid, confinement.owner.gid);
  return runSandboxed(
    confinement.spawn({ command: '/bin/sh', args: ['-c', script], cwd, env: { PATH: '/usr/bin:/bin', HOME: cwd }, view: { writable: [cwd], readable: [readOnly] } }),
    { timeoutMs, memoryLimitBytes: LIMITS.memoryBytes, diskLimitBytes: LIMITS.diskBytes, diskPaths: [cwd], outputLimitBytes: 1 << 20 },
  );
}

const rangeProcesses = async () =>
  (await Promise.all(Array.from({ length: UID_COUNT }, (_, n) => listProcesses({ uid: UID_BASE + n })))).flat();

describe.each(['namespaces', 'users'] as const)('%s backend', (kind) => {
  const skip = () => problems[kind];

  it('runs a job as a user id no process of the agent has, and a fresh one for the next job', async (context) => {
    if (skip()) return context.skip(skip());
    const isolation = await backend(kind);
    const first = await isolation.confine();
    const second = await isolation.confine();
    try {
      if (process.getuid?.() === 0) {
        expect(first.owner!.uid).toBeGreaterThanOrEqual(UID_BASE);
        expect(second.owner!.uid).not.toBe(first.owner!.uid);
      }
      const outcome = await shell(first, 'id -u');
      expect(outcome.exitCode).toBe(0);
      expect(Number(outcome.stdout.trim())).not.toBe(process.getuid?.());
    } finally {
      await first.release();
      await second.release();
    }
  });

  it('cannot read the agent\'s environment through /proc', async (context) => {
    if (skip()) return context.skip(skip());
    const confinement = await (await backend(kind)).confine();
    try {
      const outcome = await shell(confinement, `cat /proc/${process.pid}/environ >/dev/null 2>&1 && echo READ || echo denied`);
      expect(outcome.stdout.trim()).toBe('denied');
    } finally {
      await confinement.release();
    }
  });

  it('cannot write what it may only read (the runtime)', async (context) => {
    if (skip()) return context.skip(skip());
    const confinement = await (await backend(kind)).confine();
    try {
      const outcome = await shell(confinement, `echo poisoned >> ${join(readOnly, 'index.js')} 2>/dev/null && echo WROTE || echo refused`);
      expect(outcome.stdout.trim()).toBe('refused');
      expect(await readFile(join(readOnly, 'index.js'), 'utf8')).toBe('module.exports = 1;\n');
    } finally {
      await confinement.release();
    }
  });

  it('leaves no detached or setsid process behind, and one that forks and exits every few milliseconds goes too', async (context) => {
    if (skip()) return context.skip(skip());
    const confinement = await (await backend(kind)).confine();
    const marker = join(tmpdir(), `outpost-hop-${process.pid}-${kind}`);
    try {
      // A chain of processes, each starting the next and exiting: no pid lives long enough to be listed and killed.
      const hop = `hop() { sleep 0.005; ( hop & ) ; exit 0; }; ( setsid sh -c 'sleep 60' & ) ; ( hop & ) ; sleep 0.5`;
      const outcome = await shell(confinement, hop);
      expect(outcome.exitCode).toBe(0);
      await confinement.release();
      await new Promise((done) => setTimeout(done, 300));
      expect(await rangeProcesses()).toEqual([]);
    } finally {
      await rm(marker, { force: true });
    }
  });

  it('counts /dev/shm against the job\'s memory and stops it there', async (context) => {
    if (skip()) return context.skip(skip());
    const confinement = await (await backend(kind)).confine();
    try {
      // Files under the per-file size limit, more of them together than the job's memory.
      const outcome = await shell(confinement, 'for n in 1 2 3 4 5 6 7 8; do head -c 50000000 /dev/zero > /dev/shm/fill-$n; done; sleep 5', 15_000);
      expect(outcome.killedFor).toBe('memory');
      await confinement.release();
      expect(await rangeProcesses()).toEqual([]);
    } finally {
      await confinement.release();
    }
  });

  it('stops a job that writes more than its disk budget', async (context) => {
    if (skip()) return context.skip(skip());
    const confinement = await (await backend(kind)).confine();
    try {
      const outcome = await shell(confinement, 'for n in 1 2 3 4 5 6 7 8 9 10; do head -c 16000000 /dev/zero > part-$n || exit 3; sleep 0.3; done; sleep 5', 20_000);
      expect(outcome.killedFor).toBe('disk');
    } finally {
      await confinement.release();
    }
  });

  it('holds a fork bomb at the process limit', async (context) => {
    if (skip()) return context.skip(skip());
    const confinement = await (await backend(kind)).confine();
    try {
      // More processes than the limit (128): the kernel refuses the forks past it.
      const outcome = await shell(confinement, 'i=0; while [ $i -lt 400 ]; do sleep 3 & i=$((i+1)); done; echo all-started', 15_000);
      expect(outcome.stderr).toContain('Cannot fork');
      expect(outcome.stdout).not.toContain('all-started');
    } finally {
      await confinement.release();
    }
    expect(await rangeProcesses()).toEqual([]);
  });
});

describe('namespaces backend', () => {
  it('shows the job its own processes only and a /tmp of its own', async (context) => {
    if (problems.namespaces) return context.skip(problems.namespaces);
    await writeFile(join(tmpdir(), `outpost-isolation-visible-${process.pid}`), 'agent side');
    const confinement = await (await backend('namespaces')).confine();
    try {
      const visible = `outpost-isolation-visible-${process.pid}`;
      const outcome = await shell(confinement, `ls /proc | grep -c '^[0-9]'; ls /tmp | grep -c ${visible}; test -e /etc/shadow && echo SHADOW || echo no-shadow`);
      const [processes, temp, shadow] = outcome.stdout.trim().split('\n');
      expect(Number(processes)).toBeLessThan(10);
      expect(Number(temp)).toBe(0);
      expect(shadow).toBe('no-shadow');
    } finally {
      await confinement.release();
      await rm(join(tmpdir(), `outpost-isolation-visible-${process.pid}`), { force: true });
    }
  });
});

describe('users backend', () => {
  it('removes what a job left in the shared temporary directories', async (context) => {
    if (problems.users) return context.skip(problems.users);
    const confinement = await (await backend('users')).confine();
    const left = `/dev/shm/outpost-left-${process.pid}`;
    await shell(confinement, `echo secret > ${left}; chmod 666 ${left}`);
    expect(existsSync(left)).toBe(true);
    await confinement.release();
    expect(existsSync(left)).toBe(false);
  });
});

describe('user ids', () => {
  it('never hands out an id one of whose processes still lives', async (context) => {
    if (process.getuid?.() !== 0) return context.skip('needs root to start a process as another user');
    const base = 64200;
    const lingering = spawn('/usr/bin/setpriv', [`--reuid=${base}`, `--regid=${base}`, '--clear-groups', '--', 'sleep', '30'], { stdio: 'ignore' });
    try {
      await new Promise((done) => setTimeout(done, 200));
      const pool = new UidPool(base, 3);
      const first = await pool.acquire();
      const second = await pool.acquire();
      expect([first.uid, second.uid]).toEqual([base + 1, base + 2]);
      await pool.release(first);
      expect((await pool.acquire()).uid).toBe(base + 1);
    } finally {
      await killUser(base);
      lingering.kill('SIGKILL');
    }
  });
});

describe('an isolation the operator named', () => {
  it('stops the agent at start with a configuration error naming it, when it cannot work here', async (context) => {
    if (process.getuid?.() !== 0) return context.skip('needs root: a job user that cannot reach the sandbox directory');
    // A sandbox directory inside one only root may enter: no job's user can reach it, so no backend's trial run works.
    const closed = await mkdtemp(join(tmpdir(), 'outpost-isolation-closed-'));
    try {
      const sandbox = { ...defaultSandboxConfig(), directory: join(closed, 'sandboxes'), isolation: 'namespaces' as const, uidBase: UID_BASE, uidCount: UID_COUNT };
      const started = startTestAgent({ apiKey: AGENT_KEY, apiUrl: 'http://127.0.0.1:9', sandbox });
      await expect(started).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('SANDBOX_ISOLATION=namespaces cannot be used') });
    } finally {
      await rm(closed, { recursive: true, force: true });
    }
  });
});

describe('no isolation', () => {
  it('refuses script jobs unless the operator opted in, with a code of its own', async () => {
    const refused = (await chooseIsolation({ mode: 'none', allowUnsafe: false, uidBase: UID_BASE, uidCount: UID_COUNT, limits: LIMITS, directory: root })).backend;
    await expect(refused.confine()).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    const allowed = (await chooseIsolation({ mode: 'none', allowUnsafe: true, uidBase: UID_BASE, uidCount: UID_COUNT, limits: LIMITS, directory: root })).backend;
    const confinement = await allowed.confine();
    const outcome = await shell(confinement, 'echo ran');
    expect(outcome.stdout.trim()).toBe('ran');
    await confinement.release();
  });
});
