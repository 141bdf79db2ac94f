/**
 * Warm sandboxes against real runtimes, under each isolation backend this
 * machine can run: a job handed to a process started ahead of it on its seat
 * ends as a cold run would, never finds what the job before it left, and the
 * hostile fixtures are stopped just the same. Each warm sandbox has a
 * confinement (and user id) of its own, which its job adopts. Each test starts
 * with one job on seat 0, as an agent's seat gets its first warm sandbox.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { IsolationKind } from '../../src/agent/isolation/isolation.js';
import type { WarmSandbox } from '../../src/agent/sandbox/warm-pool.js';
import type { Job, Result } from '../../src/protocol/agent-api.js';
import { runtimePaths } from '../../src/runtimes/installed.js';
import { fixtureScript, isolationProblem, processesOfUids, startTestHarness, type TestHarness, type TestHarnessOptions } from '../support/script-harness.js';

const SECRET = 'tok-7c1e-warm-secret';
const OPERATOR_SECRET = 'db-pass-warm-4410';
/** Each kind has a block of 100 user ids: warm harnesses take the first 20, the cold one (to compare with) 20 from the middle. */
/**
 * Under the backend the images run: what differs between backends (identity,
 * what a job sees, how it ends) is tested per backend in multistep-runner,
 * isolation-backends and the hostile scripts; these runners are the same code
 * on either, and running them twice would double the suite's slowest files.
 */
const KINDS: { kind: IsolationKind; uidBase: number }[] = [
  { kind: 'namespaces', uidBase: 63200 },
];
const UID_COUNT = 20;
const COLD_UID_OFFSET = 50;
const UID_BLOCK = 100;
const MEMORY_LIMIT = 1024 * 1024 * 1024;
/** A job takes seconds; a few of them in one test, on a machine busy with other suites, take more than vitest's default. */
const TEST_TIMEOUT_MS = 180_000;
const SEAT = 0;

let server: Server;
let targetUrl: string;
let work: string;

const probeRoot = await mkdtemp(join(tmpdir(), 'outpost-warm-probe-'));
// The trial's user must get through to its directory, as to any sandbox root.
await chmod(probeRoot, 0o711);
const problems = new Map<IsolationKind, string | undefined>();
for (const { kind } of KINDS) problems.set(kind, await isolationProblem(kind, join(probeRoot, kind)));
await rm(probeRoot, { recursive: true, force: true });

