/**
 * What the script harness answers for jobs it must not or cannot run: each a
 * failed check with its reason, never a thrown error that would leave the
 * session waiting for a lease to expire; that it runs nothing at all without
 * isolation unless the operator opted in; and that the agent's own key never
 * leaves in anything a job reports, whatever the script does with it.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IsolationKind } from '../../src/agent/isolation/isolation.js';
import type { Job } from '../../src/protocol/agent-api.js';
import { SCRUB_MARKER } from '../../src/scrub/marker.js';
import { AGENT_KEY, isolationProblem, startTestHarness, type TestHarness } from '../support/script-harness.js';

const UID_BASE = 63600;
const TEST_TIMEOUT_MS = 120_000;
const PLAIN_SCRIPT = "import { test } from '@playwright/test';\ntest('t', () => {});\n";

let work: string;
let server: Server;
let targetUrl: string;
/** The paths the loopback target was asked for: a script that ran calls it. */
const calls: string[] = [];

// The strongest isolation this machine has for the harness that runs scripts.
const probeRoot = await mkdtemp(join(tmpdir(), 'outpost-harness-probe-'));
await chmod(probeRoot, 0o711);
let isolated: IsolationKind | undefined;
const problems: string[] = [];
for (const kind of ['namespaces', 'users'] as const) {
  const problem = await isolationProblem(kind, join(probeRoot, kind));
  if (problem === undefined) {
    isolated = kind;
    break;
  }
  problems.push(`${kind}: ${problem}`);
}
await rm(probeRoot, { recursive: true, force: true });

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'outpost-script-harness-'));
  await chmod(work, 0o711);
  server = createServer((request, response) => {
    calls.push(request.url ?? '');
    response.end('ok\n');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  targetUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

function job(overrides: Partial<Job> = {}): Job {
  return {
    jobId: randomUUID(),
    checkSessionId: randomUUID(),
    checkId: randomUUID(),
    checkType: 'MULTI_STEP',
    name: 'script harness test',
    runLocation: 'here',
    runSource: 'TRIGGER_API',
    attempt: 1,
    leaseExpiresAt: new Date(Date.now() + 300_000).toISOString(),
    timeoutSeconds: 60,
    runtimeId: '2026.04',
    environmentVariables: [],
    settings: { script: PLAIN_SCRIPT, dependencies: [] },
    ...overrides,
  };
}

/** A script that tells the loopback target it ran. */
function callingJob(): Job {
  const script = `import { test } from '@playwright/test';
test('calls', async () => {
  await fetch(process.env.TARGET_URL + '/ran/' + process.env.JOB_MARK);
  console.log('ran as uid ' + process.getuid());
});
`;
  const mark = randomUUID();
  return job({
    settings: { script, dependencies: [] },
    environmentVariables: [
      { key: 'TARGET_URL', value: targetUrl, secret: false },
      { key: 'JOB_MARK', value: mark, secret: false },
    ],
  });
}

const markOf = (calling: Job) => calling.environmentVariables.find((variable) => variable.key === 'JOB_MARK')!.value;

const isolatedName = isolated ? `under ${isolated} isolation` : `(cannot run here: ${problems.join('; ')})`;

describe.skipIf(isolated === undefined)(`script jobs that cannot run, ${isolatedName}`, { timeout: TEST_TIMEOUT_MS }, () => {
  let t: TestHarness;

  beforeAll(async () => {
    t = await startTestHarness({ isolation: isolated!, sandboxRoot: join(work, 'isolated'), uidBase: UID_BASE, uidCount: 10 });
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('knows the installed runtimes', () => {
    expect(t.harness.runtimes).toEqual(expect.arrayContaining(['2026.04', '2025.04']));
    expect(t.harness.checkTypes).toContain('MULTI_STEP');
  });

  it('fails a job for a runtime this agent has not installed, naming what it has', async () => {
    const result = await t.run(job({ runtimeId: '2023.09-not-here' }));
    expect(result).toMatchObject({ hasErrors: true, hasFailures: true });
    expect(result.error?.code).toBe('RUNTIME_NOT_INSTALLED');
    expect(result.error?.message).toMatch(/2023\.09-not-here is not installed on this agent \(installed: .*2026\.04/);
  });

  it('does not run a script whose secret is too large to scrub, and does not repeat the secret', async () => {
    const secret = 'x'.repeat(200 * 1024);
    const result = await t.run(job({ environmentVariables: [{ key: 'HUGE', value: secret, secret: true }] }));
    expect(result.error?.code).toBe('SECRET_TOO_LARGE');
    expect(result.hasErrors).toBe(true);
    expect(JSON.stringify(result)).not.toContain('x'.repeat(1000));
    expect(t.uploads).toEqual([]);
  });

  it('runs a plain script on the same instance afterwards', async () => {
    const plain = job();
    const result = await t.run(plain);
    expect(result.error).toBeNull();
    expect(t.uploads.map(({ jobId, name }) => ({ jobId, name }))).toEqual([{ jobId: plain.jobId, name: 'trace.zip' }]);
  });

  it('never reports the agent\'s key, whatever the script does with it', async () => {
    // The script holds the key in its own text and prints it, fails on it and names a step after it.
    const script = `import { test, expect } from '@playwright/test';
const key = ${JSON.stringify(AGENT_KEY)};
test('leaks ' + key, async () => {
  console.log('key ' + key);
  console.error('again ' + key);
  await test.step('step ' + key, async () => {
    expect(key).toBe('something else');
  });
});
`;
    const leaking = job({ settings: { script, dependencies: [] } });
    const result = await t.run(leaking);
    expect(result).toMatchObject({ hasFailures: true, error: { code: 'SCRIPT_FAILED' } });
    const lines = result.logs.map((line) => line.message);
    expect(lines).toContain(`key ${SCRUB_MARKER}`);
    expect(lines).toContain(`again ${SCRUB_MARKER}`);
    expect(result.error!.message).toContain(SCRUB_MARKER);
    expect(result.details.steps).toEqual([expect.objectContaining({ name: `step ${SCRUB_MARKER}`, status: 'failed' })]);
    expect(JSON.stringify(result)).not.toContain(AGENT_KEY);
    // Nor the trace that reached the service, nor the agent's own log.
    const traces = t.uploads.filter((upload) => upload.jobId === leaking.jobId);
    expect(traces.map((upload) => upload.name)).toEqual(['trace.zip']);
    for (const upload of traces) expect(upload.bytes.includes(AGENT_KEY)).toBe(false);
    expect(t.logs.join('')).not.toContain(AGENT_KEY);
  });
});

describe('SANDBOX_ISOLATION=none', { timeout: TEST_TIMEOUT_MS }, () => {
  it('runs no script without the operator\'s opt-in, and says why', async () => {
    const refusing = await startTestHarness({ isolation: 'none', sandboxRoot: join(work, 'refusing'), uidBase: UID_BASE + 20 });
    try {
      expect(refusing.backend.kind).toBe('none');
      const calling = callingJob();
      const result = await refusing.run(calling);
      expect(result).toMatchObject({ hasErrors: true, hasFailures: true, error: { code: 'SANDBOX_UNAVAILABLE' } });
      expect(result.error!.message).toContain('SANDBOX_ALLOW_UNSAFE_NO_ISOLATION');
      // Nothing ran: the script never called, reported nothing and uploaded nothing.
      expect(calls.filter((call) => call.endsWith(markOf(calling)))).toEqual([]);
      expect(result.logs).toEqual([]);
      expect(result.artifacts).toEqual([]);
      expect(refusing.uploads).toEqual([]);
    } finally {
      await refusing.stop();
    }
  });

  it('runs a script as the agent\'s own user once the operator opted in', async () => {
    const unsafe = await startTestHarness({ isolation: 'none', allowUnsafe: true, sandboxRoot: join(work, 'unsafe'), uidBase: UID_BASE + 20 });
    try {
      expect(unsafe.backend.kind).toBe('none');
      const calling = callingJob();
      const result = await unsafe.run(calling);
      expect(result.error, JSON.stringify(result.logs.slice(-5))).toBeNull();
      expect(result.logs.map((line) => line.message)).toContain(`ran as uid ${process.getuid!()}`);
      expect(calls).toContain(`/ran/${markOf(calling)}`);
      expect(unsafe.uploads.map((upload) => upload.name)).toEqual(['trace.zip']);
    } finally {
      await unsafe.stop();
    }
  });
});
