/**
 * Browser checks through the script harness: real runtimes, Debian's
 * Chromium, a small shop app on loopback, the strongest isolation backend
 * this machine has. One harness for the file: browser runs are slow.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FFMPEG_PATH } from '../../src/agent/browser/browser-runner.js';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import type { IsolationKind } from '../../src/agent/isolation/isolation.js';
import type { Job, Result } from '../../src/protocol/agent-api.js';
import { SCRUB_MARKER } from '../../src/scrub/marker.js';
import { fixtureScript, isolationProblem, processesOfUids, sitsInUsedJobDirectory, startTestHarness, type TestHarness, type UploadedArtifact } from '../support/script-harness.js';
import { CONSOLE_ERROR, startShopApp, type ShopApp } from '../support/shop-app.js';
import { readZip } from '../support/zip.js';

const CHROMIUM = '/usr/bin/chromium';
const PASSWORD = 'shop-pass-5521-secret';
/** Sent in an Authorization header: not a secret variable, hidden from traces by the header rule alone. */
const PLAIN_CREDENTIAL = 'cGxhaW4tY3JlZGVudGlhbC03Nzk=';
const UID_BASE = 63800;
const UID_COUNT = 20;
const TEST_TIMEOUT_MS = 60_000;
const hasVideo = existsSync(DEFAULT_FFMPEG_PATH);

