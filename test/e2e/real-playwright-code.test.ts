/**
 * Real Playwright code, as its authors wrote it for `npx playwright test`,
 * run as checks with the same outcome test by test: the fixture project in
 * test/fixtures/real-playwright (TypeScript specs with types and
 * interfaces, a fixtures file in a parent folder imported with `../`,
 * `test.describe`, `beforeEach`, `expect.poll`, `test.step`, several tests
 * per file and one failing on purpose in each, baseURL-relative navigation
 * and requests, `page.screenshot({ path })`), run once by `npx playwright
 * test` (runtime 2026.04's Node.js and Playwright, Debian's Chromium) and
 * once through the real service and agent: its request spec as a
 * MULTI_STEP check and its page spec as a BROWSER check, each sent as the
 * CLI sends it, with its `scriptPath`, its dependency and the project's
 * `playwrightConfig`.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { parseSuiteReport } from '../../src/agent/playwright-suite/suite-report.js';
import { runtimePaths } from '../../src/runtimes/installed.js';
import { startStoreServer, type StoreServer } from '../fixtures/real-playwright/store-server.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';
import { runToFinal } from '../support/sessions.js';

const CHROMIUM = '/usr/bin/chromium';
const RUNTIME = '2026.04';
const FIXTURE = join(import.meta.dirname, '../fixtures/real-playwright');
const DEPENDENCY = 'fixtures/store.ts';

/** Each spec and how it runs as a check. */
const SPECS = [
  { path: 'tests/api.spec.ts', type: 'multistep', checkType: 'MULTI_STEP' },
  { path: 'tests/shop.spec.ts', type: 'browser', checkType: 'BROWSER' },
] as const;

/** What `npx playwright test` is expected to say of every test, keyed `file › title`: one failure per spec, on purpose. */
const EXPECTED: Record<string, string> = {
  'api.spec.ts › store API › lists the products': 'passed',
  'api.spec.ts › store API › becomes ready': 'passed',
  'api.spec.ts › store API › knows the spring discount': 'failed',
  'api.spec.ts › the about page answers': 'passed',
  'shop.spec.ts › store front › has the store title': 'passed',
  'shop.spec.ts › store front › shows every product with its price': 'passed',
  'shop.spec.ts › store front › sells a gift card': 'failed',
  'shop.spec.ts › the about page has its heading': 'passed',
};

type Outcomes = Record<string, string>;

interface CheckRun {
  session: any;
  detail: any;
}

/** A promise awaited later, in the test it belongs to: its failure is that test's, never an unhandled rejection. */
function later<T>(promise: Promise<T>): () => Promise<T> {
  const settled = promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  return async () => {
    const outcome = await settled;
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  };
}

