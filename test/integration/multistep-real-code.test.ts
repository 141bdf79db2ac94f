/**
 * Real Playwright code in multi-step and browser checks, the agent's side:
 * the script written at its own path (`scriptPath`) beside its dependencies,
 * so TypeScript and `../` imports work; the check's `playwrightConfig` under
 * the agent's own settings; each test's outcome and artifacts named after
 * it; errors that name the user's files, not the job directory; screenshots
 * the script saved. The pure pieces first, then real runs through the
 * script harness (runtime 2026.04, Debian's Chromium, the strongest
 * isolation backend this machine has) of the fixture project in
 * test/fixtures/real-playwright.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserKind, CHROMIUM_ARGS } from '../../src/agent/browser/browser-runner.js';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import type { IsolationKind } from '../../src/agent/isolation/isolation.js';
import { fillJobDirectory, type JobFiles } from '../../src/agent/multistep/job-directory.js';
import { mergeUse, runConfigSource } from '../../src/agent/multistep/run-config.js';
import { userPathRewriter } from '../../src/agent/multistep/user-paths.js';
import type { Job } from '../../src/protocol/agent-api.js';
import { MAX_ARTIFACT_NAME } from '../../src/protocol/agent-api.js';
import type { PlaywrightCheckConfig } from '../../src/protocol/playwright-config.js';
import { SCRUB_MARKER } from '../../src/scrub/marker.js';
import { startStoreServer, type StoreServer } from '../fixtures/real-playwright/store-server.js';
import { isolationProblem, processesOfUids, startTestHarness, type TestHarness } from '../support/script-harness.js';

const CHROMIUM = '/usr/bin/chromium';
const FIXTURE = join(import.meta.dirname, '../fixtures/real-playwright');
const UID_BASE = 62500;
const UID_COUNT = 20;
const TEST_TIMEOUT_MS = 90_000;

const fixture = (path: string) => readFile(join(FIXTURE, path), 'utf8');

describe('the run config: the check\'s playwrightConfig under the agent\'s settings', () => {
  const agentUse = browserKind({ chromiumPath: CHROMIUM, ffmpegPath: '/nonexistent/ffmpeg' }).use(CHROMIUM);
  const user: PlaywrightCheckConfig & { use: Record<string, unknown> } = {
    use: {
      baseURL: 'https://shop.example/',
      viewport: { width: 500, height: 400 },
      locale: 'de-DE',
      extraHTTPHeaders: { 'x-team': 'checkout' },
      launchOptions: { executablePath: '/home/me/chrome', args: ['--bogus'], headless: false, slowMo: 10 },
      // Not Playwright options the schema knows: whatever the service let through, the agent drops them.
      headless: false,
      trace: 'off',
      video: 'on',
      connectOptions: { wsEndpoint: 'ws://elsewhere' },
    },
    expect: { timeout: 2500 },
    timeout: 20_000,
  };

  it('keeps the check\'s options and lays the agent\'s browser, flags and recording on top', () => {
    expect(mergeUse(user.use, agentUse)).toEqual({
      baseURL: 'https://shop.example/',
      viewport: { width: 500, height: 400 },
      locale: 'de-DE',
      extraHTTPHeaders: { 'x-team': 'checkout' },
      headless: true,
      trace: 'on',
      screenshot: 'only-on-failure',
      video: 'off',
      launchOptions: { slowMo: 10, executablePath: CHROMIUM, args: CHROMIUM_ARGS },
    });
  });

  it('gives a multi-step run no executable, flags or recording of the check\'s choosing either', () => {
    expect(mergeUse(user.use, { trace: 'on' })).toEqual({
      baseURL: 'https://shop.example/',
      viewport: { width: 500, height: 400 },
      locale: 'de-DE',
      extraHTTPHeaders: { 'x-team': 'checkout' },
      headless: true,
      trace: 'on',
      screenshot: 'off',
      video: 'off',
      launchOptions: { slowMo: 10 },
    });
  });

  it('writes a config with the check\'s expect and timeout, bounded by the job\'s, that runs exactly the script', async () => {
    const root = await mkdtemp(join(tmpdir(), 'outpost-run-config-'));
    try {
      const path = join(root, 'playwright.config.cjs');
      const write = async (options: Partial<Parameters<typeof runConfigSource>[0]>) => {
        await writeFile(path, runConfigSource({ root, testFile: 'tests/[id].spec.ts', timeoutMs: 240_000, agentUse, user, ...options }));
        const load = createRequire(import.meta.url);
        delete load.cache[path];
        return load(path) as { timeout: number; expect?: unknown; use: Record<string, unknown>; testMatch: RegExp[] };
      };
      const config = await write({});
      expect(config.timeout).toBe(20_000);
      expect(config.expect).toEqual({ timeout: 2500 });
      expect(config.use).toEqual(mergeUse(user.use, agentUse));
      const [pattern] = config.testMatch;
      expect(pattern!.test(join(root, 'check', 'tests/[id].spec.ts'))).toBe(true);
      // Brackets are the file's name, not a glob; a dependency of the same name elsewhere is not the test file.
      expect(pattern!.test(join(root, 'check', 'tests/i.spec.ts'))).toBe(false);
      expect(pattern!.test(join(root, 'check', 'lib/tests/[id].spec.ts'))).toBe(false);
      expect((await write({ user: { timeout: 600_000 } })).timeout).toBe(240_000);
      expect((await write({ user: undefined })).timeout).toBe(240_000);
      expect((await write({ user: undefined })).expect).toBeUndefined();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('the job directory: the script at its own path', () => {
  let work: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'outpost-job-layout-'));
  });
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  async function fill(files: Partial<JobFiles>): Promise<string> {
    const root = await mkdtemp(join(work, 'job-'));
    await fillJobDirectory(
      { root, checkDirectory: join(root, 'check'), remove: async () => undefined },
      { script: 'test()', scriptPath: 'check.spec.ts', dependencies: [], playwrightConfig: () => '', ...files },
      null,
    );
    return root;
  }

  it('writes the script where its project has it, beside the files it imports from parent folders', async () => {
    const root = await fill({
      scriptPath: 'tests/login.spec.ts',
      dependencies: [{ path: 'fixtures/user.ts', content: 'export const user = 1;' }],
    });
    expect(await readFile(join(root, 'check/tests/login.spec.ts'), 'utf8')).toBe('test()');
    expect(await readFile(join(root, 'check/fixtures/user.ts'), 'utf8')).toBe('export const user = 1;');
  });

  it('refuses a layout in which two files need the same place', async () => {
    await expect(fill({ scriptPath: 'a.spec.ts', dependencies: [{ path: 'a.spec.ts', content: '' }] })).rejects.toThrow(
      /dependency path a\.spec\.ts is the check's own script/,
    );
    await expect(fill({ scriptPath: 'tests/a.spec.ts', dependencies: [{ path: 'tests', content: '' }] })).rejects.toThrow(
      /tests\/a\.spec\.ts needs a folder tests, which is a dependency/,
    );
    await expect(fill({ scriptPath: 'lib', dependencies: [{ path: 'lib/x.ts', content: '' }] })).rejects.toThrow(/needs a folder lib/);
    await expect(
      fill({ scriptPath: 'outpost-browser.spec.cjs', entry: () => ({ name: 'outpost-browser.spec.cjs', content: '' }) }),
    ).rejects.toThrow(/agent's own file/);
    await expect(fill({ scriptPath: '../up.spec.ts' })).rejects.toThrow(/must be relative and stay inside/);
  });
});

describe('paths in what a run says', () => {
  it('become the user\'s: check/ files by their project path, the agent\'s by their job-directory path', async () => {
    const root = await mkdtemp(join(tmpdir(), 'outpost-user-paths-'));
    const linked = `${root}-link`;
    try {
      await symlink(root, linked);
      const rewrite = await userPathRewriter(linked);
      expect(
        rewrite(
          [
            `Error: boom\n    at ${linked}/check/tests/login.spec.ts:12:5`,
            `at file://${linked}/check/lib/util.mjs:3:1`,
            `at ${root}/check/fixtures/user.ts:4:2`,
            `see ${linked}/results/trace.zip and ${linked}/node_modules/playwright/lib/x.js`,
          ].join('\n'),
        ),
      ).toBe(
        [
          'Error: boom\n    at tests/login.spec.ts:12:5',
          'at lib/util.mjs:3:1',
          'at fixtures/user.ts:4:2',
          'see results/trace.zip and node_modules/playwright/lib/x.js',
        ].join('\n'),
      );
    } finally {
      await rm(linked, { force: true });
      await rm(root, { recursive: true, force: true });
    }
  });
});

// Which backend this machine can run is known before the tests are collected.
const probeRoot = await mkdtemp(join(tmpdir(), 'outpost-real-code-probe-'));
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

describe.skipIf(problem !== undefined)(`real Playwright code through the harness${problem ? ` (cannot run here: ${problem})` : ''}`, { timeout: TEST_TIMEOUT_MS }, () => {
  let store: StoreServer;
  let t: TestHarness;
  let work: string;
  let sandboxRoot: string;
  const SECRET = 'store-token-4471-secret';

  function job(checkType: 'MULTI_STEP' | 'BROWSER', settings: Record<string, unknown>): Job {
    return {
      jobId: randomUUID(),
      checkSessionId: randomUUID(),
      checkId: randomUUID(),
      checkType,
      name: 'real code',
      runLocation: 'test-location',
      runSource: 'TRIGGER_API',
      attempt: 1,
      leaseExpiresAt: new Date(Date.now() + 300_000).toISOString(),
      timeoutSeconds: 240,
      runtimeId: '2026.04',
      environmentVariables: [{ key: 'STORE_TOKEN', value: SECRET, secret: true }],
      settings: { dependencies: [], shouldFail: false, ...settings },
    };
  }

  beforeAll(async () => {
    store = await startStoreServer();
    work = await mkdtemp(join(tmpdir(), 'outpost-real-code-'));
    await chmod(work, 0o711);
    sandboxRoot = join(work, 'sandboxes');
    t = await startTestHarness({
      isolation: kind!,
      sandboxRoot,
      uidBase: UID_BASE,
      uidCount: UID_COUNT,
      chromiumPath: CHROMIUM,
      memoryLimitBytes: defaultSandboxConfig().memoryLimitBytes,
      // Warm, as agents run by default: the script's own path and config reach a sandbox started before its job.
      warm: true,
    });
  });

  afterAll(async () => {
    await t?.stop();
    await store?.close();
    if (work) await rm(work, { recursive: true, force: true });
    expect(await processesOfUids(UID_BASE, UID_COUNT)).toEqual([]);
  });

  it('refuses a scriptPath the rule refuses, as invalid settings, writing nothing', async () => {
    for (const scriptPath of ['../outside.spec.ts', '/etc/passwd.spec.ts', 'tests/notes.txt', 'tests/./a.spec.ts']) {
      const result = await t.run(job('MULTI_STEP', { script: 'throw new Error("never run")', scriptPath }));
      expect({ scriptPath, code: result.error?.code, hasErrors: result.hasErrors }).toEqual({ scriptPath, code: 'INVALID_SETTINGS', hasErrors: true });
      expect(result.error?.message).toContain('scriptPath');
    }
  });

  it('runs a script without scriptPath as TypeScript, types, ES module imports and require alike; and an .mjs one at its path', async () => {
    const scripts: { name: string; settings: Record<string, unknown> }[] = [
      {
        name: 'types',
        settings: {
          script: `import { test, expect, type APIResponse } from '@playwright/test';
interface Answer { ok: boolean }
test('typed', async ({ request }) => {
  const response: APIResponse = await request.get('${store.url}about');
  const answer: Answer = { ok: response.ok() };
  expect(answer.ok).toBe(true);
});
`,
        },
      },
      {
        name: 'require',
        settings: {
          script: `const { test, expect } = require('@playwright/test');
const { join } = require('node:path');
test('common js', async () => {
  expect(join('a', 'b')).toBe('a/b');
});
`,
        },
      },
      {
        name: 'mjs',
        settings: {
          scriptPath: 'checks/plain.spec.mjs',
          script: `import { test, expect } from '@playwright/test';
import { twice } from '../lib/twice.mjs';
test('es module', async () => {
  expect(twice(2)).toBe(4);
});
`,
          dependencies: [{ path: 'lib/twice.mjs', content: 'export const twice = (n) => n * 2;\n' }],
        },
      },
    ];
    for (const { name, settings } of scripts) {
      const result = await t.run(job('MULTI_STEP', settings));
      expect({ name, error: result.error, tests: (result.details.tests as { status: string }[]).map((test) => test.status) }).toEqual({
        name,
        error: null,
        tests: ['passed'],
      });
    }
  });

  it('runs a TypeScript spec at its own path as a multi-step check: its ../ fixtures, baseURL, every test, errors in the user\'s paths', async () => {
    const result = await t.run(
      job('MULTI_STEP', {
        script: await fixture('tests/api.spec.ts'),
        scriptPath: 'tests/api.spec.ts',
        dependencies: [{ path: 'fixtures/store.ts', content: await fixture('fixtures/store.ts') }],
        playwrightConfig: { use: { baseURL: store.url }, expect: { timeout: 2000 }, timeout: 30_000 },
      }),
    );
    expect(result).toMatchObject({ checkType: 'MULTI_STEP', hasFailures: true, hasErrors: false, error: { code: 'SCRIPT_FAILED' } });
    // In the report's order: a file's own tests, then each describe block's.
    expect(result.details.tests).toEqual([
      { title: 'the about page answers', status: 'passed', durationMs: expect.any(Number) },
      { title: 'store API › lists the products', status: 'passed', durationMs: expect.any(Number) },
      { title: 'store API › becomes ready', status: 'passed', durationMs: expect.any(Number) },
      { title: 'store API › knows the spring discount', status: 'failed', durationMs: expect.any(Number), error: expect.stringContaining('GET /api/discounts/SPRING') },
    ]);
    // Steps are kept, each under its test's title.
    expect((result.details.steps as { name: string; status: string }[]).map((step) => [step.name, step.status])).toEqual([
      ['lists the products › every product is there', 'passed'],
      ['lists the products › prices read in euros', 'passed'],
    ]);
    // The error and its stack name the spec as the project has it, never the job's directory.
    const failed = (result.details.tests as { error?: string }[])[3]!.error!;
    expect(failed).toContain('at tests/api.spec.ts:34:');
    expect(result.error!.message).toContain('tests/api.spec.ts:34');
    expect(JSON.stringify(result)).not.toContain(sandboxRoot);
    // The baseURL-relative requests reached the store.
    expect(store.requests).toEqual(expect.arrayContaining(['/api/products', '/api/status', '/api/discounts/SPRING', '/about']));
    // A trace per test, named after it.
    expect(result.artifacts.map((artifact) => artifact.name).sort()).toEqual([
      'trace-store-API-becomes-ready.zip',
      'trace-store-API-knows-the-spring-discount.zip',
      'trace-store-API-lists-the-products.zip',
      'trace-the-about-page-answers.zip',
    ]);
    expect(result.artifacts.every((artifact) => artifact.uploaded && artifact.contentType === 'application/zip')).toBe(true);
  });

  it('keeps screenshots a multi-step script saved, and names traces of long or secret titles within the rule', async () => {
    const long = 'a title far longer than any artifact name may be '.repeat(6);
    const script = `import { test } from '@playwright/test';
import { writeFileSync, mkdirSync } from 'node:fs';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
test(${JSON.stringify(long)}, async () => {
  mkdirSync('shots', { recursive: true });
  writeFileSync('shots/chart.png', PNG);
});
test(\`uses \${process.env.STORE_TOKEN}\`, async () => {});
`;
    const result = await t.run(job('MULTI_STEP', { script, scriptPath: 'report.spec.ts' }));
    expect(result.error).toBeNull();
    const names = result.artifacts.map((artifact) => artifact.name);
    expect(names).toHaveLength(3);
    expect(names[0]).toMatch(/^trace-a-title-far-longer/);
    expect(names[0]!.length).toBeLessThanOrEqual(MAX_ARTIFACT_NAME);
    expect(names[0]).toMatch(/\.zip$/);
    expect(names[1]).toMatch(/^trace-uses.*\.zip$/);
    expect(names[1]).not.toContain(SECRET);
    expect(result.artifacts[2]).toMatchObject({ name: 'chart-2.png', contentType: 'image/png', uploaded: true });
    expect((result.details.tests as { title: string }[]).map((test) => test.title)).toEqual([long, `uses ${SCRUB_MARKER}`]);
  });

  it('runs a TypeScript browser spec at its own path with its viewport and baseURL, in the agent\'s Chromium whatever the check asks', async () => {
    const result = await t.run(
      job('BROWSER', {
        script: await fixture('tests/shop.spec.ts'),
        scriptPath: 'tests/shop.spec.ts',
        dependencies: [{ path: 'fixtures/store.ts', content: await fixture('fixtures/store.ts') }],
        playwrightConfig: {
          use: {
            baseURL: store.url,
            viewport: { width: 640, height: 480 },
            // The agent's browser and flags win: this executable does not exist, and the run works all the same.
            launchOptions: { executablePath: '/nonexistent/chrome', args: ['--this-flag-is-dropped'] },
          },
          expect: { timeout: 2000 },
        },
      }),
    );
    expect(result).toMatchObject({ checkType: 'BROWSER', hasFailures: true, hasErrors: false, error: { code: 'SCRIPT_FAILED' } });
    expect((result.details.tests as { title: string; status: string }[]).map((test) => [test.title, test.status])).toEqual([
      ['the about page has its heading', 'passed'],
      ['store front › has the store title', 'passed'],
      ['store front › shows every product with its price', 'passed'],
      ['store front › sells a gift card', 'failed'],
    ]);
    expect(result.error!.message).toContain('tests/shop.spec.ts:45');
    expect(JSON.stringify(result)).not.toContain(sandboxRoot);
    const names = result.artifacts.map((artifact) => artifact.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'trace-store-front-has-the-store-title.zip',
        'trace-the-about-page-has-its-heading.zip',
        'screenshot-store-front-sells-a-gift-card.png',
        expect.stringMatching(/^front-\d+\.png$/),
      ]),
    );
    // The screenshot the spec saved has the check's viewport.
    const front = t.uploads.find((upload) => upload.jobId === result.jobId && /^front-\d+\.png$/.test(upload.name))!;
    expect([front.bytes.readUInt32BE(16), front.bytes.readUInt32BE(20)]).toEqual([640, 480]);
  });
});
