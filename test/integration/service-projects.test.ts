import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

type Resource = { logicalId: string; type: string; member: boolean; physicalId?: string | number; payload: unknown };

const MULTI_STEP_SCRIPT = "import { test } from '@playwright/test';\nimport { a } from './lib/a.js';\ntest('t', async () => { console.log(a); });\n";

/** The project bundle as `checkly deploy` sends it (ProjectBundle.synthesize), for the constructs given. */
function bundle(resources: Resource[], logicalId = 'shop') {
  return {
    project: { logicalId, name: `Project ${logicalId}` },
    sharedFiles: [{ path: 'lib/a.js', content: 'export const a = 1;\n' }],
    resources,
  };
}

const common = { activated: true, muted: false, shouldFail: false, locations: [], tags: ['deployed'], frequency: 10, groupId: null, frequencyOffset: 1 };
const urlMonitor = (logicalId: string, url: string, name = 'home page'): Resource => ({
  logicalId,
  type: 'check',
  member: true,
  payload: { ...common, name, checkType: 'URL', doubleCheck: false, request: { url, method: 'GET', followRedirects: true, skipSSL: false, assertions: [{ source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '200', regex: null }] }, degradedResponseTime: 3000, maxResponseTime: 5000 },
});
const apiCheck = (logicalId: string, group: string | null): Resource => ({
  logicalId,
  type: 'check',
  member: true,
  payload: {
    ...common,
    name: 'orders api',
    checkType: 'API',
    groupId: group === null ? null : { ref: group },
    request: { method: 'POST', url: 'http://127.0.0.1:9/orders', headers: [], queryParameters: [], body: '{}', bodyType: 'JSON', assertions: [] },
    localSetupScript: "request.headers['x-from'] = 'setup';",
    setupScriptPath: 'setup.ts',
    setupScriptDependencies: [],
    runtimeId: '2026.04',
    environmentVariables: [{ key: 'TOKEN', value: 'abc', locked: false, secret: true }],
    degradedResponseTime: 5000,
    maxResponseTime: 20000,
  },
});
const multiStep = (logicalId: string): Resource => ({
  logicalId,
  type: 'check',
  member: true,
  payload: { ...common, name: 'journey', checkType: 'MULTI_STEP', runtimeId: '2026.04', environmentVariables: [], script: MULTI_STEP_SCRIPT, scriptPath: 'journey.spec.ts', dependencies: [0] },
});
const group: Resource = {
  logicalId: 'backend',
  type: 'check-group',
  member: true,
  payload: { name: 'Backend', activated: true, muted: false, tags: [], locations: [], concurrency: 2, apiCheckDefaults: { url: '', headers: [], queryParameters: [], assertions: [] }, environmentVariables: [], v: 2 },
};
const channel: Resource = { logicalId: 'ops-mail', type: 'alert-channel', member: true, payload: { type: 'EMAIL', config: { address: 'ops@example.test' }, sendFailure: true, sendRecovery: true, sendDegraded: false } };
const window: Resource = {
  logicalId: 'release-window',
  type: 'maintenance-window',
  member: true,
  payload: { name: 'Release', tags: ['deployed'], startsAt: '2030-01-01T10:00:00.000Z', endsAt: '2030-01-01T11:00:00.000Z', repeatInterval: 1, repeatUnit: 'WEEK' },
};
const subscription = (check: string): Resource => ({
  logicalId: `check-alert-channel-subscription#${check}#ops-mail`,
  type: 'alert-channel-subscription',
  member: true,
  payload: { alertChannelId: { ref: 'ops-mail' }, checkId: { ref: check }, activated: true },
});
const location = (id: string): Resource => ({ logicalId: `private-location-${id}`, type: 'private-location', member: false, physicalId: id, payload: null });
const assignment = (check: string, id: string): Resource => ({
  logicalId: `private-location-check-assignment#${check}#private-location-${id}`,
  type: 'private-location-check-assignment',
  member: true,
  payload: { privateLocationId: { ref: `private-location-${id}` }, checkId: { ref: check } },
});

