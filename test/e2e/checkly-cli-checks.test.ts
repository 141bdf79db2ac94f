import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { checklyCli, type CheckCli } from '../support/checkly-cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { respond, startTarget, type Target } from '../support/target.js';

/**
 * The public `checkly` CLI's checks commands against a real Outpost service,
 * with a real agent on a private location running a URL monitor and API
 * checks against a loopback site.
 */
describe('the public checkly CLI: checks and assets commands', () => {
  let service: TestService;
  let agent: TestAgent;
  let target: Target;
  let home: string;
  let cli: CheckCli;
  const ids = { homepage: '', health: '', broken: '' };

  const RUN = { timeoutMs: 90_000 };

  beforeAll(async () => {
    target = await startTarget({
      '/': respond(200, 'welcome'),
      '/health': (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
      '/broken': respond(500, 'down for maintenance'),
    });
    service = await startTestService('pglite');
    const location = await service.privateLocation();
    agent = await startTestAgent({ apiKey: location.rawKey, apiUrl: service.url });
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');

    home = await mkdtemp(join(tmpdir(), 'outpost-checkly-checks-'));
    const work = join(home, 'project');
    await mkdir(work);
    cli = checklyCli(() => service, home, work);

    // Switched off so that only the CLI's runs produce results; --tags selects activated checks, so those two are switched on with a long frequency.
    const create = async (path: string, body: Record<string, unknown>) => {
      const created = await service.api('POST', path, { privateLocations: [location.slugName], frequency: 1440, ...body });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body.id as string;
    };
    ids.homepage = await create('/v1/checks/url', {
      name: 'Homepage monitor',
      activated: true,
      tags: ['web', 'prod'],
      request: { url: `${target.url}/`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    });
    ids.health = await create('/v1/checks/api', {
      name: 'Health API',
      activated: true,
      tags: ['api', 'prod'],
      request: { url: `${target.url}/health`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    });
    ids.broken = await create('/v1/checks/api', {
      name: 'Broken API',
      activated: false,
      tags: ['api'],
      request: { url: `${target.url}/broken`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    });
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await target?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('checks run --check-id waits for the sessions and fails when a check failed', async () => {
    const run = await cli.run(['checks', 'run', '--check-id', `${ids.broken},${ids.homepage}`], RUN);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toContain('2 check sessions completed:');
    expect(run.stdout).toMatch(/1 failed/);
    expect(run.stdout).toMatch(/1 passed/);
    expect(run.stdout).toContain('Broken API');
    expect(run.stdout).toContain('Homepage monitor');
  }, 120_000);

  it('checks run --tags runs the activated checks carrying all tags, and --output json shows the completed sessions', async () => {
    const out = await cli.ok(['checks', 'run', '--tags', 'prod', '--output', 'json'], RUN);
    const { sessions } = JSON.parse(out) as { sessions: { checkId: string; status: string; results: { resultType: string }[] }[] };
    expect(sessions.map((session) => session.checkId).sort()).toEqual([ids.homepage, ids.health].sort());
    for (const session of sessions) {
      expect(session.status).toBe('PASSED');
      expect(session.results.map((result) => result.resultType)).toEqual(['FINAL']);
    }
    const none = await cli.run(['checks', 'run', '--tags', 'prod,api,web'], RUN);
    expect(none.code).toBe(1);
    expect(none.stdout).toContain('No matching checks were found.');
  }, 120_000);

  it('checks run without a selection says how to name checks', async () => {
    const run = await cli.run(['checks', 'run'], RUN);
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain('checks run --check-id');
  }, 60_000);

  it('checks list shows statuses and totals, and filters by tag, type, search and status server-side', async () => {
    const table = await cli.ok(['checks', 'list']);
    expect(table).toMatch(/2 passing\s+.*1 failing\s+\(3 total checks\)/);
    for (const name of ['Homepage monitor', 'Health API', 'Broken API']) expect(table).toContain(name);
    expect(table).toContain('Showing 1-3 of 3 checks (page 1/1)');

    const listed = async (...args: string[]) => {
      const answer = JSON.parse(await cli.ok(['checks', 'list', '--output', 'json', ...args])) as {
        data: { id: string; status?: { hasFailures: boolean } }[];
        pagination: { total: number; totalPages: number };
      };
      return { ids: answer.data.map((check) => check.id).sort(), total: answer.pagination.total, data: answer.data };
    };
    expect((await listed('--tag', 'api')).ids).toEqual([ids.health, ids.broken].sort());
    expect((await listed('--tag', 'web,api')).total).toBe(3);
    expect((await listed('--type', 'URL')).ids).toEqual([ids.homepage]);
    expect((await listed('--search', 'HEALTH')).ids).toEqual([ids.health]);
    const failing = await listed('--status', 'failing');
    expect(failing.ids).toEqual([ids.broken]);
    expect(failing.data[0]!.status?.hasFailures).toBe(true);
    expect((await listed('--status', 'passing')).ids).toEqual([ids.homepage, ids.health].sort());

    const paged = await listed('--limit', '2', '--page', '2');
    expect(paged.ids).toHaveLength(1);
    expect(paged.total).toBe(3);

    const none = await cli.ok(['checks', 'list', '--search', 'nothing like this']);
    expect(none).toContain('No checks matching: search="nothing like this"');
  }, 90_000);

  it('checks get shows the status, stats, error groups and recent results; --error-group and --result drill in', async () => {
    const detail = await cli.ok(['checks', 'get', ids.broken]);
    expect(detail).toContain('Broken API');
    // Switched off, so the CLI shows it inactive whatever its last run said.
    expect(detail).toMatch(/Status:\s+inactive/);
    expect(detail).toContain('STATS (last 24 hours)');
    expect(detail).toMatch(/Availability:\s+0\.00%/);
    expect(detail).toMatch(/Response Time \(p95\):\s+\d+ms/);
    expect(detail).toContain('ERROR GROUPS');
    expect(detail).toContain('STATUS_CODE EQUALS "200" failed (actual: 500)');
    expect(detail).toContain('RECENT RESULTS');

    const json = JSON.parse(await cli.ok(['checks', 'get', ids.broken, '--output', 'json'])) as {
      check: { id: string };
      status: { hasFailures: boolean };
      results: { id: string; hasFailures: boolean; sequenceId: string }[];
      errorGroups: { id: string; cleanedErrorMessage: string; latestRootCauseAnalysis: unknown }[];
      analytics: { series: unknown[] } | null;
    };
    expect(json.check.id).toBe(ids.broken);
    expect(json.status.hasFailures).toBe(true);
    expect(json.results).toHaveLength(1);
    expect(json.results[0]!.hasFailures).toBe(true);
    expect(json.errorGroups).toHaveLength(1);
    expect(json.errorGroups[0]!.latestRootCauseAnalysis).toBeNull();
    expect(json.analytics?.series).toHaveLength(1);

    const group = await cli.ok(['checks', 'get', ids.broken, '--error-group', json.errorGroups[0]!.id]);
    expect(group).toContain('ERROR GROUP');
    expect(group).toContain(json.errorGroups[0]!.cleanedErrorMessage.split('\n')[0]!.slice(0, 40));
    expect(group).toContain(`Error group:   ${json.errorGroups[0]!.id}`);

    const healthResults = JSON.parse(await cli.ok(['checks', 'get', ids.health, '--output', 'json'])) as { results: { id: string }[] };
    const resultId = healthResults.results[0]!.id;
    const result = await cli.ok(['checks', 'get', ids.health, '--result', resultId]);
    expect(result).toContain('Health API');
    expect(result).toContain('REQUEST');
    expect(result).toContain(`${target.url}/health`);
    expect(result).toContain('RESPONSE');
    expect(result).toMatch(/Status:\s+200/);
    expect(result).toContain('"ok": true');

    const attempts = await cli.ok(['checks', 'get', ids.health, '--result', resultId, '--include-attempts']);
    expect(attempts).toContain('Ran once, no retry attempts.');

    const missing = await cli.run(['checks', 'get', '00000000-0000-4000-8000-000000000000']);
    expect(missing.code).toBe(1);
  }, 90_000);

  it('checks stats shows availability and response times per check', async () => {
    const table = await cli.ok(['checks', 'stats']);
    expect(table).toContain('STATS');
    expect(table).toMatch(/Homepage monitor\s+URL\s+passing\s+100\.00%/);
    expect(table).toMatch(/Broken API\s+API\s+inactive\s+0\.00%/);

    const json = JSON.parse(await cli.ok(['checks', 'stats', ids.health, '--output', 'json'])) as {
      data: { checkId: string; availability: number | null; responseTime_avg: number | null; status: string }[];
    };
    expect(json.data).toHaveLength(1);
    expect(json.data[0]).toMatchObject({ checkId: ids.health, availability: 100, status: 'passing' });
    expect(json.data[0]!.responseTime_avg).toBeGreaterThan(0);
  }, 60_000);

  it('assets list answers for a result without artifacts', async () => {
    const healthResults = JSON.parse(await cli.ok(['checks', 'get', ids.health, '--output', 'json'])) as { results: { id: string }[] };
    const out = await cli.ok(['assets', 'list', '--check-id', ids.health, '--result-id', healthResults.results[0]!.id]);
    expect(out).toContain('Assets for check result');
    expect(out).toContain('No assets found.');
  }, 60_000);

  it('checks delete removes the check', async () => {
    const deleted = await cli.ok(['checks', 'delete', ids.broken, '--force']);
    expect(deleted).toContain('Check "Broken API" deleted.');
    expect((await service.api('GET', `/v1/checks/${ids.broken}`)).status).toBe(404);
    const again = await cli.run(['checks', 'delete', ids.broken, '--force']);
    expect(again.code).toBe(1);
    expect(again.stdout + again.stderr).toContain(`Check "${ids.broken}" not found.`);
  }, 60_000);
});
