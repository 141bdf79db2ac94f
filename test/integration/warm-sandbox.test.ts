/**
 * Warm sandboxes against real runtimes: a job handed to a process started
 * ahead of it ends as a cold run would, never finds what the job before it
 * left, and the hostile fixtures are stopped just the same. Each test starts
 * with one job on the slot, as an agent's slot gets its first warm sandbox.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, readlink, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { prepareSandboxRoot } from '../../src/agent/multistep/job-directory.js';
import { runMultiStep, type InstalledRuntime, type MultiStepContext } from '../../src/agent/multistep/multistep-runner.js';
import { createWarmPool } from '../../src/agent/multistep/warm-sandbox.js';
import { listProcesses } from '../../src/agent/sandbox/process-tree.js';
import { SandboxIdentities, type SandboxUser } from '../../src/agent/sandbox/sandbox-user.js';
import type { WarmPool } from '../../src/agent/sandbox/warm-pool.js';
import type { Job, Result } from '../../src/protocol/agent-api.js';
import { findRuntime } from '../../src/runtimes/catalog.js';
import { runtimePaths } from '../../src/runtimes/installed.js';

const SECRET = 'tok-7c1e-warm-secret';
const OPERATOR_SECRET = 'db-pass-warm-4410';
const UID_BASE = 61500;
/** Cold runs compared with warm ones get a user of their own: a user's processes are its one job's. */
const COLD_UID = 61501;
const USER: SandboxUser = { uid: UID_BASE, gid: UID_BASE };
const MEMORY_LIMIT = 1024 * 1024 * 1024;
let server: Server;
let targetUrl: string;
let sandboxRoot: string;
let pool: WarmPool<InstalledRuntime>;
let identities: SandboxIdentities;
const coldIdentities = new SandboxIdentities({ uidBase: COLD_UID, slots: 1, isolate: true });

