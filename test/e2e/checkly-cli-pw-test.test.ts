/**
 * `checkly pw-test`, the public CLI's own process, against a real service
 * whose real agent runs the uploaded Playwright project as a PLAYWRIGHT check
 * on a private location: the agent installs the project's dependencies with
 * `npm ci` from its package-lock (@playwright/test 1.58.2), runs its tests
 * in Debian's Chromium against a loopback site, and the CLI prints which
 * tests passed and which failed, exiting 1 for the failing one. Playwright's
 * own arguments (after `--`) and `--env` reach the run; `--detach` leaves it
 * to `test-sessions get --watch`.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { runtimePaths } from '../../src/runtimes/installed.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { checklyCli, type CheckCli, type CliOutcome } from '../support/checkly-cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { startTarget, type Target } from '../support/target.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CHROMIUM = '/usr/bin/chromium';
/** A Playwright project's package.json and lock pinning @playwright/test 1.58.2, which the suite installs with `npm ci`. */
const SUITE_FIXTURE = join(ROOT, 'test/fixtures/playwright-suite');
/** The install (`npm ci`) and the browser tests run in the one CLI call. */
const CLI_MS = 300_000;
const SESSION_ID = /Test session ID: ([0-9a-f-]{36})/;

describe.skipIf(!existsSync(CHROMIUM))('checkly pw-test against Outpost', () => {
  let service: TestService;
  let agent: TestAgent;
  let target: Target;
  let work: string;
  let project: string;
  let slug: string;
  let cli: CheckCli;

  const checkly = (args: string[]): Promise<CliOutcome> =>
    cli.run(args, { timeoutMs: CLI_MS, env: { CHECKLY_MQTT_URL: `${service.url.replace(/^http/, 'ws')}/mqtt` } });
  const explain = (outcome: CliOutcome) => `${outcome.stdout}\n${outcome.stderr}`;

  beforeAll(async () => {
    target = await startTarget({
      '/': (_request, response) =>
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Outpost shop</title></head><body><h1>Welcome</h1></body></html>'),
    });
    service = await startTestService('pglite');
    const location = await service.privateLocation();
    slug = location.slugName;

    work = await mkdtemp(join(tmpdir(), 'outpost-e2e-pw-test-'));
    // Sandbox users reach their directories and the suite's dependency cache through it.
    await chmod(work, 0o755);
    agent = await startTestAgent(
      {
        apiKey: location.rawKey,
        apiUrl: service.url,
        sandbox: {
          ...defaultSandboxConfig(),
          // Sandbox users of this file's own.
          uidBase: 65200,
          uidCount: 40,
          directory: join(work, 'sandboxes'),
          chromiumPath: CHROMIUM,
          enginesDirectory: join(tmpdir(), 'outpost-test-engines'),
          dependencyCache: join(work, 'dependency-cache'),
        },
      },
      process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {},
    );
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');

    const home = join(work, 'home');
    project = join(home, 'project');
    await mkdir(join(project, 'tests'), { recursive: true });
    await mkdir(join(project, 'node_modules'), { recursive: true });
    // The project's configs import `checkly` and `@playwright/test`, as a project with both installed would:
    // the CLI loads playwright.config.ts itself before it bundles the project.
    await symlink(join(ROOT, 'node_modules', 'checkly'), join(project, 'node_modules', 'checkly'), 'dir');
    const runtimeModules = join(runtimePaths('2026.04').dir, 'node_modules');
    for (const name of ['@playwright', 'playwright', 'playwright-core']) {
      await symlink(join(runtimeModules, name), join(project, 'node_modules', name), 'dir');
    }
    for (const file of ['package.json', 'package-lock.json']) await writeFile(join(project, file), await readFile(join(SUITE_FIXTURE, file)));
    const files: Record<string, string> = {
      'checkly.config.ts': `import { defineConfig } from 'checkly'
export default defineConfig({
  projectName: 'Outpost pw-test',
  logicalId: 'outpost-pw-test',
  checks: { playwrightConfigPath: './playwright.config.ts' },
  cli: { privateRunLocation: '${slug}' },
})
`,
      'playwright.config.ts': `import { defineConfig } from '@playwright/test'
export default defineConfig({
  testDir: './tests',
  retries: 0,
  workers: 1,
  use: { baseURL: '${target.url}' },
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
})
`,
      'tests/home.spec.ts': `import { test, expect } from '@playwright/test'
test('home page has the shop title', async ({ page }) => {
  await page.goto('/')
  await expect(page).toHaveTitle(process.env.SHOP_TITLE ?? 'SHOP_TITLE is not set')
})
`,
      'tests/basket.spec.ts': `import { test, expect } from '@playwright/test'
test('basket page lists the basket', async ({ page }) => {
  await page.goto('/basket')
  await expect(page.getByRole('heading', { name: 'Your basket' })).toBeVisible({ timeout: 2000 })
})
`,
    };
    for (const [name, content] of Object.entries(files)) await writeFile(join(project, name), content);
    cli = checklyCli(() => service, home, project);
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await target?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('runs the project on the agent and prints which tests passed and which failed', async () => {
    const outcome = await checkly(['pw-test', '--private-location', slug, '--reporter', 'list', '--env', 'SHOP_TITLE=Outpost shop']);
    const output = explain(outcome);
    expect(outcome.code, output).toBe(1);
    expect(output).toContain(`Running 1 checks in private location ${slug}.`);
    // The agent installed the project's own Playwright, then ran both specs in Chromium.
    expect(output).toMatch(/npm ci: done in/);
    expect(output).toContain('Running 2 tests using 1 worker');
    expect(output).toMatch(/✓ +\d+ \[chromium\] › tests\/home\.spec\.ts:2:5 › home page has the shop title/);
    expect(output).toMatch(/✘ +\d+ \[chromium\] › tests\/basket\.spec\.ts:2:5 › basket page lists the basket/);
    expect(output).toContain('SCRIPT_FAILED: 1 of 2 tests failed; first: [chromium] basket page lists the basket');
    expect(output).toMatch(/✖ Playwright Test \(\d+m?s\)/);
    expect(output).toContain('1 failed, 1 total');
    expect(target.hits.get('/')).toBeGreaterThan(0);
    expect(target.hits.get('/basket')).toBeGreaterThan(0);

    const id = SESSION_ID.exec(output)?.[1];
    expect(id, output).toBeDefined();
    const got = await checkly(['test-sessions', 'get', id!, '--output', 'json']);
    expect(got.code, explain(got)).toBe(0);
    const detail = JSON.parse(got.stdout) as { status: string; results: { name: string; status: string; testSessionResultId: string }[] };
    expect(detail.status).toBe('FAILED');
    expect(detail.results.map((result) => [result.name, result.status])).toEqual([['Playwright Test', 'FAILED']]);
    const shown = await checkly(['test-sessions', 'get', id!, '--result', detail.results[0]!.testSessionResultId, '--output', 'json']);
    expect(shown.code, explain(shown)).toBe(0);
    // The terminal view of a result has no section for Playwright checks; the JSON one carries each test's outcome.
    const result = JSON.parse(shown.stdout) as { checkType: string; error: { code: string }; details: { tests: { title: string; status: string }[] } };
    expect(result).toMatchObject({ checkType: 'PLAYWRIGHT', error: { code: 'SCRIPT_FAILED' } });
    expect(result.details.tests.map((test) => [test.title, test.status]).sort()).toEqual([
      ['basket page lists the basket', 'failed'],
      ['home page has the shop title', 'passed'],
    ]);
    // Nothing of a test run becomes a check.
    expect((await service.api('GET', '/v1/checks')).body).toEqual([]);
  }, CLI_MS);

  it('passes Playwright arguments on: the passing spec alone passes and exits 0', async () => {
    // --verbose: a passing check's logs are shown only when asked for.
    const outcome = await checkly([
      'pw-test', '--private-location', slug, '--reporter', 'list', '--verbose', '--env', 'SHOP_TITLE=Outpost shop', '--', 'tests/home.spec.ts',
    ]);
    const output = explain(outcome);
    expect(outcome.code, output).toBe(0);
    expect(output).toContain('Running 1 test using 1 worker');
    expect(output).toMatch(/✓ +\d+ \[chromium\] › tests\/home\.spec\.ts:2:5 › home page has the shop title/);
    expect(output).not.toContain('basket page lists the basket');
    expect(output).toMatch(/✔ Playwright Test: tests\/home\.spec\.ts \(\d+m?s\)/);
    expect(output).toContain('1 passed, 1 total');
  }, CLI_MS);

  it('pw-test --detach schedules and exits; test-sessions get --watch waits for the outcome', async () => {
    // The location from checkly.config.ts's cli.privateRunLocation this time.
    const detached = await checkly(['pw-test', '--detach']);
    const output = explain(detached);
    expect(detached.code, output).toBe(0);
    expect(output).toContain('Checks will continue running in the cloud.');
    const id = SESSION_ID.exec(output)?.[1];
    expect(id, output).toBeDefined();

    const watched = await checkly(['test-sessions', 'get', id!, '--watch', '--output', 'json']);
    expect(watched.code, explain(watched)).toBe(0);
    const detail = JSON.parse(watched.stdout) as { status: string; results: { name: string; status: string }[] };
    // No --env this time: the home spec fails too, and the session says so.
    expect(detail.status).toBe('FAILED');
    expect(detail.results.map((result) => [result.name, result.status])).toEqual([['Playwright Test', 'FAILED']]);
  }, CLI_MS);
});
