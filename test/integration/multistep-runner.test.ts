/**
 * The multi-step runner against real runtimes, a real HTTP target on
 * loopback and one fixture script per way a script can go wrong.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile, chmod } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareSandboxRoot } from '../../src/agent/multistep/job-directory.js';
import { runMultiStep, type MultiStepContext } from '../../src/agent/multistep/multistep-runner.js';
import { listProcesses } from '../../src/agent/sandbox/process-tree.js';
import { SandboxIdentities } from '../../src/agent/sandbox/sandbox-user.js';
import type { Job } from '../../src/protocol/agent-api.js';
import { findRuntime } from '../../src/runtimes/catalog.js';
import { runtimePaths } from '../../src/runtimes/installed.js';

const SECRET = 'tok-3f9a-secret-value';
const UID_BASE = 61100;
let server: Server;
let targetUrl: string;
let sandboxRoot: string;
let agentFile: string;

beforeAll(async () => {
  server = createServer((_request, response) => response.end('ok\n'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  targetUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  sandboxRoot = await mkdtemp(join(tmpdir(), 'outpost-runner-test-'));
  await prepareSandboxRoot(sandboxRoot);
  // Stands for the agent's own files: readable by the agent's user only.
  const agentDirectory = await mkdtemp(join(tmpdir(), 'outpost-agent-files-'));
  agentFile = join(agentDirectory, 'key');
  await writeFile(agentFile, 'pl_agent_key_that_must_stay_put');
  await chmod(agentFile, 0o600);
});

afterAll(async () => {
  server.close();
  await rm(sandboxRoot, { recursive: true, force: true });
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

function context(overrides: Partial<MultiStepContext> = {}, runtimeId = '2026.04'): MultiStepContext {
  const paths = runtimePaths(runtimeId);
  const replace = (text: string) => text.replaceAll(SECRET, '*****');
  return {
    runtime: {
      id: runtimeId,
      nodeJsVersion: findRuntime(runtimeId)!.nodeJsVersion,
      directory: paths.dir,
      node: paths.node,
      playwrightCli: paths.playwrightCli,
    },
    identities: new SandboxIdentities({ uidBase: UID_BASE, slots: 1, isolate: true }),
    sandboxRoot,
    memoryLimitBytes: 1024 * 1024 * 1024,
    serviceSecrets: { SERVICE_SECRET_DB_PASSWORD: 'db-pass-7781' },
    agentEnv: {},
    chromiumPath: undefined,
    // The scrubber has its own tests; here it only has to show that the runner applies one.
    scrub: { text: replace, value: <T>(value: T) => JSON.parse(replace(JSON.stringify(value))) as T },
    upload: async (_job, name, contentType, path) => ({
      name,
      contentType,
      size: (await readFile(path)).length,
      uploaded: true,
      error: null,
    }),
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe('multi-step runner', () => {
  it('runs a passing script on its runtime and reports each step, the logs and the trace', async () => {
    const result = await runMultiStep(job(await fixture('passing.spec.js')), randomUUID(), context());
    expect(result.error).toBeNull();
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, checkType: 'MULTI_STEP' });
    const steps = result.details.steps as { name: string; status: string; durationMs: number }[];
    expect(steps.map((step) => [step.name, step.status])).toEqual([
      ['GET /', 'passed'],
      ['body says ok', 'passed'],
    ]);
    expect(result.logs.map((line) => line.message)).toContain('checked with token *****');
    expect(JSON.stringify(result)).not.toContain(SECRET);
    expect(result.artifacts).toEqual([expect.objectContaining({ name: 'trace.zip', contentType: 'application/zip', uploaded: true })]);
    expect(result.responseTime).toBeGreaterThan(0);
  });

  it('runs on 2025.04 with that runtime\'s own Node.js', async () => {
    const script = `import { test } from '@playwright/test';\ntest('v', async () => { console.log('node ' + process.version); });\n`;
    const result = await runMultiStep(job(script, { runtimeId: '2025.04' }), randomUUID(), context({}, '2025.04'));
    expect(result.error).toBeNull();
    expect(result.logs.map((line) => line.message)).toContain('node v22.11.0');
  });

  it('fails on an assertion with the assertion\'s message, scrubbed', async () => {
    const result = await runMultiStep(job(await fixture('failing-assertion.spec.js')), randomUUID(), context());
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false });
    expect(result.error?.code).toBe('SCRIPT_FAILED');
    expect(result.error?.message).toContain('token ***** was sent');
    expect(result.error?.message).toContain('Expected: 404');
    const steps = result.details.steps as { status: string }[];
    expect(steps[0]?.status).toBe('failed');
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });

  it('stops an infinite loop at the timeout', async () => {
    const result = await runMultiStep(job(await fixture('infinite-loop.spec.js'), { timeoutSeconds: 3 }), randomUUID(), context());
    expect(result.hasFailures).toBe(true);
    expect(result.error?.code).toBe('SCRIPT_TIMEOUT');
    expect(await listProcesses({ uid: UID_BASE })).toEqual([]);
  });

  it('turns process.exit into a failed check', async () => {
    const result = await runMultiStep(job(await fixture('process-exit.spec.js')), randomUUID(), context());
    expect(result.hasFailures).toBe(true);
    expect(result.error?.code).toMatch(/^SCRIPT_/);
  });

  it('stops a memory bomb at the memory limit', async () => {
    const result = await runMultiStep(
      job(await fixture('memory-bomb.spec.js')),
      randomUUID(),
      context({ memoryLimitBytes: 768 * 1024 * 1024 }),
    );
    expect(result.error?.code).toBe('SCRIPT_MEMORY_LIMIT');
    expect(await listProcesses({ uid: UID_BASE })).toEqual([]);
  });

  it('kills every process a script started, even those that left its process group', async () => {
    const result = await runMultiStep(job(await fixture('fork-bomb.spec.js')), randomUUID(), context());
    expect(result.error).toBeNull();
    expect(await listProcesses({ uid: UID_BASE })).toEqual([]);
  });

  it('keeps a bounded part of huge output', async () => {
    const result = await runMultiStep(job(await fixture('huge-output.spec.js')), randomUUID(), context());
    expect(result.logs.length).toBeLessThanOrEqual(1000);
    expect(JSON.stringify(result).length).toBeLessThan(20 * 1024 * 1024);
  });

  it('gives the script only its variables, SERVICE and the SERVICE_SECRET_* ones, and no way to the agent\'s key', async () => {
    const variables = [
      { key: 'AGENT_PID', value: String(process.pid), secret: false },
      { key: 'AGENT_FILE', value: agentFile, secret: false },
      { key: 'PROBE_MARKER', value: 'pl_agent_key', secret: false },
    ];
    const result = await runMultiStep(job(await fixture('prying.spec.js'), {}, variables), randomUUID(), context());
    expect(result.error).toBeNull();
    const lines = result.logs.map((line) => line.message);
    const env = lines.find((line) => line.startsWith('env: '))!.slice(5).split(',');
    expect(env).toEqual(expect.arrayContaining(['API_TOKEN', 'SERVICE', 'SERVICE_SECRET_DB_PASSWORD', 'TARGET_URL']));
    expect(env).not.toContain('CI');
    expect(env.filter((key) => /API_KEY|REDIS|API_URL/.test(key))).toEqual([]);
    for (const route of ['parent environ (fs)', 'parent environ (cat)', 'agent file (fs)', 'agent file (cat)']) {
      expect(lines.find((line) => line.startsWith(`${route}:`))).toMatch(/denied/);
    }
  });

  it('sets CI=true only for test sessions', async () => {
    const script = `import { test } from '@playwright/test';\ntest('ci', async () => { console.log('CI=' + process.env.CI); });\n`;
    const result = await runMultiStep(job(script, { runSource: 'TEST_NO_RECORD' }), randomUUID(), context());
    expect(result.logs.map((line) => line.message)).toContain('CI=true');
  });
});