const probeRoot = await mkdtemp(join(tmpdir(), 'outpost-browser-probe-'));
await chmod(probeRoot, 0o711);
let kind: IsolationKind | undefined;
for (const candidate of ['namespaces', 'users'] as const) {
  if ((await isolationProblem(candidate, join(probeRoot, candidate))) === undefined) {
    kind = candidate;
    break;
  }
}
await rm(probeRoot, { recursive: true, force: true });
const problem = !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM}` : kind === undefined ? 'no isolation backend runs here' : undefined;

function fixture(name: string): Promise<string> {
  return readFile(new URL(`../fixtures/browser/${name}`, import.meta.url), 'utf8');
}

describe.skipIf(problem !== undefined)(`browser checks${problem ? ` (cannot run here: ${problem})` : ''}`, { timeout: TEST_TIMEOUT_MS }, () => {
  let app: ShopApp;
  let t: TestHarness;
  let work: string;
  let sandboxRoot: string;
  let agentFile: string;

  function job(script: string, variables: Job['environmentVariables'] = []): Job {
    return {
      jobId: randomUUID(),
      checkSessionId: randomUUID(),
      checkId: randomUUID(),
      checkType: 'BROWSER',
      name: 'browser test',
      runLocation: 'test-location',
      runSource: 'TRIGGER_API',
      attempt: 1,
      leaseExpiresAt: new Date(Date.now() + 300_000).toISOString(),
      timeoutSeconds: 240,
      runtimeId: '2026.04',
      environmentVariables: [
        { key: 'TARGET_URL', value: app.url, secret: false },
        { key: 'SHOP_PASSWORD', value: PASSWORD, secret: true },
        { key: 'PLAIN_CREDENTIAL', value: PLAIN_CREDENTIAL, secret: false },
        ...variables,
      ],
      settings: { script, dependencies: [], shouldFail: false },
    };
  }

  /** What reached the "service" for a job, zips unpacked: every byte a secret could hide in. */
  async function uploadedText(uploads: UploadedArtifact[]): Promise<string> {
    const parts: string[] = [];
    for (const upload of uploads) {
      parts.push(upload.bytes.toString('latin1'));
      if (upload.contentType === 'application/zip') {
        const path = join(work, `${randomUUID()}.zip`);
        await writeFile(path, upload.bytes);
        for (const entry of await readZip(path)) parts.push(entry.name, entry.data.toString('latin1'));
        await rm(path);
      }
    }
    return parts.join('\n');
  }

  const uploadsOf = (result: Result) => t.uploads.filter((upload) => upload.jobId === result.jobId);
  const messages = (result: Result) => result.logs.map((line) => line.message);

  beforeAll(async () => {
    app = await startShopApp({ password: PASSWORD });
    work = await mkdtemp(join(tmpdir(), 'outpost-browser-test-'));
    await chmod(work, 0o711);
    sandboxRoot = join(work, 'sandboxes');
    const agentDirectory = await mkdtemp(join(tmpdir(), 'outpost-agent-files-'));
    agentFile = join(agentDirectory, 'key');
    await writeFile(agentFile, 'pl_agent_key_that_must_stay_put');
    await chmod(agentFile, 0o600);
    t = await startTestHarness({
      isolation: kind!,
      sandboxRoot,
      uidBase: UID_BASE,
      uidCount: UID_COUNT,
      chromiumPath: CHROMIUM,
      // The agent's default (SANDBOX_MEMORY_MB): Chromium's processes' resident sets, shared pages counted in each, pass 1 GiB.
      memoryLimitBytes: defaultSandboxConfig().memoryLimitBytes,
      // As agents run by default: each seat's sandbox started ahead, shared with multi-step jobs.
      warm: true,
    });
  });

  afterAll(async () => {
    await t?.stop();
    await app?.close();
    if (work) await rm(work, { recursive: true, force: true });
    if (agentFile) await rm(join(agentFile, '..'), { recursive: true, force: true });
  });

  it('declares BROWSER where Chromium is, and not where it is missing', async () => {
    expect(t.harness.checkTypes).toContain('BROWSER');
    const without = await startTestHarness({ isolation: kind!, sandboxRoot: join(work, 'no-chromium'), uidBase: UID_BASE + 50, uidCount: UID_COUNT });
    try {
      expect(without.harness.checkTypes).toContain('MULTI_STEP');
      expect(without.harness.checkTypes).not.toContain('BROWSER');
      expect(without.logs.join('\n')).toMatch(/Chromium is missing/);
    } finally {
      await without.stop();
    }
  });

  it('runs a script through pages and a form, with its steps, what the pages saw, and its artifacts', async () => {
    const result = await t.run(job(await fixture('log-in.spec.js')));
    expect(result.error).toBeNull();
    expect(result).toMatchObject({ checkType: 'BROWSER', hasFailures: false, hasErrors: false });
    const details = result.details;
    expect((details.steps as { name: string; status: string }[]).map((step) => [step.name, step.status])).toEqual([
      ['open the home page', 'passed'],
      ['go to the log-in form', 'passed'],
      ['log in', 'passed'],
    ]);
    expect(details.consoleErrors).toEqual(expect.arrayContaining([expect.objectContaining({ source: 'console', text: CONSOLE_ERROR })]));
    expect(details.failedRequests).toEqual(
      expect.arrayContaining([expect.objectContaining({ url: `${app.url}missing.png`, status: 404, method: 'GET' })]),
    );
    const vitals = details.webVitals as { url: string; ttfbMs: number | null; cls: number | null }[];
    expect(vitals).toEqual([expect.objectContaining({ url: `${app.url}account?user=ada` })]);
    expect(vitals[0]!.ttfbMs).toBeGreaterThan(0);
    expect(vitals[0]!.cls).toBeGreaterThanOrEqual(0);
    expect(messages(result)).toContain(`logged in with ${SCRUB_MARKER}`);
    const names = result.artifacts.map((artifact) => artifact.name);
    expect(names).toContain('trace.zip');
    if (hasVideo) expect(result.artifacts).toEqual(expect.arrayContaining([expect.objectContaining({ contentType: 'video/webm', uploaded: true })]));
    // The screenshot the script saved itself.
    expect(result.artifacts).toEqual(expect.arrayContaining([expect.objectContaining({ name: expect.stringMatching(/^account-\d+\.png$/), contentType: 'image/png' })]));
    expect(result.artifacts.every((artifact) => artifact.uploaded)).toBe(true);
    expect(JSON.stringify(result)).not.toContain(PASSWORD);
    // The password went through the form (the trace has the fill and the POST), and out of every upload.
    const text = await uploadedText(uploadsOf(result));
    expect(text).toContain(SCRUB_MARKER);
    expect(text).not.toContain(PASSWORD);
  });

  it('fails on an assertion with a screenshot, a video and the trace, scrubbed of secrets and credential headers', async () => {
    const result = await t.run(job(await fixture('wrong-welcome.spec.js')));
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false });
    expect(result.error?.code).toBe('SCRIPT_FAILED');
    expect(result.error?.message).toContain('Welcome, grace');
    const steps = (result.details as { steps: { name: string; status: string }[] }).steps;
    expect(steps.map((step) => [step.name, step.status])).toEqual([
      ['log in', 'passed'],
      ['check the welcome', 'failed'],
    ]);
    // What the page saw after the failed assertion, recorded all the same.
    expect(result.details.webVitals).toEqual([expect.objectContaining({ url: `${app.url}account?user=ada` })]);
    const types = result.artifacts.map((artifact) => artifact.contentType);
    expect(types).toContain('application/zip');
    expect(types).toContain('image/png');
    if (hasVideo) expect(types).toContain('video/webm');
    expect(result.artifacts.every((artifact) => artifact.uploaded)).toBe(true);
    // The header was really sent, and hidden from the trace though no variable marks it secret.
    expect(app.requests.some((request) => request.headers.authorization === `Basic ${PLAIN_CREDENTIAL}`)).toBe(true);
    const text = await uploadedText(uploadsOf(result));
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(PLAIN_CREDENTIAL);
    expect(JSON.stringify(result)).not.toContain(PASSWORD);
  });

  it('stops a page that never finishes at the check\'s timeout, Chromium with it', async () => {
    const script = `import { test } from '@playwright/test';