/** `npx playwright test` in the project, as a developer runs it: the runtime's Node.js first on PATH, its node_modules linked. */
async function npxPlaywrightTest(project: string, reportFile: string): Promise<{ exitCode: number | null; stderr: string }> {
  const child = spawn('npx', ['--no-install', 'playwright', 'test', '--reporter=json'], {
    cwd: project,
    env: {
      PATH: `${dirname(runtimePaths(RUNTIME).node)}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME,
      FORCE_COLOR: '0',
      PLAYWRIGHT_JSON_OUTPUT_FILE: reportFile,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exitCode = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { exitCode, stderr };
}

describe.skipIf(!existsSync(CHROMIUM))('real Playwright code: npx playwright test and multi-step and browser checks agree', () => {
  let service: TestService;
  let agent: TestAgent;
  let store: StoreServer;
  let work: string;
  let sandboxDirectory: string;
  let npx: () => Promise<{ outcomes: Outcomes; errors: Record<string, string>; exitCode: number | null; screenshot: boolean }>;
  let checks: () => Promise<Map<string, CheckRun>>;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'outpost-e2e-real-code-'));
    await chmod(work, 0o755);
    sandboxDirectory = join(work, 'sandboxes');
    store = await startStoreServer();
    // The project's Playwright settings, as its config has them and as the CLI sends them with each check.
    const playwrightConfig = { use: { baseURL: store.url, viewport: { width: 800, height: 600 } }, expect: { timeout: 2000 }, timeout: 30_000 };

    const project = join(work, 'project');
    for (const folder of ['tests', 'fixtures']) await cp(join(FIXTURE, folder), join(project, folder), { recursive: true });
    await writeFile(
      join(project, 'playwright.config.js'),
      `module.exports = ${JSON.stringify(
        {
          testDir: './tests',
          retries: 0,
          workers: 1,
          ...playwrightConfig,
          use: { ...playwrightConfig.use, launchOptions: { executablePath: CHROMIUM } },
        },
        null,
        2,
      )};\n`,
    );
    await symlink(join(runtimePaths(RUNTIME).dir, 'node_modules'), join(project, 'node_modules'), 'dir');

    service = await startTestService(DB_KINDS[0]!);
    const location = await service.privateLocation();
    agent = await startTestAgent({
      apiKey: location.rawKey,
      apiUrl: service.url,
      jobConcurrency: 2,
      // Sandbox users of this file's own.
      sandbox: { ...defaultSandboxConfig(), uidBase: 62700, uidCount: 100, directory: sandboxDirectory, chromiumPath: CHROMIUM },
    });
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');

    const dependency = { path: DEPENDENCY, content: await readFile(join(FIXTURE, DEPENDENCY), 'utf8') };
    // The checks and npx at once: the agent runs one check per seat.
    checks = later(
      (async () => {
        const created = await Promise.all(
          SPECS.map(async (spec) => {
            const answer = await service.api('POST', `/v1/checks/${spec.type}`, {
              name: spec.path,
              activated: false,
              privateLocations: [location.slugName],
              runtimeId: RUNTIME,
              script: await readFile(join(FIXTURE, spec.path), 'utf8'),
              scriptPath: spec.path,
              dependencies: [dependency],
              playwrightConfig,
            });
            expect(answer.status, JSON.stringify(answer.body)).toBe(201);
            return [spec.path, answer.body.id as string] as const;
          }),
        );
        return new Map(await Promise.all(created.map(async ([path, id]) => [path, await runToFinal(service, id, 80_000)] as const)));
      })(),
    );
    npx = later(
      (async () => {
        const reportFile = join(work, 'npx-report.json');
        const { exitCode, stderr } = await npxPlaywrightTest(project, reportFile);
        const report = await readFile(reportFile, 'utf8').catch(() => {
          throw new Error(`npx playwright test wrote no report (exit ${String(exitCode)}): ${stderr.slice(-2000)}`);
        });
        const tests = parseSuiteReport(report).tests;
        return {
          outcomes: Object.fromEntries(tests.map((test) => [`${basename(test.file)} › ${test.title}`, test.status])),
          errors: Object.fromEntries(tests.flatMap((test) => (test.error ? [[`${basename(test.file)} › ${test.title}`, test.error]] : []))),
          exitCode,
          screenshot: existsSync(join(project, 'screenshots', 'front.png')),
        };
      })(),
    );
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await store?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('npx playwright test: the expected tests pass and fail, and the page spec saves its screenshot', { timeout: 90_000 }, async () => {
    const { outcomes, exitCode, screenshot } = await npx();
    expect(outcomes).toEqual(EXPECTED);
    expect(exitCode).toBe(1);
    expect(screenshot).toBe(true);
  });

  it('as checks: the same tests pass and fail, names included, each check failing on its failed test', { timeout: 90_000 }, async () => {
    const { outcomes } = await npx();
    const runs = await checks();
    const seen: Outcomes = {};
    for (const spec of SPECS) {
      const { session, detail } = runs.get(spec.path)!;
      expect({ spec: spec.path, checkType: detail.checkType, status: session.status, code: detail.error?.code }).toEqual({
        spec: spec.path,
        checkType: spec.checkType,
        status: 'FAILED',
        code: 'SCRIPT_FAILED',
      });
      for (const test of detail.details.tests as { title: string; status: string }[]) seen[`${basename(spec.path)} › ${test.title}`] = test.status;
    }
    expect(seen).toEqual(outcomes);
  });

  it('as checks: errors name the spec and line as npx does, never the agent\'s directory', { timeout: 90_000 }, async () => {
    const { errors } = await npx();
    const runs = await checks();
    const lines = (text: string) => [...text.matchAll(/tests\/\w+\.spec\.ts:\d+:\d+/g)].map((match) => match[0]);
    for (const spec of SPECS) {
      const { detail } = runs.get(spec.path)!;
      const failed = (detail.details.tests as { title: string; error?: string }[]).find((test) => test.error)!;
      const npxError = errors[`${basename(spec.path)} › ${failed.title}`]!;
      // npx says where from its project's directory; the check from the same root, the user's.
      expect(lines(failed.error!)).toEqual(lines(npxError.replaceAll(`${join(work, 'project')}/`, '')));
      expect(lines(failed.error!).length).toBeGreaterThan(0);
      expect(detail.error.message).toContain(spec.path);
      expect(JSON.stringify(detail)).not.toContain(sandboxDirectory);
    }
  });

  it('as checks: traces named after their tests; the browser check\'s failure screenshot and the screenshot the spec saved', { timeout: 90_000 }, async () => {
    const runs = await checks();
    const names = (path: string): string[] => runs.get(path)!.detail.artifacts.map((artifact: { name: string }) => artifact.name);
    expect(names('tests/api.spec.ts').sort()).toEqual([
      'trace-store-API-becomes-ready.zip',
      'trace-store-API-knows-the-spring-discount.zip',
      'trace-store-API-lists-the-products.zip',
      'trace-the-about-page-answers.zip',
    ]);
    expect(names('tests/shop.spec.ts')).toEqual(
      expect.arrayContaining([
        'trace-store-front-has-the-store-title.zip',
        'trace-store-front-sells-a-gift-card.zip',
        'screenshot-store-front-sells-a-gift-card.png',
        expect.stringMatching(/^front-\d+\.png$/),
      ]),
    );
    for (const spec of SPECS) {
      expect(runs.get(spec.path)!.detail.artifacts.every((artifact: { uploaded: boolean }) => artifact.uploaded)).toBe(true);
    }
    // Relative paths reached the store through the baseURL, from npx and the checks alike.
    expect(store.requests).toEqual(expect.arrayContaining(['/', '/about', '/api/products', '/api/status', '/api/discounts/SPRING']));
  });
});
