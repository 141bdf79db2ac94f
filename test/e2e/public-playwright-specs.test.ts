/**
 * Public Playwright example specs, run three ways with the same outcome, test
 * by test: `npx playwright test` on its own, each spec as a BROWSER check, and
 * all of them as one PLAYWRIGHT check suite, through the real service and
 * agent (Debian's Chromium, runtime 2026.04's Playwright 1.58.2 and the same
 * version installed by the suite), against loopback stand-ins of the sites they
 * visit (test/support/public-sites.ts), working and broken.
 *
 * The specs are read from the npm packages that publish them, at test time:
 * create-playwright's `assets/example.spec.ts` and `.js` (what `npm init
 * playwright` writes) and the checkly CLI's onboarding `homepage.spec.ts`.
 * The only change to their bodies is their base URL (see `pointedAt`). The
 * stock `npm init playwright` project (create-playwright's config, three
 * browser projects) runs as a suite too: Chromium passes, the others fail at
 * once, naming their project.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { create as createTar } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { parseSuiteReport } from '../../src/agent/playwright-suite/suite-report.js';
import { runtimePaths } from '../../src/runtimes/installed.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { DB_KINDS } from '../support/databases.js';
import { startPlaywrightDev, startWebShop, type PublicSite } from '../support/public-sites.js';
import { startTestService, type TestService } from '../support/service.js';
import { runToFinal } from '../support/sessions.js';

const CHROMIUM = '/usr/bin/chromium';
/** Its @playwright/test (1.58.2) is the version the suite's package-lock pins. */
const RUNTIME = '2026.04';
const MODULES = join(import.meta.dirname, '../../node_modules');
/** A Playwright project's package.json and lock pinning @playwright/test 1.58.2, which the suite installs with `npm ci`. */
const SUITE_FIXTURE = join(import.meta.dirname, '../fixtures/playwright-suite');

type Site = 'playwright.dev' | 'webshop';
type State = 'working' | 'broken';
const STATES: State[] = ['working', 'broken'];

const SPECS: { file: string; path: string; site: Site }[] = [
  { file: 'example.spec.ts', path: join(MODULES, 'create-playwright/assets/example.spec.ts'), site: 'playwright.dev' },
  { file: 'example.spec.js', path: join(MODULES, 'create-playwright/assets/example.spec.js'), site: 'playwright.dev' },
  { file: 'homepage.spec.ts', path: join(MODULES, 'checkly/dist/ai-context/onboarding-boilerplate/__checks__/homepage.spec.ts'), site: 'webshop' },
];

/**
 * What `npx playwright test` is expected to say of every test, keyed `state › file › title`: all pass
 * against the working stand-ins; against the broken ones (playwright.dev's docs page without its
 * "Installation" heading, the shop under another title) the tests that look for what is missing fail.
 */
const EXPECTED: Record<string, string> = Object.fromEntries(
  STATES.flatMap((state) => [
    ...['example.spec.ts', 'example.spec.js'].flatMap((file) => [
      [`${state} › ${file} › has title`, 'passed'],
      [`${state} › ${file} › get started link`, state === 'working' ? 'passed' : 'failed'],
    ]),
    [`${state} › homepage.spec.ts › Visit webshop homepage`, state === 'working' ? 'passed' : 'failed'],
  ]),
);

/**
 * The spec's body with its base URL moved to the stand-in, and nothing else changed. create-playwright's
 * examples name https://playwright.dev/ literally. checkly's goes to '/' under the `baseURL` its CLI
 * configures; browser checks have no baseURL yet (nothing in src/agent/browser or src/agent/multistep
 * sets `use.baseURL`, from the check's variables or otherwise), so that '/' becomes the stand-in's full
 * URL, in all three runs alike. A later issue adds baseURL to browser checks.
 */