describe.each(DB_KINDS)('projects: checkly deploy and destroy (%s)', (kind) => {
  let service: TestService;
  let locationId: string;
  let slug: string;
  const deploy = (body: unknown, query = '&scheduleOnDeploy=true') => service.api('POST', `/v1/projects/deploy?dryRun=false${query}`, body);
  const preview = (body: unknown) => service.api('POST', '/v1/projects/deploy?dryRun=true&scheduleOnDeploy=true', body);
  const checks = async () => (await service.api('GET', '/v1/checks?limit=100')).body as { id: string; name: string; checkType: string }[];

  beforeAll(async () => {
    service = await startTestService(kind);
    const created = await service.privateLocation();
    locationId = created.id;
    slug = created.slugName;
  });
  afterAll(async () => service?.close());

  const full = () =>
    bundle([
      group,
      urlMonitor('home', 'http://127.0.0.1:9/'),
      apiCheck('orders', 'backend'),
      multiStep('journey'),
      channel,
      window,
      subscription('home'),
      location(locationId),
      assignment('home', locationId),
      assignment('orders', locationId),
      assignment('journey', locationId),
    ]);

  it('deploys a project, gzip-compressed as the CLI sends it, into checks the API would have made', async () => {
    const response = await fetch(`${service.url}/v1/projects/deploy?dryRun=false&scheduleOnDeploy=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}`, 'x-checkly-account': service.accountId, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(full())),
    });
    const deployment = (await response.json()) as { id: string; status: string; result: { diff: { type: string; logicalId: string; action: string; physicalId: unknown }[] } };
    expect(response.status, JSON.stringify(deployment)).toBe(202);
    expect(deployment.status).toBe('SUCCEEDED');
    const actions = deployment.result.diff.map(({ type, logicalId, action }) => `${action} ${type} ${logicalId}`);
    expect(actions).toEqual(expect.arrayContaining(['CREATE check home', 'CREATE check orders', 'CREATE check journey', 'CREATE check-group backend', 'CREATE alert-channel ops-mail', 'CREATE maintenance-window release-window']));
    expect(actions.some((action) => action.includes('private-location '))).toBe(false);

    // The CLI follows the deployment over server-sent events to its `complete` frame.
    const events = await service.api('GET', `/v1/projects/shop/deployments/${deployment.id}/events`);
    expect(events.headers.get('content-type')).toContain('text/event-stream');
    expect(String(events.body)).toContain('event: complete\ndata: {"id":"' + deployment.id);

    const byName = new Map((await checks()).map((check) => [check.name, check]));
    const home = (await service.api('GET', `/v1/checks/${byName.get('home page')!.id}`)).body;
    expect(home).toMatchObject({ checkType: 'URL', privateLocations: [slug], tags: ['deployed'], alertChannels: { email: [{ address: 'ops@example.test' }] } });
    expect(home).not.toHaveProperty('frequencyOffset');
    const orders = (await service.api('GET', `/v1/checks/${byName.get('orders api')!.id}`)).body;
    const groupId = deployment.result.diff.find((entry) => entry.type === 'check-group')!.physicalId;
    expect(orders).toMatchObject({ checkType: 'API', groupId, setupScript: "request.headers['x-from'] = 'setup';", tearDownScript: null });
    expect(orders.environmentVariables).toEqual([{ key: 'TOKEN', value: '*****', locked: false, secret: true }]);
    const journey = (await service.api('GET', `/v1/checks/${byName.get('journey')!.id}`)).body;
    expect(journey).toMatchObject({ checkType: 'MULTI_STEP', script: MULTI_STEP_SCRIPT, privateLocations: [slug] });
    expect((await service.api('GET', `/v1/check-groups/${String(groupId)}`)).body).toMatchObject({ name: 'Backend', concurrency: 2 });
    expect((await service.api('GET', '/v1/maintenance-windows')).body).toEqual([
      expect.objectContaining({ name: 'Release', tags: ['deployed'], repeatUnit: 'WEEK', repeatInterval: 1, repeatEndsAt: null }),
    ]);
  });

  it('previews a change without making it, then updates in place and deletes what left the code', async () => {
    const before = new Map((await checks()).map((check) => [check.name, check.id]));
    const changed = bundle([
      group,
      urlMonitor('home', 'http://127.0.0.1:9/health', 'health page'),
      apiCheck('orders', 'backend'),
      channel,
      location(locationId),
      assignment('home', locationId),
      assignment('orders', locationId),
    ]);

    const dry = await preview(changed);
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    const planned = (dry.body.diff as { type: string; logicalId: string; action: string }[]).map(({ type, logicalId, action }) => `${action} ${type} ${logicalId}`);
    expect(planned).toEqual(expect.arrayContaining(['UPDATE check home', 'UPDATE check orders', 'DELETE check journey']));
    expect(new Map((await checks()).map((check) => [check.name, check.id]))).toEqual(before);

    const applied = await deploy(changed);
    expect(applied.status, JSON.stringify(applied.body)).toBe(202);
    const after = new Map((await checks()).map((check) => [check.name, check.id]));
    expect(after.get('health page')).toBe(before.get('home page'));
    expect(after.get('orders api')).toBe(before.get('orders api'));
    expect(after.has('journey')).toBe(false);
    expect((await service.api('GET', `/v1/checks/${before.get('journey')!}`)).status).toBe(404);
    // The subscription left the code: the check no longer alerts there.
    expect((await service.api('GET', `/v1/checks/${before.get('home page')!}`)).body.alertChannels.email).toEqual([]);
  });

  it('refuses constructs Outpost cannot run, naming each, and applies nothing of the deploy', async () => {
    const count = (await checks()).length;
    const refused = await service.raw(
      'POST',
      '/v1/projects/deploy?dryRun=false&scheduleOnDeploy=true',
      bundle([
        urlMonitor('extra', 'http://127.0.0.1:9/extra', 'extra page'),
        { logicalId: 'pings', type: 'check', member: true, payload: { ...common, name: 'cron', checkType: 'HEARTBEAT', heartbeat: { period: 1 } } },
        { logicalId: 'board', type: 'dashboard', member: true, payload: {} },
      ]),
      // As the CLI calls: its account header, so errors come as {statusCode, error, message}.
      { authorization: `Bearer ${service.apiKey}`, 'x-checkly-account': service.accountId },
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(refused.body.message).toBe(
      'Outpost cannot deploy these constructs; nothing was changed:\n' +
        '  - check "pings" (HEARTBEAT): Outpost has no heartbeat monitors: nothing here receives pings\n' +
        '  - dashboard "board": Outpost has no dashboards',
    );
    expect((await checks()).length).toBe(count);
  });

  it('rolls back every construct when one fails the check routes\' validation', async () => {
    const count = (await checks()).length;
    const invalid = await deploy(
      bundle([urlMonitor('first', 'http://127.0.0.1:9/first', 'first page'), { ...urlMonitor('cloud', 'http://127.0.0.1:9/c', 'cloud'), payload: { ...(urlMonitor('cloud', 'http://127.0.0.1:9/c').payload as object), name: 'cloud', locations: ['eu-west-1'] } }], 'other'),
    );
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toBe(
      'check "cloud" (URL) cannot be deployed; nothing was changed: ' +
        'Invalid body: locations not available on this installation: eu-west-1 (no data-center runners; use privateLocations)',
    );
    expect(invalid.body.attributes.code).toBe('PROJECT_CONSTRUCT_INVALID');
    expect((await checks()).length).toBe(count);
    expect((await service.api('DELETE', '/v1/projects/other?preserveResources=false&dryRun=false')).body).toEqual({});
  });

  it('destroys the project with its checks, group and channel; a second destroy finds nothing', async () => {
    const destroyed = await service.api('DELETE', '/v1/projects/shop?preserveResources=false&dryRun=false');
    expect(destroyed.status, JSON.stringify(destroyed.body)).toBe(202);
    expect(destroyed.body.status).toBe('SUCCEEDED');
    expect((await checks()).length).toBe(0);
    expect((await service.api('GET', '/v1/check-groups')).body).toEqual([]);
    expect((await service.api('GET', '/v1/alert-channels')).body).toEqual([]);
    expect((await service.api('GET', '/v1/maintenance-windows')).body).toEqual([]);
    const completion = await service.api('GET', `/v1/projects/shop/deployments/${destroyed.body.id}/completion?maxWaitSeconds=30`);
    expect(completion.body).toMatchObject({ id: destroyed.body.id, kind: 'DESTROY', status: 'SUCCEEDED' });
    const again = await service.api('DELETE', '/v1/projects/shop?preserveResources=false&dryRun=false');
    expect(again).toMatchObject({ status: 200, body: {} });
  });

  it('keeps the records of a project destroyed with preserveResources', async () => {
    expect((await deploy(bundle([urlMonitor('kept', 'http://127.0.0.1:9/kept', 'kept page')], 'keeper'))).status).toBe(202);
    const destroyed = await service.api('DELETE', '/v1/projects/keeper?preserveResources=true&dryRun=false');
    expect(destroyed.body.result.diff).toEqual([expect.objectContaining({ type: 'check', logicalId: 'kept', action: 'DETACHED' })]);
    expect((await checks()).map((check) => check.name)).toEqual(['kept page']);
  });

  it('keeps a removed group that still holds a check made outside the project, and fails the deploy naming it', async () => {
    const first = await deploy(bundle([group], 'grouped'));
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const groupId = first.body.result.diff[0].physicalId as number;
    const outsider = await service.api('POST', '/v1/checks/api', {
      name: 'outsider',
      groupId,
      privateLocations: [slug],
      request: { url: 'http://127.0.0.1:9/outsider' },
    });
    expect(outsider.status, JSON.stringify(outsider.body)).toBe(201);

    const emptied = await deploy(bundle([urlMonitor('solo', 'http://127.0.0.1:9/solo', 'solo page')], 'grouped'));
    expect(emptied.status).toBe(400);
    expect(emptied.body.message).toBe(
      `check-group "backend" cannot be deployed; nothing was changed: check group ${groupId} still holds 1 check(s) that are not part of this project; move or delete them first`,
    );
    expect((await service.api('GET', `/v1/check-groups/${groupId}`)).status).toBe(200);
    expect((await checks()).some((check) => check.name === 'solo page')).toBe(false);
    expect((await service.api('DELETE', `/v1/checks/${outsider.body.id as string}`)).status).toBe(204);
    expect((await service.api('DELETE', '/v1/projects/grouped?preserveResources=false&dryRun=false')).status).toBe(202);
    expect((await service.api('GET', `/v1/check-groups/${groupId}`)).status).toBe(404);
  });

  it('starts new checks at once, or with scheduleOnDeploy=false one frequency later', async () => {
    // A check started at once may already have run, which moves its next run a frequency on: its sessions count too.
    const firstRun = async (name: string) => {
      const [row] = await service.service.db.query<{ next_run_at: Date; runs: number }>(
        'SELECT c.next_run_at, (SELECT count(*)::int FROM check_sessions s WHERE s.check_id = c.id) AS runs FROM checks c WHERE c.name = $1',
        [name],
      );
      return { inMs: row!.next_run_at.getTime() - Date.now(), runs: row!.runs };
    };
    // On a private location, so the scheduler's first tick starts a session rather than refusing a check with nowhere to run.
    expect((await deploy(bundle([urlMonitor('now', 'http://127.0.0.1:9/now', 'at once'), location(locationId), assignment('now', locationId)], 'eager'))).status).toBe(202);
    expect((await deploy(bundle([urlMonitor('later', 'http://127.0.0.1:9/later', 'later')], 'patient'), '&scheduleOnDeploy=false')).status).toBe(202);
    const eager = await firstRun('at once');
    expect(eager.runs > 0 || eager.inMs < 60_000, JSON.stringify(eager)).toBe(true);
    const patient = await firstRun('later');
    expect(patient.runs).toBe(0);
    expect(patient.inMs).toBeGreaterThan(9 * 60_000);
    for (const project of ['eager', 'patient']) {
      expect((await service.api('DELETE', `/v1/projects/${project}?preserveResources=false&dryRun=false`)).status).toBe(202);
    }
  });

  it('detaches, rather than deletes, what left the code when a deploy preserves resources', async () => {
    const two = bundle([urlMonitor('stays', 'http://127.0.0.1:9/stays', 'stays'), urlMonitor('leaves', 'http://127.0.0.1:9/leaves', 'leaves')], 'detacher');
    expect((await deploy(two)).status).toBe(202);
    const one = await deploy(bundle([urlMonitor('stays', 'http://127.0.0.1:9/stays', 'stays')], 'detacher'), '&scheduleOnDeploy=true&preserveResources=true');
    expect(one.status).toBe(202);
    expect(one.body.result.diff).toContainEqual(expect.objectContaining({ type: 'check', logicalId: 'leaves', action: 'DETACHED' }));
    const destroyed = await service.api('DELETE', '/v1/projects/detacher?preserveResources=false&dryRun=false');
    expect(destroyed.body.result.diff.map((entry: { logicalId: string }) => entry.logicalId)).toEqual(['stays']);
    // The detached check is the account's own now: the project's destroy left it.
    const names = (await checks()).map((check) => check.name);
    expect(names).toContain('leaves');
    expect(names).not.toContain('stays');
  });

  it('deploys status pages and their services, a check opening incidents on one, updates them in place and removes them', async () => {
    const apiService: Resource = { logicalId: 'api-service', type: 'status-page-service', member: true, payload: { name: 'Public API' } };
    const webService: Resource = { logicalId: 'web-service', type: 'status-page-service', member: true, payload: { name: 'Website' } };
    // As StatusPage.synthesize() sends it: services as refs, fields left unset absent.
    const page = (name: string, services: string[], extra: Record<string, unknown> = {}): Resource => ({
      logicalId: 'public-page',
      type: 'status-page',
      member: true,
      payload: { name, url: 'shop-status', defaultTheme: 'DARK', cards: [{ name: 'Shop', services: services.map((ref) => ({ ref })) }], ...extra },
    });
    // As Check.synthesize() sends `triggerIncident: { service, severity, … }`.
    const linked: Resource = {
      ...urlMonitor('api-up', 'http://127.0.0.1:9/api', 'api up'),
      payload: { ...(urlMonitor('api-up', 'http://127.0.0.1:9/api').payload as object), name: 'api up', triggerIncident: { serviceId: { ref: 'api-service' }, severity: 'MAJOR', name: 'API down', description: 'The API fails', notifySubscribers: true } },
    };
    const pages = async () => (await service.api('GET', '/v1/status-pages')).body as { id: string; name: string; url: string; defaultTheme: string; logo: string | null; cards: { name: string; services: { id: string; name: string }[] }[] }[];
    const services = async () => (await service.api('GET', '/v1/status-pages/services')).body as { id: string; name: string }[];

    const first = await deploy(bundle([apiService, webService, linked, page('Shop status', ['api-service', 'web-service'])], 'pages'));
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const created = (first.body.result.diff as { type: string; logicalId: string; action: string; physicalId: string }[]).filter((entry) => entry.type.startsWith('status-page'));
    expect(created.map(({ action, type, logicalId }) => `${action} ${type} ${logicalId}`).sort()).toEqual([
      'CREATE status-page public-page',
      'CREATE status-page-service api-service',
      'CREATE status-page-service web-service',
    ]);
    const [shown] = await pages();
    expect(shown).toMatchObject({ name: 'Shop status', url: 'shop-status', defaultTheme: 'DARK', logo: null, cards: [{ name: 'Shop', services: [{ name: 'Public API' }, { name: 'Website' }] }] });
    const apiId = (await services()).find((entry) => entry.name === 'Public API')!.id;
    expect(created.find((entry) => entry.logicalId === 'api-service')!.physicalId).toBe(apiId);
    const check = (await checks()).find((entry) => entry.name === 'api up')!;
    expect((await service.api('GET', `/v1/checks/${check.id}`)).body.triggerIncident).toMatchObject({ serviceId: apiId, name: 'API down' });
    expect((await service.raw('GET', '/status/shop-status')).status).toBe(200);

    // Renamed service, page with a logo and one card fewer service: the same records, changed in place.
    const renamed: Resource = { ...apiService, payload: { name: 'Orders API' } };
    const second = await deploy(bundle([renamed, linked, page('Shop status (new)', ['api-service'], { logo: 'https://example.test/logo.png' })], 'pages'));
    expect(second.status, JSON.stringify(second.body)).toBe(202);
    const actions = (second.body.result.diff as { type: string; logicalId: string; action: string }[]).map(({ action, type, logicalId }) => `${action} ${type} ${logicalId}`);
    expect(actions).toEqual(expect.arrayContaining(['UPDATE status-page public-page', 'UPDATE status-page-service api-service', 'DELETE status-page-service web-service']));
    const [updated] = await pages();
    expect(updated).toMatchObject({ id: shown!.id, name: 'Shop status (new)', logo: 'https://example.test/logo.png', cards: [{ name: 'Shop', services: [{ id: apiId, name: 'Orders API' }] }] });
    expect((await services()).map((entry) => entry.name)).toEqual(['Orders API']);

    // Preview names what a removal would do, and does nothing.
    const dry = await preview(bundle([renamed, linked], 'pages'));
    expect((dry.body.diff as { type: string; action: string }[]).filter((entry) => entry.type === 'status-page')).toEqual([expect.objectContaining({ action: 'DELETE' })]);
    expect((await pages()).length).toBe(1);

    // The check no longer opens incidents, so the service may go with its page.
    const third = await deploy(bundle([urlMonitor('api-up', 'http://127.0.0.1:9/api', 'api up')], 'pages'));
    expect(third.status, JSON.stringify(third.body)).toBe(202);
    expect(await pages()).toEqual([]);
    expect(await services()).toEqual([]);
    expect((await service.raw('GET', '/status/shop-status')).status).toBe(404);
    expect((await service.api('DELETE', '/v1/projects/pages?preserveResources=false&dryRun=false')).status).toBe(202);
  });

  it('refuses what Outpost\'s status pages cannot hold, naming the construct, and rolls back an invalid page', async () => {
    const refused = await deploy(
      bundle([
        { logicalId: 'branded', type: 'status-page', member: true, payload: { name: 'Branded', url: 'branded', customDomain: 'status.example.test', cards: [] } },
        { logicalId: 'modern', type: 'status-page', member: true, payload: { name: 'Modern', url: 'modern', version: 3 } },
      ], 'refused-pages'),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe(
      'Outpost cannot deploy these constructs; nothing was changed:\n' +
        '  - status-page "branded": Outpost serves status pages at /status/{url} only and has no custom domains; leave customDomain (status.example.test) out\n' +
        '  - status-page "modern": Outpost has no v3 status pages; use StatusPage, with cards of StatusPageServices',
    );
    const invalid = await deploy(
      bundle([
        { logicalId: 'svc', type: 'status-page-service', member: true, payload: { name: 'Rolled back' } },
        { logicalId: 'plain', type: 'status-page', member: true, payload: { name: 'Plain', url: 'plain', logo: 'http://example.test/logo.png', cards: [{ name: 'All', services: [{ ref: 'svc' }] }] } },
      ], 'refused-pages'),
    );
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toMatch(/^status-page "plain" cannot be deployed; nothing was changed: Invalid body: logo/);
    expect((await service.api('GET', '/v1/status-pages/services')).body).toEqual([]);
    expect((await service.api('GET', '/v1/status-pages')).body).toEqual([]);
  });

  it('detaches a status page and its service when the project is destroyed preserving resources', async () => {
    const kept = bundle([
      { logicalId: 'kept-service', type: 'status-page-service', member: true, payload: { name: 'Kept' } },
      { logicalId: 'kept-page', type: 'status-page', member: true, payload: { name: 'Kept page', url: 'kept-page', cards: [{ name: 'All', services: [{ ref: 'kept-service' }] }] } },
    ], 'kept-pages');
    expect((await deploy(kept)).status).toBe(202);
    const destroyed = await service.api('DELETE', '/v1/projects/kept-pages?preserveResources=true&dryRun=false');
    expect(destroyed.body.result.diff.map((entry: { action: string; type: string }) => `${entry.action} ${entry.type}`).sort()).toEqual(['DETACHED status-page', 'DETACHED status-page-service']);
    const [page] = (await service.api('GET', '/v1/status-pages')).body as { id: string; cards: { services: { name: string }[] }[] }[];
    expect(page!.cards[0]!.services).toEqual([expect.objectContaining({ name: 'Kept' })]);
    expect((await service.api('DELETE', `/v1/status-pages/${page!.id}`)).status).toBe(204);
  });

  it('answers a corrupt gzip body with 400', async () => {
    const response = await fetch(`${service.url}/v1/projects/deploy?dryRun=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}`, 'x-service-account': service.accountId, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: Buffer.from('not gzip at all'),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toBe('The request body is not valid gzip');
  });
});