beforeAll(async () => {
  server = createServer((_request, response) => response.end('ok\n'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  targetUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  work = await mkdtemp(join(tmpdir(), 'outpost-warm-test-'));
  await chmod(work, 0o711);
});

afterAll(async () => {
  server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

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

const SAY_PID = `import { test } from '@playwright/test';\ntest('pid', async () => { console.log('pid ' + process.pid); });\n`;

/**
 * The warm sandbox's Node.js process, once it runs Node.js: while prlimit,
 * setpriv (and bwrap) exec their way there, it may read as something else.
 */
async function nodeProcess(sandbox: WarmSandbox, runtimeId = '2026.04'): Promise<number> {
  const node = runtimePaths(runtimeId).node;
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    for (const { pid } of await sandbox.process.processes()) {
      if ((await readlink(`/proc/${pid}/exe`).catch(() => '')) === node) return pid;
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`the warm sandbox never ran ${node}`);
}

/** A result without what differs between any two runs: directories and durations. */
const comparable = (result: Result) => JSON.parse(JSON.stringify(shape(result)).replaceAll(/job-[A-Za-z0-9]{6}/g, 'job-X')) as unknown;
const shape = (result: Result) => ({
  error: result.error,
  hasFailures: result.hasFailures,
  hasErrors: result.hasErrors,
  steps: (result.details.steps as { name: string; status: string }[]).map(({ name, status }) => ({ name, status })),
  logs: result.logs.map((line) => [line.level, line.message]),
  artifacts: result.artifacts.map(({ name, contentType, uploaded }) => ({ name, contentType, uploaded })),
});
const messages = (result: Result) => result.logs.map((line) => line.message);

describe.each(KINDS)('warm sandboxes under $kind isolation', ({ kind, uidBase }) => {
  const problem = problems.get(kind);
  const name = problem ? `(cannot run here: ${problem})` : 'per seat';

  describe.skipIf(problem !== undefined)(name, { timeout: TEST_TIMEOUT_MS }, () => {
    let sandboxRoot: string;
    /** Warm sandboxes on: started afresh for each test. */
    let t: TestHarness | undefined;
    /** No warm sandboxes: what a warm run is compared with. Same sandbox root, so paths in messages read alike. */
    let cold: TestHarness;

    const harnessOptions = (overrides: Partial<TestHarnessOptions> = {}): TestHarnessOptions => ({
      isolation: kind,
      sandboxRoot,
      uidBase,
      uidCount: UID_COUNT,
      memoryLimitBytes: MEMORY_LIMIT,
      serviceSecrets: { SERVICE_SECRET_DB_PASSWORD: OPERATOR_SECRET },
      warm: true,
      ...overrides,
    });

    /** The test's warm harness, in place of the one the test started with. */
    async function startWarm(overrides: Partial<TestHarnessOptions> = {}): Promise<TestHarness> {
      await t?.stop();
      t = await startTestHarness(harnessOptions(overrides));
      return t;
    }

    const warm = (): TestHarness => t!;

    /** Runs a first job so the seat has a warm sandbox, and waits until that sandbox is there. */
    async function primeSeat(runtimeId = '2026.04'): Promise<WarmSandbox> {
      const result = await warm().run(job(SAY_PID, { runtimeId }));
      expect(result.error).toBeNull();
      const idle = await warm().multiStep.idleSandbox(SEAT);
      expect(idle).toBeDefined();
      return idle!;
    }

    /** Runs a job that must have been handed the seat's warm sandbox. */
    async function runWarm(script: Job): Promise<Result> {
      const before = warm().multiStep.warmStats.warm;
      const result = await warm().run(script);
      expect(warm().multiStep.warmStats.warm).toBe(before + 1);
      return result;
    }

    /** Every process of the range now is the next warm sandbox's, under its own user id: nothing of the job outlived it. */
    async function expectOnlyTheNextWarmSandbox(): Promise<void> {
      const next = await warm().multiStep.idleSandbox(SEAT);
      expect(next).toBeDefined();
      const owner = next!.confinement.owner;
      expect(owner).not.toBeNull();
      const processes = await processesOfUids(uidBase, UID_BLOCK);
      expect(processes.filter((info) => info.uid !== owner!.uid)).toEqual([]);
    }

    beforeAll(async () => {
      sandboxRoot = join(work, kind);
      cold = await startTestHarness(harnessOptions({ warm: false, uidBase: uidBase + COLD_UID_OFFSET }));
    });

    afterAll(async () => {
      await cold?.stop();
      expect(await processesOfUids(uidBase, UID_BLOCK)).toEqual([]);
      // Every job directory and every warm sandbox's went with it.
      expect(await readdir(sandboxRoot)).toEqual([]);
    });

    beforeEach(async () => {
      await startWarm();
    });

    afterEach(async () => {
      await t?.stop();
      t = undefined;
      expect(await processesOfUids(uidBase, UID_BLOCK)).toEqual([]);
    });

    it('end a passing and a failing script as a cold run does', async () => {
      await primeSeat();
      for (const fixture of ['passing.spec.js', 'failing-assertion.spec.js']) {
        const script = await fixtureScript(fixture);
        const coldResult = await cold.run(job(script));
        const warmResult = await runWarm(job(script));
        expect(comparable(warmResult)).toEqual(comparable(coldResult));
        // Measured from the hand-over: the sandbox was already loaded, however short its job.
        expect(warmResult.details.peakMemoryBytes).toBeGreaterThan(50 * 1024 * 1024);
        expect(JSON.stringify(warmResult)).not.toContain(SECRET);
      }
    });

    it('start with nothing of any check in their environment', async () => {
      const idle = await primeSeat();
      const pid = await nodeProcess(idle);
      const environ = await readFile(`/proc/${pid}/environ`, 'latin1');
      const entries = new Map(environ.split('\0').filter(Boolean).map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
      // bubblewrap says where it started the process: the sandbox's own directory, nothing of a check's.
      if (entries.has('PWD')) expect(entries.get('PWD')).toBe(idle.root);
      entries.delete('PWD');
      expect([...entries.keys()].sort()).toEqual(['FORCE_COLOR', 'HOME', 'PATH', 'TMPDIR']);
      expect(entries.get('HOME')).toBe(idle.root);
      expect(environ).not.toContain(SECRET);
      expect(environ).not.toContain(OPERATOR_SECRET);
    });

    it('are never reused: a job does not find what the one before it left, nor its process or user id', async () => {
      await primeSeat();
      // Process ids repeat from one PID namespace to the next: a process is its id and its start time.
      const identity = `const started = (pid) => execFileSync('cat', ['/proc/' + pid + '/stat'], { encoding: 'utf8' }).split(') ')[1].split(' ')[19];
  console.log('process ' + process.pid + '@' + started(process.pid) + ' parent ' + process.ppid + '@' + started(process.ppid) + ' uid ' + process.getuid());`;
      const leave = `import { test } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
test('leave', async () => {
  globalThis.__outpostMarker = 'left';
  process.env.OUTPOST_MARKER = 'left';
  writeFileSync(process.env.HOME + '/marker', 'left');
  ${identity}
});
`;
      const look = `import { test } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
test('look', async () => {
  console.log('global ' + String(globalThis.__outpostMarker) + ' env ' + String(process.env.OUTPOST_MARKER) + ' file ' + existsSync(process.env.HOME + '/marker'));
  ${identity}
});
`;
      const first = await runWarm(job(leave));
      expect(first.error).toBeNull();
      const second = await runWarm(job(look));
      expect(second.error).toBeNull();
      expect(messages(second)).toContain('global undefined env undefined file false');
      const [, firstProcess, , firstParent, , firstUid] = messages(first).find((line) => line.startsWith('process '))!.split(' ');
      const [, secondProcess, , secondParent, , secondUid] = messages(second).find((line) => line.startsWith('process '))!.split(' ');
      expect(secondProcess).not.toBe(firstProcess);
      expect(secondParent).not.toBe(firstParent);
      expect(secondUid).not.toBe(firstUid);
      for (const uid of [firstUid, secondUid].map(Number)) {
        expect(uid).toBeGreaterThanOrEqual(uidBase);
        expect(uid).toBeLessThan(uidBase + UID_COUNT);
      }
    });

    it('recovers from a warm sandbox killed while idle', async () => {
      const idle = await primeSeat();
      process.kill(-idle.process.child.pid!, 'SIGKILL');
      await idle.process.exited;
      // The job right after finds it dead and runs cold.
      const result = await warm().run(job(await fixtureScript('passing.spec.js')));
      expect(result.error).toBeNull();
      // And the seat is warm again for the next one.
      const next = await runWarm(job(await fixtureScript('passing.spec.js')));
      expect(next.error).toBeNull();
    });

    it('replaces a warm sandbox that died while idle without waiting for a job', async () => {
      const idle = await primeSeat();
      process.kill(-idle.process.child.pid!, 'SIGKILL');
      const deadline = Date.now() + 15_000;
      let replacement = await warm().multiStep.idleSandbox(SEAT);
      while ((!replacement || replacement === idle) && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 100));
        replacement = await warm().multiStep.idleSandbox(SEAT);
      }
      expect(replacement).toBeDefined();
      expect(replacement).not.toBe(idle);
      expect((await runWarm(job(await fixtureScript('passing.spec.js')))).error).toBeNull();
    });

    it('run a job of another runtime cold, and warm that runtime next', async () => {
      await primeSeat('2026.04');
      const script = `import { test } from '@playwright/test';\ntest('v', async () => { console.log('node ' + process.version); });\n`;
      const coldBefore = warm().multiStep.warmStats.cold;
      const first = await warm().run(job(script, { runtimeId: '2025.04' }));
      expect(warm().multiStep.warmStats.cold).toBe(coldBefore + 1);
      expect(messages(first)).toContain('node v22.11.0');
      const next = await runWarm(job(script, { runtimeId: '2025.04' }));
      expect(next.error).toBeNull();
      expect(messages(next)).toContain('node v22.11.0');
    });

    it('run a job that sets a variable read at start-up cold', async () => {
      await primeSeat();
      const before = warm().multiStep.warmStats.cold;
      const script = `import { test } from '@playwright/test';\ntest('o', async () => { console.log('NODE_OPTIONS=' + process.env.NODE_OPTIONS); });\n`;
      const result = await warm().run(job(script, {}, [{ key: 'NODE_OPTIONS', value: '--no-warnings', secret: false }]));
      expect(result.error).toBeNull();
      expect(warm().multiStep.warmStats.cold).toBe(before + 1);
      expect(messages(result)).toContain('NODE_OPTIONS=--no-warnings');
    });

    it('keep one warm sandbox per seat, each in a confinement of its own', async () => {
      await startWarm({ concurrency: 2 });
      // Both at once: one job on each seat.
      const results = await Promise.all([warm().run(job(SAY_PID)), warm().run(job(SAY_PID))]);
      for (const result of results) expect(result.error).toBeNull();
      const seats = await Promise.all([warm().multiStep.idleSandbox(0), warm().multiStep.idleSandbox(1)]);
      expect(seats.every((sandbox) => sandbox !== undefined)).toBe(true);
      expect(warm().harness.idleSandboxes).toBe(2);
      expect(seats[0]!.root).not.toBe(seats[1]!.root);
      expect(seats[0]!.confinement).not.toBe(seats[1]!.confinement);
      expect(seats[0]!.confinement.owner?.uid).not.toBe(seats[1]!.confinement.owner?.uid);
      // The next job on either seat is handed that seat's sandbox.
      const before = warm().multiStep.warmStats.warm;
      await Promise.all([warm().run(job(SAY_PID)), warm().run(job(SAY_PID))]);
      expect(warm().multiStep.warmStats.warm).toBe(before + 2);
    });

    // The directory a warm sandbox waits in is its own and goes with its job.
    it('removes the job directory of a warm run', async () => {
      const idle = await primeSeat();
      expect(await readlink(`/proc/${await nodeProcess(idle)}/cwd`)).toBe(idle.root);
      await runWarm(job(SAY_PID));
      await expect(readlink(idle.root)).rejects.toThrow();
      await expect(readFile(join(idle.root, 'package.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    });

    describe('against hostile scripts', () => {
      it('stops an infinite loop at the timeout', async () => {
        await primeSeat();
        const result = await runWarm(job(await fixtureScript('infinite-loop.spec.js'), { timeoutSeconds: 3 }));
        expect(result.error?.code).toBe('SCRIPT_TIMEOUT');
        await expectOnlyTheNextWarmSandbox();
      });

      it('stops a memory bomb at the memory limit', async () => {
        await startWarm({ memoryLimitBytes: 768 * 1024 * 1024 });
        await primeSeat();
        const result = await runWarm(job(await fixtureScript('memory-bomb.spec.js')));
        expect(result.error?.code).toBe('SCRIPT_MEMORY_LIMIT');
        await expectOnlyTheNextWarmSandbox();
      });

      it('kills every process a script started, even those that left its process group', async () => {
        await primeSeat();
        const result = await runWarm(job(await fixtureScript('fork-bomb.spec.js')));
        expect(result.error).toBeNull();
        await expectOnlyTheNextWarmSandbox();
      });

      it('turns process.exit into a failed check', async () => {
        await primeSeat();
        const result = await runWarm(job(await fixtureScript('process-exit.spec.js')));
        expect(result.hasFailures).toBe(true);
        expect(result.error?.code).toMatch(/^SCRIPT_/);
      });

      it('gives the script only its variables and no way to the agent\'s key', async () => {
        await primeSeat();
        const agentDirectory = await mkdtemp(join(tmpdir(), 'outpost-warm-agent-files-'));
        const agentFile = join(agentDirectory, 'key');
        await writeFile(agentFile, 'pl_agent_key');
        await chmod(agentFile, 0o600);
        const variables = [
          { key: 'AGENT_PID', value: String(process.pid), secret: false },
          { key: 'AGENT_FILE', value: agentFile, secret: false },
          { key: 'PROBE_MARKER', value: 'pl_agent_key', secret: false },
        ];
        try {
          const result = await runWarm(job(await fixtureScript('prying.spec.js'), {}, variables));
          expect(result.error).toBeNull();
          const lines = messages(result);
          const env = lines.find((line) => line.startsWith('env: '))!.slice(5).split(',');
          expect(env).toEqual(expect.arrayContaining(['API_TOKEN', 'SERVICE', 'SERVICE_SECRET_DB_PASSWORD', 'TARGET_URL']));
          expect(env).not.toContain('CI');
          for (const route of ['parent environ (fs)', 'parent environ (cat)', 'agent file (fs)', 'agent file (cat)']) {
            expect(lines.find((line) => line.startsWith(`${route}:`))).toMatch(/denied/);
          }
        } finally {
          await rm(agentDirectory, { recursive: true, force: true });
        }
      });
    });
  });
});