function pointedAt(source: string, site: Site, url: string): string {
  const [from, to] = site === 'playwright.dev' ? ['https://playwright.dev/', url] : ["page.goto('/')", `page.goto('${url}')`];
  // A release that moved its base URL elsewhere must fail here, not pass by reaching nothing.
  expect(source.split(from).length - 1, `${from} in the published spec`).toBeGreaterThan(0);
  return source.replaceAll(from, to);
}

type Outcomes = Record<string, string>;

/** Each test's status in a Playwright JSON report, keyed `project › file › title`; the suite's own parser reads it. */
function outcomesOfReport(text: string): Outcomes {
  return Object.fromEntries(parseSuiteReport(text).tests.map((test) => [`${test.project} › ${basename(test.file)} › ${test.title}`, test.status]));
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

/**
 * Every run is triggered at once at one agent, beside `npx playwright test`: a run waits for a seat
 * behind the others, so the wait is the check's own 240 s limit plus its queueing, not a speed target.
 */
const RUN_WAIT_MS = 300_000;
const TEST_TIMEOUT_MS = RUN_WAIT_MS + 30_000;

interface CheckRun {
  session: any;
  detail: any;
}

describe.skipIf(!existsSync(CHROMIUM))('public Playwright example specs: npx playwright test, browser checks and a check suite agree', () => {
  let service: TestService;
  let agent: TestAgent;
  let work: string;
  const sites: PublicSite[] = [];
  let npx: () => Promise<{ outcomes: Outcomes; exitCode: number | null; screenshot: boolean }>;
  let browserChecks: () => Promise<Map<string, CheckRun>>;
  let suite: () => Promise<CheckRun>;
  let stockSuite: () => Promise<CheckRun & { seconds: number }>;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'outpost-e2e-public-specs-'));
    // Sandbox users reach their directories and the suite's dependency cache through it.
    await chmod(work, 0o755);
    const standIns: Record<State, Record<Site, PublicSite>> = {
      working: { 'playwright.dev': await startPlaywrightDev(), webshop: await startWebShop() },
      broken: { 'playwright.dev': await startPlaywrightDev({ broken: 'heading' }), webshop: await startWebShop({ broken: 'title' }) },
    };
    sites.push(...STATES.flatMap((state) => Object.values(standIns[state])));

    // One Playwright project for npx and the suite: a project per state, each with the three specs.
    const project = join(work, 'project');
    const scripts = new Map<string, string>();
    for (const state of STATES) {
      await mkdir(join(project, state), { recursive: true });
      for (const spec of SPECS) {
        const script = pointedAt(await readFile(spec.path, 'utf8'), spec.site, standIns[state][spec.site].url);
        scripts.set(`${state} › ${spec.file}`, script);
        await writeFile(join(project, state, spec.file), script);
      }
    }
    for (const file of ['package.json', 'package-lock.json']) await writeFile(join(project, file), await readFile(join(SUITE_FIXTURE, file)));
    await writeFile(
      join(project, 'playwright.config.js'),
      `module.exports = ${JSON.stringify(
        {
          retries: 0,
          workers: 1,
          use: { launchOptions: { executablePath: CHROMIUM } },
          projects: STATES.map((state) => ({ name: state, testDir: `./${state}` })),
        },
        null,
        2,
      )};\n`,
    );
    // What `npm init playwright` writes: its stock config (three browser projects, the html reporter,
    // retries on CI) with the test directory it asks for, and its example spec.
    const stock = join(work, 'stock');
    await mkdir(join(stock, 'tests'), { recursive: true });
    const stockConfig = await readFile(join(MODULES, 'create-playwright/assets/playwright.config.ts'), 'utf8');
    expect(stockConfig).toContain('{{testDir}}');
    await writeFile(join(stock, 'playwright.config.ts'), stockConfig.replaceAll('{{testDir}}', 'tests'));
    await writeFile(join(stock, 'tests/example.spec.ts'), scripts.get('working › example.spec.ts')!);
    for (const file of ['package.json', 'package-lock.json']) await writeFile(join(stock, file), await readFile(join(SUITE_FIXTURE, file)));
    const stockBundle = join(work, 'stock.tar.gz');
    await createTar({ gzip: true, file: stockBundle, cwd: stock, portable: true }, ['package.json', 'package-lock.json', 'playwright.config.ts', 'tests']);

    const bundle = join(work, 'suite.tar.gz');
    await createTar({ gzip: true, file: bundle, cwd: project, portable: true }, ['package.json', 'package-lock.json', 'playwright.config.js', ...STATES]);
    await symlink(join(runtimePaths(RUNTIME).dir, 'node_modules'), join(project, 'node_modules'), 'dir');

    service = await startTestService(DB_KINDS[0]!);
    const location = await service.privateLocation();
    agent = await startTestAgent(
      {
        apiKey: location.rawKey,
        apiUrl: service.url,
        // Three seats: the suite in one, the browser checks in the others as they free up (their specs mostly wait).
        jobConcurrency: 3,
        sandbox: {
          ...defaultSandboxConfig(),
          // Sandbox users of this file's own.
          uidBase: 61600,
          uidCount: 100,
          directory: join(work, 'sandboxes'),
          chromiumPath: CHROMIUM,
          enginesDirectory: join(tmpdir(), 'outpost-test-engines'),
          dependencyCache: join(work, 'dependency-cache'),
        },
      },
      process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {},
    );
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');

    const uploaded = await fetch(`${service.url}/v1/code-bundles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}`, 'x-service-account': service.accountId, 'content-type': 'application/gzip' },
      body: await readFile(bundle),
    });
    expect(uploaded.status).toBe(201);
    const bundleId = ((await uploaded.json()) as { id: string }).id;
    const stockUploaded = await fetch(`${service.url}/v1/code-bundles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}`, 'x-service-account': service.accountId, 'content-type': 'application/gzip' },
      body: await readFile(stockBundle),
    });
    expect(stockUploaded.status).toBe(201);
    const stockBundleId = ((await stockUploaded.json()) as { id: string }).id;

    // All three at once: the suite first, its install and tests beside the browser checks and npx.
    suite = later(
      (async () => {
        const created = await service.api('POST', '/v1/checks/playwright', {
          name: 'public example specs',
          codeBundleId: bundleId,
          activated: false,
          privateLocations: [location.slugName],
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        return runToFinal(service, created.body.id, RUN_WAIT_MS);
      })(),
    );
    stockSuite = later(
      (async () => {
        const created = await service.api('POST', '/v1/checks/playwright', {
          name: 'npm init playwright',
          codeBundleId: stockBundleId,
          activated: false,
          privateLocations: [location.slugName],
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const started = performance.now();
        const run = await runToFinal(service, created.body.id, RUN_WAIT_MS);
        return { ...run, seconds: (performance.now() - started) / 1000 };
      })(),
    );
    browserChecks = later(
      (async () => {
        const created = await Promise.all(
          [...scripts].map(async ([key, script]) => {
            const answer = await service.api('POST', '/v1/checks/browser', {
              name: key,
              activated: false,
              privateLocations: [location.slugName],
              runtimeId: RUNTIME,
              script,
            });
            expect(answer.status, JSON.stringify(answer.body)).toBe(201);
            return [key, answer.body.id as string] as const;
          }),
        );
        // Triggered together: the agent runs them as its seats free up.
        return new Map(await Promise.all(created.map(async ([key, id]) => [key, await runToFinal(service, id, RUN_WAIT_MS)] as const)));
      })(),
    );
    npx = later(
      (async () => {
        const reportFile = join(work, 'npx-report.json');
        const { exitCode, stderr } = await npxPlaywrightTest(project, reportFile);
        const report = await readFile(reportFile, 'utf8').catch(() => {
          throw new Error(`npx playwright test wrote no report (exit ${String(exitCode)}): ${stderr.slice(-2000)}`);
        });
        return { outcomes: outcomesOfReport(report), exitCode, screenshot: existsSync(join(project, 'homepage.jpg')) };
      })(),
    );
  }, 60_000);

  afterAll(async () => {
    // Whatever is still under way ends with the agent and the service.
    await agent?.stop();
    await service?.close();
    await Promise.all(sites.map((site) => site.close()));
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('npx playwright test: every test passes against the working stand-ins, and the expected ones fail against the broken', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { outcomes, exitCode, screenshot } = await npx();
    expect(outcomes).toEqual(EXPECTED);
    expect(exitCode).toBe(1);
    expect(screenshot).toBe(true);
    // The specs really went to the stand-ins, each of them.
    for (const site of sites) expect(site.requests).toContain('/');
  });

  it('each spec as a browser check: the same outcome, test by test, and the check fails exactly when a test does', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { outcomes } = await npx();
    const runs = await browserChecks();
    const seen: Outcomes = {};
    for (const [key, { session, detail }] of runs) {
      const tests: { title: string; status: string }[] = detail.details.tests;
      for (const test of tests) seen[`${key} › ${test.title}`] = test.status;
      const failing = Object.entries(outcomes).some(([name, status]) => name.startsWith(`${key} › `) && status !== 'passed');
      expect({ key, status: session.status, hasFailures: detail.hasFailures, code: detail.error?.code ?? null }).toEqual({
        key,
        status: failing ? 'FAILED' : 'PASSED',
        hasFailures: failing,
        code: failing ? 'SCRIPT_FAILED' : null,
      });
    }
    expect(seen).toEqual(outcomes);
  });

  it('the browser check keeps the screenshot the spec saved (homepage.jpg) when the page passed', { timeout: TEST_TIMEOUT_MS }, async () => {
    const runs = await browserChecks();
    const screenshots = (key: string) =>
      runs.get(key)!.detail.artifacts.filter((artifact: { name: string }) => /^homepage-\d+\.jpg$/.test(artifact.name));
    expect(screenshots('working › homepage.spec.ts')).toEqual([expect.objectContaining({ contentType: 'image/jpeg', uploaded: true })]);
    // The broken shop fails the spec before its screenshot, under npx too.
    expect(screenshots('broken › homepage.spec.ts')).toEqual([]);
  });

  it('all specs as one Playwright check suite: the same outcome, test by test', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { outcomes } = await npx();
    const { session, detail } = await suite();
    expect(session.status, JSON.stringify(detail.error)).toBe('FAILED');
    expect(detail.error.code).toBe('SCRIPT_FAILED');
    const tests: { title: string; project: string; file: string; status: string }[] = detail.details.tests;
    expect(Object.fromEntries(tests.map((test) => [`${test.project} › ${basename(test.file)} › ${test.title}`, test.status]))).toEqual(outcomes);
  });

  it('a stock `npm init playwright` project: Chromium passes, Firefox and WebKit fail at once naming their project', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { session, detail, seconds } = await stockSuite();
    // A hang would wait out Playwright's launch timeout per test, and the run's own limit.
    console.log(`stock npm init playwright project: ${seconds.toFixed(1)} s from trigger to result`);
    expect(session.status).toBe('FAILED');
    const tests: { title: string; project: string; status: string; error?: string }[] = detail.details.tests;
    expect(tests.map((test) => `${test.project} › ${test.title} › ${test.status}`).sort()).toEqual([
      'chromium › get started link › passed',
      'chromium › has title › passed',
      'firefox › get started link › failed',
      'firefox › has title › failed',
      'webkit › get started link › failed',
      'webkit › has title › failed',
    ]);
    for (const test of tests.filter((entry) => entry.project !== 'chromium')) {
      const browser = test.project === 'firefox' ? 'Firefox' : 'WebKit';
      expect(test.error).toContain(`project "${test.project}" needs ${browser}, which this agent does not have`);
    }
    // Its html reporter is kept: the report comes back beside the JSON one.
    expect(detail.artifacts.map((artifact: { name: string }) => artifact.name)).toContain('playwright-report.zip');
  });
});