test('waits forever', async ({ page }) => {
  await page.goto(process.env.TARGET_URL);
  await page.waitForTimeout(600_000);
});
`;
    const result = await t.run({ ...job(script), timeoutSeconds: 4 });
    expect(result.hasFailures).toBe(true);
    expect(result.error?.code).toBe('SCRIPT_TIMEOUT');
    for (const { pid } of await processesOfUids(UID_BASE, UID_COUNT)) {
      expect(await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => 'gone')).not.toMatch(/chrom|ffmpeg/);
    }
  });

  it('runs on runtime 2025.04 (Playwright 1.51) with the same Chromium', async () => {
    const result = await t.run({ ...job(await fixture('log-in.spec.js')), runtimeId: '2025.04' });
    expect(result.error).toBeNull();
    expect(result.details.steps).toHaveLength(3);
    expect(result.details.consoleErrors).toEqual(expect.arrayContaining([expect.objectContaining({ text: CONSOLE_ERROR })]));
    expect(result.artifacts.map((artifact) => artifact.contentType)).toEqual(
      expect.arrayContaining(['application/zip', 'image/png', ...(hasVideo ? ['video/webm'] : [])]),
    );
  });

  it('finds the script\'s dependency files beside it, ES module imports and JSON included', async () => {
    const script = `import { test, expect } from '@playwright/test';
