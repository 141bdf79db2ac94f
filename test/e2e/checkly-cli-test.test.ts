/**
 * `checkly test`, `checkly trigger` and `checkly test-sessions`, the public
 * CLI's own processes, against a real service whose real agent runs the
 * checks on a private location against a loopback site: results stream back
 * to the CLI over the service's MQTT endpoint, a failing check shows why,
 * recorded sessions are listed and read back.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { checklyCli, type CheckCli, type CliOutcome } from '../support/checkly-cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { respond, startTarget, type Target } from '../support/target.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CLI_MS = 150_000;
const SESSION_ID = /Test session ID: ([0-9a-f-]{36})/;

describe('checkly test, trigger and test-sessions against Outpost', () => {
  let service: TestService;
  let agent: TestAgent;
  let target: Target;
  let home: string;
  let project: string;
  let sandboxDirectory: string;
  let slug: string;
  let cli: CheckCli;

  const checkly = (args: string[], cwd?: string): Promise<CliOutcome> =>
    cli.run(args, { cwd, timeoutMs: CLI_MS, env: { CHECKLY_MQTT_URL: `${service.url.replace(/^http/, 'ws')}/mqtt` } });
  const explain = (outcome: CliOutcome) => `${outcome.stdout}\n${outcome.stderr}`;

  beforeAll(async () => {
    target = await startTarget({
      '/': respond(200, 'home'),
      '/orders': (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"orders":[]}'),
      '/broken': respond(503, 'the basket is down'),
    });
    service = await startTestService('pglite');
    const location = await service.privateLocation();
    slug = location.slugName;
    sandboxDirectory = await mkdtemp(join(tmpdir(), 'outpost-e2e-sandboxes-'));
    agent = await startTestAgent({
      apiKey: location.rawKey,
      apiUrl: service.url,
      sandbox: { ...defaultSandboxConfig(), uidBase: 65150, uidCount: 40, directory: sandboxDirectory },
    });
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');

    home = await mkdtemp(join(tmpdir(), 'outpost-checkly-test-'));
    project = join(home, 'project');
    await mkdir(join(project, 'node_modules'), { recursive: true });
    // The project's files import `checkly`, as a project with the CLI installed would.
    await symlink(join(ROOT, 'node_modules', 'checkly'), join(project, 'node_modules', 'checkly'), 'dir');
    const files: Record<string, string> = {
      'package.json': JSON.stringify({ name: 'outpost-test-e2e', private: true, type: 'module' }),
      'checkly.config.ts': `import { defineConfig } from 'checkly'
export default defineConfig({
  projectName: 'Outpost test run',
  logicalId: 'outpost-test-run',
  checks: { runtimeId: '2026.04', checkMatch: '**/*.check.ts' },
  cli: { privateRunLocation: '${slug}' },
})
`,
      'journey.spec.ts': `import { test, expect } from '@playwright/test'
test('journey', async ({ request }) => {
  const response = await request.get('${target.url}/orders')
  expect(response.status()).toBe(200)
})
`,
      'home.check.ts': `import { UrlMonitor, UrlAssertionBuilder } from 'checkly/constructs'
new UrlMonitor('home', {
  name: 'Home page',
  request: { url: '${target.url}/', assertions: [UrlAssertionBuilder.statusCode().equals(200)] },
})
`,
      'basket.check.ts': `import { ApiCheck, AssertionBuilder } from 'checkly/constructs'
new ApiCheck('basket-api', {
  name: 'Basket API',
  request: { method: 'GET', url: '${target.url}/broken', assertions: [AssertionBuilder.statusCode().equals(200)] },
})
`,
      'journey.check.ts': `import { MultiStepCheck } from 'checkly/constructs'
