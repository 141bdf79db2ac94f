/**
 * The multi-step runner against real runtimes, a real HTTP target on
 * loopback and one fixture script per way a script can go wrong, through the
 * script harness, under each isolation backend this machine can run: each
 * job in a confinement of its own, with a fresh user id from the range.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IsolationKind } from '../../src/agent/isolation/isolation.js';
import type { Job } from '../../src/protocol/agent-api.js';
import { SCRUB_MARKER } from '../../src/scrub/marker.js';
import { fixtureScript, isolationProblem, processesOfUids, startTestHarness, type TestHarness } from '../support/script-harness.js';

const SECRET = 'tok-3f9a-secret-value';
const OPERATOR_SECRET = 'db-pass-7781';
/** Each kind has a block of 100 user ids of its own: the main harness takes the first 20, the memory-limit one 20 more. */
const KINDS: { kind: IsolationKind; uidBase: number }[] = [
  { kind: 'namespaces', uidBase: 63000 },
  { kind: 'users', uidBase: 63100 },
];
const UID_COUNT = 20;
const MEMORY_UID_OFFSET = 50;
const UID_BLOCK = 100;
/** A job takes seconds; a few of them in one test, on a machine busy with other suites, take more than vitest's default. */
const TEST_TIMEOUT_MS = 120_000;

let server: Server;
let targetUrl: string;
let work: string;
let agentFile: string;

// Which kinds this machine can run is known before the tests are collected.
const probeRoot = await mkdtemp(join(tmpdir(), 'outpost-runner-probe-'));
// The trial's user must get through to its directory, as to any sandbox root.
await chmod(probeRoot, 0o711);
const problems = new Map<IsolationKind, string | undefined>();
for (const { kind } of KINDS) problems.set(kind, await isolationProblem(kind, join(probeRoot, kind)));
await rm(probeRoot, { recursive: true, force: true });