import { titleOf } from './lib/pages.js';
import settings from './data/settings.json' with { type: 'json' };
test('uses its files', async ({ page }) => {
  await test.step(titleOf(settings.page), async () => {
    await page.goto(new URL(settings.page, process.env.TARGET_URL).href);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('About us');
  });
});
`;
    const result = await t.run({
      ...job(script),
      settings: {
        script,
        dependencies: [
          { path: 'lib/pages.js', content: 'export function titleOf(path) { return `open ${path}`; }\n' },
          { path: 'data/settings.json', content: '{ "page": "/about" }\n' },
        ],
        shouldFail: false,
      },
    });
    expect(result.error).toBeNull();
    expect(result.details.steps).toEqual([expect.objectContaining({ name: 'open /about', status: 'passed' })]);
  });

  it('keeps the sandbox as it is for multi-step scripts, Chromium and all, in a warm sandbox too', async () => {
    const result = await t.run(
      job(await fixtureScript('prying.spec.js'), [
        { key: 'AGENT_PID', value: String(process.pid), secret: false },
        { key: 'AGENT_FILE', value: agentFile, secret: false },
        { key: 'PROBE_MARKER', value: 'pl_agent_key', secret: false },
      ]),
    );
    expect(result.error).toBeNull();
    const lines = messages(result);
    const env = lines.find((line) => line.startsWith('env: '))!.slice(5).split(',');
    expect(env.filter((key) => /API_KEY|REDIS|API_URL/.test(key))).toEqual([]);
    for (const route of ['parent environ (fs)', 'parent environ (cat)', 'agent file (fs)', 'agent file (cat)']) {
      expect(lines.find((line) => line.startsWith(`${route}:`))).toMatch(/denied/);
    }
    // The jobs after the first ran in warm sandboxes, Chromium and the findings with them.
    expect(t.multiStep.warmStats.warm).toBeGreaterThan(0);
    // What is left of the range is at most the seat's next warm sandbox, in a directory no job has used.
    for (const { pid } of await processesOfUids(UID_BASE, UID_COUNT)) {
      expect(await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => 'gone')).not.toMatch(/chrom/);
      expect(await sitsInUsedJobDirectory(pid)).toBe(false);
    }
    const used: string[] = [];
    for (const name of await readdir(sandboxRoot)) {
      if ((await readdir(join(sandboxRoot, name)).catch((): string[] => [])).includes('check')) used.push(name);
    }
    expect(used).toEqual([]);
  });

  it('leaves nothing of any job once the harness stops', async () => {
    await t.stop();
    expect(await processesOfUids(UID_BASE, UID_COUNT)).toEqual([]);
    expect(await readdir(sandboxRoot)).toEqual([]);
  });
});

describe.skipIf(problem !== undefined)(`browser checks: each test's outcome${problem ? ` (cannot run here: ${problem})` : ''}`, { timeout: TEST_TIMEOUT_MS }, () => {
  let app: ShopApp;
  let t: TestHarness;
  let work: string;
  const uidBase = UID_BASE + 100;

  beforeAll(async () => {
    app = await startShopApp({ password: PASSWORD });
    work = await mkdtemp(join(tmpdir(), 'outpost-browser-tests-'));
    await chmod(work, 0o711);
    t = await startTestHarness({
      isolation: kind!,
      sandboxRoot: join(work, 'sandboxes'),
      uidBase,
      uidCount: UID_COUNT,
      chromiumPath: CHROMIUM,
      memoryLimitBytes: defaultSandboxConfig().memoryLimitBytes,
      warm: false,
    });
  });

  afterAll(async () => {
    await t?.stop();
    await app?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  // A spec of several tests and no test.step (as `npm init playwright` writes them) says which of its tests failed.
  it('reports every test of the script with its status and error, titles scrubbed, beside the first error', async () => {
    const script = `import { test, expect } from '@playwright/test';

test('has the shop title', async ({ page }) => {
  await page.goto(process.env.TARGET_URL);
  await expect(page).toHaveTitle(/Outpost Shop/);
});

test.describe('about page', () => {
  test(\`greets \${process.env.SHOP_PASSWORD}\`, async ({ page }) => {
    await page.goto(new URL('/about', process.env.TARGET_URL).href);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Welcome', { timeout: 1000 });
  });
});
`;
    const result = await t.run({
      jobId: randomUUID(),
      checkSessionId: randomUUID(),
      checkId: randomUUID(),
      checkType: 'BROWSER',
      name: 'browser tests',
      runLocation: 'test-location',
      runSource: 'TRIGGER_API',
      attempt: 1,
      leaseExpiresAt: new Date(Date.now() + 300_000).toISOString(),
      timeoutSeconds: 240,
      runtimeId: '2026.04',
      environmentVariables: [
        { key: 'TARGET_URL', value: app.url, secret: false },
        { key: 'SHOP_PASSWORD', value: PASSWORD, secret: true },
      ],
      settings: { script, dependencies: [], shouldFail: false },
    });
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, error: { code: 'SCRIPT_FAILED' } });
    expect(result.details.steps).toEqual([]);
    expect(result.details.tests).toEqual([
      { title: 'has the shop title', status: 'passed', durationMs: expect.any(Number) },
      { title: `about page › greets ${SCRUB_MARKER}`, status: 'failed', durationMs: expect.any(Number), error: expect.stringContaining('toHaveText') },
    ]);
    expect(JSON.stringify(result)).not.toContain(PASSWORD);
  });
});