new MultiStepCheck('journey', { name: 'Shop journey', code: { entrypoint: './journey.spec.ts' } })
`,
    };
    for (const [name, content] of Object.entries(files)) await writeFile(join(project, name), content);
    cli = checklyCli(() => service, home, project);
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await target?.close();
    if (home) await rm(home, { recursive: true, force: true });
    if (sandboxDirectory) await rm(sandboxDirectory, { recursive: true, force: true });
  });

  let recordedId: string;

  it('test runs every check on the agent, streams each result back and shows why the failing one failed', async () => {
    const outcome = await checkly(['test', '--reporter', 'list']);
    const output = explain(outcome);
    expect(outcome.code, output).toBe(1);
    expect(output).toContain(`Running 3 checks in private location ${slug}.`);
    expect(output).toMatch(/✔ Home page \(\d+m?s\)/);
    expect(output).toMatch(/✔ Shop journey \(\d+m?s\)/);
    expect(output).toMatch(/✖ Basket API \(\d+m?s\)/);
    // The failure: the response the agent got and the assertion that failed on it.
    expect(output).toContain(`GET ${target.url}/broken`);
    expect(output).toContain('Status Code: 503');
    expect(output).toContain('the basket is down');
    expect(output).toMatch(/✖ status code equals target "200"\. Received: 503\./);
    expect(output).toContain('1 failed, 2 passed, 3 total');
    recordedId = SESSION_ID.exec(output)?.[1] ?? '';
    expect(recordedId, output).not.toBe('');
    expect(target.hits.get('/orders')).toBeGreaterThan(0);
    // Nothing of a test run becomes a check.
    expect((await service.api('GET', '/v1/checks')).body).toEqual([]);
  }, CLI_MS);

  it('test-sessions list and get read the recorded session back', async () => {
    const listed = await checkly(['test-sessions', 'list', '--output', 'json']);
    expect(listed.code, explain(listed)).toBe(0);
    const list = JSON.parse(listed.stdout) as { data: { id: string; name: string; status: string; failed: string[]; passed: string[] }[] };
    const entry = list.data.find((session) => session.id === recordedId);
    expect(entry).toMatchObject({ name: 'Outpost test run', status: 'FAILED', failed: ['Basket API'] });
    expect(entry!.passed.sort()).toEqual(['Home page', 'Shop journey']);

    const table = await checkly(['test-sessions', 'list']);
    expect(table.code, explain(table)).toBe(0);
    expect(table.stdout).toMatch(/failed\s+.*Outpost test run\s+API/);

    const got = await checkly(['test-sessions', 'get', recordedId, '--output', 'json']);
    expect(got.code, explain(got)).toBe(0);
    const detail = JSON.parse(got.stdout) as { status: string; results: { name: string; status: string; testSessionResultId: string }[] };
    expect(detail.status).toBe('FAILED');
    expect(detail.results.map((result) => [result.name, result.status]).sort()).toEqual([
      ['Basket API', 'FAILED'],
      ['Home page', 'PASSED'],
      ['Shop journey', 'PASSED'],
    ]);

    const failed = detail.results.find((result) => result.name === 'Basket API')!;
    const shown = await checkly(['test-sessions', 'get', recordedId, '--result', failed.testSessionResultId]);
    expect(shown.code, explain(shown)).toBe(0);
    expect(shown.stdout).toContain('Basket API');
    expect(shown.stdout).toMatch(/Status:\s+503/);
    expect(shown.stdout).toContain('the basket is down');
  }, CLI_MS);

  it('test --detach schedules and exits; test-sessions get --watch waits for the results', async () => {
    const detached = await checkly(['test', '--detach', 'home']);
    const output = explain(detached);
    expect(detached.code, output).toBe(0);
    expect(output).toContain('Checks will continue running in the cloud.');
    const id = SESSION_ID.exec(output)?.[1];
    expect(id, output).toBeDefined();

    const watched = await checkly(['test-sessions', 'get', id!, '--watch', '--output', 'json']);
    expect(watched.code, explain(watched)).toBe(0);
    const detail = JSON.parse(watched.stdout) as { status: string; results: { name: string; status: string }[] };
    expect(detail.status).toBe('PASSED');
    expect(detail.results.map((result) => [result.name, result.status])).toEqual([['Home page', 'PASSED']]);
  }, CLI_MS);

  it('test --no-record streams results but keeps no session', async () => {
    const before = (await service.api('GET', '/v1/test-sessions')).body.length as number;
    const outcome = await checkly(['test', '--no-record', 'home']);
    expect(outcome.code, explain(outcome)).toBe(0);
    expect(outcome.stdout).toMatch(/✔ Home page/);
    expect(outcome.stdout).not.toMatch(SESSION_ID);
    expect((await service.api('GET', '/v1/test-sessions')).body.length).toBe(before);
  }, CLI_MS);

  it('trigger runs the stored checks with the tags given at the private location', async () => {
    const created = await service.api('POST', '/v1/checks/url', {
      name: 'Stored home page',
      activated: true,
      frequency: 1440,
      tags: ['shop', 'smoke'],
      privateLocations: [slug],
      request: { url: `${target.url}/`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    });
    expect(created.status).toBe(201);

    const outcome = await checkly(['trigger', '--tags', 'shop,smoke', '--private-location', slug, '--reporter', 'list']);
    const output = explain(outcome);
    expect(outcome.code, output).toBe(0);
    expect(output).toContain(`Running 1 checks in private location ${slug}.`);
    expect(output).toMatch(/✔ Stored home page \(\d+m?s\)/);
    expect(output).toContain('1 passed, 1 total');
    const id = SESSION_ID.exec(output)?.[1];
    const session = await service.api('GET', `/v1/test-sessions/${id}`);
    expect(session.body).toMatchObject({ status: 'PASSED', provider: 'TRIGGER' });
    expect(session.body.results[0].checkId).toBe(created.body.id);

    // --fail-on-no-matching is the CLI's default.
    const none = await checkly(['trigger', '--tags', 'no-such-tag', '--private-location', slug]);
    expect(none.code, explain(none)).toBe(1);
    expect(none.stdout).toContain('No matching checks were found.');
  }, CLI_MS);

  it('a run at a public location is refused with the reason', async () => {
    // Outside the project: no configured private location, so the CLI asks for its default public one.
    const outcome = await checkly(['trigger', '--tags', 'shop'], home);
    expect(outcome.code).toBe(1);
    expect(explain(outcome)).toContain('This Outpost service runs checks only at private locations');
  }, CLI_MS);
});