beforeAll(async () => {
  server = createServer((_request, response) => response.end('ok\n'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  targetUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  sandboxRoot = await mkdtemp(join(tmpdir(), 'outpost-warm-test-'));
  await prepareSandboxRoot(sandboxRoot);
});

afterAll(async () => {
  server.close();
  await rm(sandboxRoot, { recursive: true, force: true });
});

beforeEach(async () => {
  identities = new SandboxIdentities({ uidBase: UID_BASE, slots: 1, isolate: true });
  pool = createWarmPool({ sandboxRoot, memoryLimitBytes: MEMORY_LIMIT, agentEnv: {}, chromiumPath: () => undefined, maxAgeMs: 60_000 });
});

afterEach(async () => {
  await pool.stop();
  expect(await listProcesses({ uid: UID_BASE })).toEqual([]);
  expect(await listProcesses({ uid: COLD_UID })).toEqual([]);
});

function fixture(name: string): Promise<string> {
  return readFile(join(import.meta.dirname, '../fixtures/scripts', name), 'utf8');
}

function job(script: string, overrides: Partial<Job> = {}, variables: Job['environmentVariables'] = []): Job {
  return {
    jobId: randomUUID(),
    checkSessionId: randomUUID(),
    checkId: randomUUID(),
    checkType: 'MULTI_STEP',
    name: 'warm sandbox test',
    runLocation: 'test-location',
    runSource: 'TRIGGER_API',
    attempt: 1,
    leaseExpiresAt: new Date(Date.now() + 300_000).toISOString(),
    timeoutSeconds: 60,
    runtimeId: '2026.04',
    environmentVariables: [
      { key: 'TARGET_URL', value: targetUrl, secret: false },
      { key: 'API_TOKEN', value: SECRET, secret: true },
      ...variables,
    ],
    settings: { script, dependencies: [] },
    ...overrides,
  };
}

function context(options: { warm: boolean; runtimeId?: string; memoryLimitBytes?: number } = { warm: true }): MultiStepContext {
  const runtimeId = options.runtimeId ?? '2026.04';
  const paths = runtimePaths(runtimeId);
  const replace = (text: string) => text.replaceAll(SECRET, '*****').replaceAll(OPERATOR_SECRET, '*****');
  return {
    runtime: { id: runtimeId, nodeJsVersion: findRuntime(runtimeId)!.nodeJsVersion, directory: paths.dir, node: paths.node, playwrightCli: paths.playwrightCli },
    identities: options.warm ? identities : coldIdentities,
    sandboxRoot,
    memoryLimitBytes: options.memoryLimitBytes ?? MEMORY_LIMIT,
    serviceSecrets: { SERVICE_SECRET_DB_PASSWORD: OPERATOR_SECRET },
    agentEnv: {},
    chromiumPath: undefined,
    scrub: { text: replace, value: <T>(value: T) => JSON.parse(replace(JSON.stringify(value))) as T },
    upload: async (_job, name, contentType, path) => ({ name, contentType, size: (await readFile(path)).length, uploaded: true, error: null }),
    signal: new AbortController().signal,
    ...(options.warm ? { warm: pool } : {}),
  };
}

const SAY_PID = `import { test } from '@playwright/test';\ntest('pid', async () => { console.log('pid ' + process.pid); });\n`;

/** Runs a first job so the slot has a warm sandbox, and waits until that sandbox is there. */
async function primeSlot(runtimeId = '2026.04'): Promise<void> {
  const result = await runMultiStep(job(SAY_PID, { runtimeId }), randomUUID(), context({ warm: true, runtimeId }));
  expect(result.error).toBeNull();
  expect(await pool.idleSandbox(USER)).toBeDefined();
}

/** Runs a job that must have been handed the slot's warm sandbox. */
async function runWarm(script: Job, options: Parameters<typeof context>[0] = { warm: true }): Promise<Result> {
  const before = pool.stats.warm;
  const result = await runMultiStep(script, randomUUID(), context(options));
  expect(pool.stats.warm).toBe(before + 1);
  return result;
}

/** Every process of the slot's user now is the next warm sandbox's: nothing of the job outlived it. */
async function expectOnlyTheNextWarmSandbox(): Promise<void> {
  const next = await pool.idleSandbox(USER);
  const processes = await listProcesses({ uid: UID_BASE });
  expect(processes.filter((info) => info.pgid !== next?.process.child.pid)).toEqual([]);
}

/** A result without what differs between any two runs: directories and durations. */
const comparable = (result: Result) => JSON.parse(JSON.stringify(shape(result)).replaceAll(/job-[A-Za-z0-9]{6}/g, 'job-X'));
const shape = (result: Result) => ({
  error: result.error,
  hasFailures: result.hasFailures,
  hasErrors: result.hasErrors,
  steps: (result.details.steps as { name: string; status: string }[]).map(({ name, status }) => ({ name, status })),
  logs: result.logs.map((line) => [line.level, line.message]),
  artifacts: result.artifacts.map(({ name, contentType, uploaded }) => ({ name, contentType, uploaded })),
});

describe('warm sandboxes', () => {
  it('end a passing and a failing script as a cold run does', async () => {
    await primeSlot();
    for (const name of ['passing.spec.js', 'failing-assertion.spec.js']) {
      const script = await fixture(name);
      const cold = await runMultiStep(job(script), randomUUID(), context({ warm: false }));
      const warm = await runWarm(job(script));
      expect(comparable(warm)).toEqual(comparable(cold));
      // Measured from the hand-over: the sandbox was already loaded, however short its job.
      expect(warm.details.peakMemoryBytes).toBeGreaterThan(50 * 1024 * 1024);
      expect(JSON.stringify(warm)).not.toContain(SECRET);
    }
  });

  it('start with nothing of any check in their environment', async () => {
    await primeSlot();
    const idle = (await pool.idleSandbox(USER))!;
    // Read once it runs Node.js: while prlimit and setpriv exec their way there, it may read empty.
    const node = runtimePaths('2026.04').node;
    const deadline = Date.now() + 10_000;
    while ((await readlink(`/proc/${idle.process.child.pid}/exe`).catch(() => '')) !== node && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 50));
    }
    const environ = await readFile(`/proc/${idle.process.child.pid}/environ`, 'latin1');
    const keys = environ.split('\0').filter(Boolean).map((entry) => entry.split('=')[0]).sort();
    expect(keys).toEqual(['FORCE_COLOR', 'HOME', 'PATH', 'TMPDIR']);
    expect(environ).not.toContain(SECRET);
    expect(environ).not.toContain(OPERATOR_SECRET);
  });

  it('are never reused: a job does not find what the one before it left', async () => {
    await primeSlot();
    const leave = `import { test } from '@playwright/test';
import { writeFileSync } from 'node:fs';
test('leave', async () => {
  globalThis.__outpostMarker = 'left';
  process.env.OUTPOST_MARKER = 'left';
  writeFileSync(process.env.HOME + '/marker', 'left');
  console.log('pid ' + process.pid + ' ppid ' + process.ppid);
});
`;
    const look = `import { test } from '@playwright/test';
import { existsSync } from 'node:fs';
test('look', async () => {
  console.log('global ' + String(globalThis.__outpostMarker) + ' env ' + String(process.env.OUTPOST_MARKER) + ' file ' + existsSync(process.env.HOME + '/marker'));
  console.log('pid ' + process.pid + ' ppid ' + process.ppid);
});
`;
    const first = await runWarm(job(leave));
    expect(first.error).toBeNull();
    const second = await runWarm(job(look));
    expect(second.error).toBeNull();
    const messages = second.logs.map((line) => line.message);
    expect(messages).toContain('global undefined env undefined file false');
    const firstPids = first.logs.map((line) => line.message).find((line) => line.startsWith('pid '))!.split(' ');
    const secondPids = messages.find((line) => line.startsWith('pid '))!.split(' ');
    expect(secondPids[1]).not.toBe(firstPids[1]);
    expect(secondPids[3]).not.toBe(firstPids[3]);
  });

  it('recovers from a warm sandbox killed while idle', async () => {
    await primeSlot();
    const idle = (await pool.idleSandbox(USER))!;
    process.kill(-idle.process.child.pid!, 'SIGKILL');
    await idle.process.exited;
    // The job right after finds it dead and runs cold.
    const result = await runMultiStep(job(await fixture('passing.spec.js')), randomUUID(), context());
    expect(result.error).toBeNull();
    // And the slot is warm again for the next one.
    const next = await runWarm(job(await fixture('passing.spec.js')));
    expect(next.error).toBeNull();
  });

  it('replaces a warm sandbox that died while idle without waiting for a job', async () => {
    await primeSlot();
    const idle = (await pool.idleSandbox(USER))!;
    process.kill(-idle.process.child.pid!, 'SIGKILL');
    const deadline = Date.now() + 15_000;
    let replacement = await pool.idleSandbox(USER);
    while ((!replacement || replacement === idle) && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 100));
      replacement = await pool.idleSandbox(USER);
    }
    expect(replacement).toBeDefined();
    expect(replacement).not.toBe(idle);
    expect((await runWarm(job(await fixture('passing.spec.js')))).error).toBeNull();
  });

  it('run a job of another runtime cold, and warm that runtime next', async () => {
    await primeSlot('2026.04');
    const script = `import { test } from '@playwright/test';\ntest('v', async () => { console.log('node ' + process.version); });\n`;
    const other = { warm: true, runtimeId: '2025.04' };
    const cold = await runMultiStep(job(script, { runtimeId: '2025.04' }), randomUUID(), context(other));
    expect(cold.logs.map((line) => line.message)).toContain('node v22.11.0');
    const warm = await runWarm(job(script, { runtimeId: '2025.04' }), other);
    expect(warm.error).toBeNull();
    expect(warm.logs.map((line) => line.message)).toContain('node v22.11.0');
  });

  it('run a job that sets a variable read at start-up cold', async () => {
    await primeSlot();
    const before = pool.stats.cold;
    const script = `import { test } from '@playwright/test';\ntest('o', async () => { console.log('NODE_OPTIONS=' + process.env.NODE_OPTIONS); });\n`;
    const result = await runMultiStep(job(script, {}, [{ key: 'NODE_OPTIONS', value: '--no-warnings', secret: false }]), randomUUID(), context());
    expect(result.error).toBeNull();
    expect(pool.stats.cold).toBe(before + 1);
    expect(result.logs.map((line) => line.message)).toContain('NODE_OPTIONS=--no-warnings');
  });

  describe('against hostile scripts', () => {
    it('stops an infinite loop at the timeout', async () => {
      await primeSlot();
      const result = await runWarm(job(await fixture('infinite-loop.spec.js'), { timeoutSeconds: 3 }));
      expect(result.error?.code).toBe('SCRIPT_TIMEOUT');
      await expectOnlyTheNextWarmSandbox();
    });

    it('stops a memory bomb at the memory limit', async () => {
      await primeSlot();
      const result = await runWarm(job(await fixture('memory-bomb.spec.js')), { warm: true, memoryLimitBytes: 768 * 1024 * 1024 });
      expect(result.error?.code).toBe('SCRIPT_MEMORY_LIMIT');
      await expectOnlyTheNextWarmSandbox();
    });

    it('kills every process a script started, even those that left its process group', async () => {
      await primeSlot();
      const result = await runWarm(job(await fixture('fork-bomb.spec.js')));
      expect(result.error).toBeNull();
      await expectOnlyTheNextWarmSandbox();
    });

    it('turns process.exit into a failed check', async () => {
      await primeSlot();
      const result = await runWarm(job(await fixture('process-exit.spec.js')));
      expect(result.hasFailures).toBe(true);
      expect(result.error?.code).toMatch(/^SCRIPT_/);
    });

    it('gives the script only its variables and no way to the agent\'s key', async () => {
      await primeSlot();
      const agentDirectory = await mkdtemp(join(tmpdir(), 'outpost-warm-agent-files-'));
      const agentFile = join(agentDirectory, 'key');
      await import('node:fs/promises').then(({ writeFile, chmod }) => writeFile(agentFile, 'pl_agent_key').then(() => chmod(agentFile, 0o600)));
      const variables = [
        { key: 'AGENT_PID', value: String(process.pid), secret: false },
        { key: 'AGENT_FILE', value: agentFile, secret: false },
        { key: 'PROBE_MARKER', value: 'pl_agent_key', secret: false },
      ];
      const result = await runWarm(job(await fixture('prying.spec.js'), {}, variables));
      await rm(agentDirectory, { recursive: true, force: true });
      expect(result.error).toBeNull();
      const lines = result.logs.map((line) => line.message);
      const env = lines.find((line) => line.startsWith('env: '))!.slice(5).split(',');
      expect(env).toEqual(expect.arrayContaining(['API_TOKEN', 'SERVICE', 'SERVICE_SECRET_DB_PASSWORD', 'TARGET_URL']));
      expect(env).not.toContain('CI');
      for (const route of ['parent environ (fs)', 'parent environ (cat)', 'agent file (fs)', 'agent file (cat)']) {
        expect(lines.find((line) => line.startsWith(`${route}:`))).toMatch(/denied/);
      }
    });
  });
});

// The directory a warm sandbox waits in is its own and goes with its job.
it('removes the job directory of a warm run', async () => {
  await primeSlot();
  const idle = (await pool.idleSandbox(USER))!;
  const cwd = await readlink(`/proc/${idle.process.child.pid}/cwd`);
  expect(cwd).toBe(idle.root);
  await runWarm(job(SAY_PID));
  await expect(readlink(idle.root)).rejects.toThrow();
  await expect(readFile(join(idle.root, 'package.json'))).rejects.toMatchObject({ code: 'ENOENT' });
});