beforeAll(async () => {
  server = createServer((_request, response) => response.end('ok\n'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  targetUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  work = await mkdtemp(join(tmpdir(), 'outpost-runner-test-'));
  // Sandbox roots live below it: their jobs' users must get through.
  await chmod(work, 0o711);
  // Stands for the agent's own files: readable by the agent's user only.
  const agentDirectory = await mkdtemp(join(tmpdir(), 'outpost-agent-files-'));
  agentFile = join(agentDirectory, 'key');
  await writeFile(agentFile, 'pl_agent_key_that_must_stay_put');
  await chmod(agentFile, 0o600);
});

afterAll(async () => {
  server?.close();
  if (work) await rm(work, { recursive: true, force: true });
  if (agentFile) await rm(join(agentFile, '..'), { recursive: true, force: true });
});

function job(script: string, overrides: Partial<Job> = {}, variables: Job['environmentVariables'] = []): Job {
  return {
    jobId: randomUUID(),
    checkSessionId: randomUUID(),
    checkId: randomUUID(),
    checkType: 'MULTI_STEP',
    name: 'runner test',
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

const messages = (lines: { message: string }[]) => lines.map((line) => line.message);

describe.each(KINDS)('multi-step runner under $kind isolation', ({ kind, uidBase }) => {
  const problem = problems.get(kind);

  const name = problem ? `(cannot run here: ${problem})` : 'with a fresh user id per job';
  describe.skipIf(problem !== undefined)(name, { timeout: TEST_TIMEOUT_MS }, () => {
    let t: TestHarness;
    let sandboxRoot: string;

    /** Nothing of any job of this kind runs any more, whichever user id it had. */
    async function expectNothingLeft(): Promise<void> {
      expect(await processesOfUids(uidBase, UID_BLOCK)).toEqual([]);
    }

    beforeAll(async () => {
      sandboxRoot = join(work, `${kind}-sandboxes`);
      t = await startTestHarness({
        isolation: kind,
        sandboxRoot,
        uidBase,
        uidCount: UID_COUNT,
        serviceSecrets: { SERVICE_SECRET_DB_PASSWORD: OPERATOR_SECRET },
      });
      expect(t.backend.kind).toBe(kind);
    });

    afterAll(async () => {
      await t?.stop();
      await expectNothingLeft();
    });

    it('runs a passing script on its runtime and reports each step, the logs and the trace', async () => {
      const passing = job(await fixtureScript('passing.spec.js'));
      const result = await t.run(passing);
      expect(result.error).toBeNull();
      expect(result).toMatchObject({ hasFailures: false, hasErrors: false, checkType: 'MULTI_STEP', agentId: 'test-agent' });
      const steps = result.details.steps as { name: string; status: string; durationMs: number }[];
      expect(steps.map((step) => [step.name, step.status])).toEqual([
        ['GET /', 'passed'],
        ['body says ok', 'passed'],
      ]);
      expect(messages(result.logs)).toContain(`checked with token ${SCRUB_MARKER}`);
      expect(JSON.stringify(result)).not.toContain(SECRET);
      expect(result.artifacts).toEqual([expect.objectContaining({ name: 'trace.zip', contentType: 'application/zip', uploaded: true })]);
      expect(result.responseTime).toBeGreaterThan(0);
      // What reached the service is the scrubbed trace.
      const uploaded = t.uploads.filter((upload) => upload.jobId === passing.jobId);
      expect(uploaded.map((upload) => upload.name)).toEqual(['trace.zip']);
      expect(uploaded[0]!.bytes.length).toBe(result.artifacts[0]!.size);
      expect(uploaded[0]!.bytes.includes(SECRET)).toBe(false);
    });

    it('runs on 2025.04 with that runtime\'s own Node.js', async () => {
      const script = `import { test } from '@playwright/test';\ntest('v', async () => { console.log('node ' + process.version); });\n`;
      const result = await t.run(job(script, { runtimeId: '2025.04' }));
      expect(result.error).toBeNull();
      expect(messages(result.logs)).toContain('node v22.11.0');
    });

    it('gives each job a fresh user id from the range, not the one the job before had', async () => {
      const script = `import { test } from '@playwright/test';\ntest('uid', async () => { console.log('uid ' + process.getuid()); });\n`;
      const uids: number[] = [];
      for (let run = 0; run < 3; run += 1) {
        const result = await t.run(job(script));
        expect(result.error).toBeNull();
        uids.push(Number(messages(result.logs).find((line) => line.startsWith('uid '))!.slice(4)));
      }
      for (const uid of uids) {
        expect(uid).toBeGreaterThanOrEqual(uidBase);
        expect(uid).toBeLessThan(uidBase + UID_COUNT);
      }
      expect(uids[1]).not.toBe(uids[0]);
      expect(uids[2]).not.toBe(uids[1]);
    });

    it('fails on an assertion with the assertion\'s message, scrubbed', async () => {
      const result = await t.run(job(await fixtureScript('failing-assertion.spec.js')));
      expect(result).toMatchObject({ hasFailures: true, hasErrors: false });
      expect(result.error?.code).toBe('SCRIPT_FAILED');
      expect(result.error?.message).toContain(`token ${SCRUB_MARKER} was sent`);
      expect(result.error?.message).toContain('Expected: 404');
      const steps = result.details.steps as { status: string }[];
      expect(steps[0]?.status).toBe('failed');
      expect(JSON.stringify(result)).not.toContain(SECRET);
    });

    it('stops an infinite loop at the timeout', async () => {
      const result = await t.run(job(await fixtureScript('infinite-loop.spec.js'), { timeoutSeconds: 3 }));
      expect(result.hasFailures).toBe(true);
      expect(result.error?.code).toBe('SCRIPT_TIMEOUT');
      await expectNothingLeft();
    });

    it('turns process.exit into a failed check', async () => {
      const result = await t.run(job(await fixtureScript('process-exit.spec.js')));
      expect(result.hasFailures).toBe(true);
      expect(result.error?.code).toMatch(/^SCRIPT_/);
    });

    it('stops a memory bomb at the memory limit', async () => {
      const limited = await startTestHarness({
        isolation: kind,
        sandboxRoot: join(work, `${kind}-limited-sandboxes`),
        uidBase: uidBase + MEMORY_UID_OFFSET,
        uidCount: UID_COUNT,
        memoryLimitBytes: 768 * 1024 * 1024,
      });
      try {
        const result = await limited.run(job(await fixtureScript('memory-bomb.spec.js')));
        expect(result.error?.code).toBe('SCRIPT_MEMORY_LIMIT');
      } finally {
        await limited.stop();
      }
      await expectNothingLeft();
    });

    it('kills every process a script started, even those that left its process group', async () => {
      const result = await t.run(job(await fixtureScript('fork-bomb.spec.js')));
      expect(result.error).toBeNull();
      await expectNothingLeft();
    });

    it('keeps a bounded part of huge output', async () => {
      const result = await t.run(job(await fixtureScript('huge-output.spec.js')));
      expect(result.logs.length).toBeLessThanOrEqual(1000);
      expect(JSON.stringify(result).length).toBeLessThan(20 * 1024 * 1024);
    });

    it('gives the script only its variables, SERVICE and the SERVICE_SECRET_* ones, and no way to the agent\'s key', async () => {
      const variables = [
        { key: 'AGENT_PID', value: String(process.pid), secret: false },
        { key: 'AGENT_FILE', value: agentFile, secret: false },
        { key: 'PROBE_MARKER', value: 'pl_agent_key', secret: false },
      ];
      const result = await t.run(job(await fixtureScript('prying.spec.js'), {}, variables));
      expect(result.error).toBeNull();
      const lines = messages(result.logs);
      const env = lines.find((line) => line.startsWith('env: '))!.slice(5).split(',');
      expect(env).toEqual(expect.arrayContaining(['API_TOKEN', 'SERVICE', 'SERVICE_SECRET_DB_PASSWORD', 'TARGET_URL']));
      expect(env).not.toContain('CI');
      expect(env.filter((key) => /API_KEY|REDIS|API_URL/.test(key))).toEqual([]);
      for (const route of ['parent environ (fs)', 'parent environ (cat)', 'agent file (fs)', 'agent file (cat)']) {
        expect(lines.find((line) => line.startsWith(`${route}:`))).toMatch(/denied/);
      }
      // The operator's secret is the script's to use, never the result's to show.
      expect(JSON.stringify(result)).not.toContain(OPERATOR_SECRET);
    });

    it('sets CI=true only for test sessions', async () => {
      const script = `import { test } from '@playwright/test';\ntest('ci', async () => { console.log('CI=' + process.env.CI); });\n`;
      const result = await t.run(job(script, { runSource: 'TEST_NO_RECORD' }));
      expect(messages(result.logs)).toContain('CI=true');
    });

    it('leaves no job directory behind', async () => {
      expect(await readdir(sandboxRoot)).toEqual([]);
    });
  });
});
