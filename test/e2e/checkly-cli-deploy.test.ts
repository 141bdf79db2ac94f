/**
 * `checkly deploy` and `checkly destroy`, the public CLI's own processes,
 * against a real service: a project of a URL monitor, an API check and a
 * multi-step check on a private location whose real agent runs them against
 * a loopback site, and a status page; deployed, changed (one check updated in place, one
 * removed), previewed and destroyed.
 */
import { mkdir, mkdtemp, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { checklyCli, type CheckCli } from '../support/checkly-cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { runToFinal } from '../support/sessions.js';
import { respond, startTarget, type Target } from '../support/target.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CLI_MS = 90_000;

interface CheckRead {
  id: string;
  name: string;
  checkType: string;
  privateLocations: string[];
  request?: { url: string };
}

describe('checkly deploy and destroy against Outpost', () => {
  let service: TestService;
  let agent: TestAgent;
  let target: Target;
  let home: string;
  let project: string;
  let sandboxDirectory: string;
  let slug: string;
  let cli: CheckCli;

  const checks = async () => (await service.api('GET', '/v1/checks?limit=100')).body as CheckRead[];

  async function writeProject(files: Record<string, string>) {
    for (const [name, content] of Object.entries(files)) await writeFile(join(project, name), content);
  }

  beforeAll(async () => {
    target = await startTarget({
      '/': respond(200, 'home'),
      '/health': respond(200, 'healthy'),
      '/api/orders': (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"orders":[]}'),
    });
    service = await startTestService('pglite');
    const location = await service.privateLocation();
    slug = location.slugName;
    sandboxDirectory = await mkdtemp(join(tmpdir(), 'outpost-e2e-sandboxes-'));
    agent = await startTestAgent({
      apiKey: location.rawKey,
      apiUrl: service.url,
      sandbox: { ...defaultSandboxConfig(), uidBase: 65300, directory: sandboxDirectory },
    });
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');

    home = await mkdtemp(join(tmpdir(), 'outpost-checkly-deploy-'));
    project = join(home, 'project');
    await mkdir(join(project, 'node_modules'), { recursive: true });
    // The project's files import `checkly`, as a project with the CLI installed would.
    await symlink(join(ROOT, 'node_modules', 'checkly'), join(project, 'node_modules', 'checkly'), 'dir');
    await writeProject({
      'package.json': JSON.stringify({ name: 'outpost-deploy-e2e', private: true, type: 'module' }),
      'checkly.config.ts': `import { defineConfig } from 'checkly'
export default defineConfig({
  projectName: 'Outpost e2e',
  logicalId: 'outpost-e2e',
  checks: {
    locations: [],
    privateLocations: ['${slug}'],
    frequency: 10,
    runtimeId: '2026.04',
    checkMatch: '**/*.check.ts',
  },
})
`,
      'journey.spec.ts': `import { test, expect } from '@playwright/test'
test('journey', async ({ request }) => {
  await test.step('open the shop', async () => {
    const response = await request.get('${target.url}/')
    expect(response.status()).toBe(200)
  })
})
`,
      'home.check.ts': homeCheck(`${target.url}/`, 'Home page'),
      // A group and an alert channel of its own: both go when the file does.
      'orders.check.ts': `import { ApiCheck, AssertionBuilder, CheckGroupV2, EmailAlertChannel } from 'checkly/constructs'
const ops = new EmailAlertChannel('ops-mail', { address: 'ops@example.test' })
const backend = new CheckGroupV2('backend', { name: 'Backend' })
new ApiCheck('orders-api', {
  name: 'Orders API',
  group: backend,
  alertChannels: [ops],
  request: { method: 'GET', url: '${target.url}/api/orders', assertions: [AssertionBuilder.statusCode().equals(200)] },
})
`,
      'journey.check.ts': `import { MultiStepCheck } from 'checkly/constructs'
new MultiStepCheck('journey', { name: 'Shop journey', code: { entrypoint: './journey.spec.ts' } })
`,
      // A status page and the service it shows: Outpost serves it at /status/shop-status.
      'status.check.ts': `import { StatusPage, StatusPageService } from 'checkly/constructs'
const shop = new StatusPageService('shop-service', { name: 'Shop' })
new StatusPage('shop-status', { name: 'Shop status', url: 'shop-status', defaultTheme: 'DARK', cards: [{ name: 'Storefront', services: [shop] }] })
`,
    });
    cli = checklyCli(() => service, home, project);
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await target?.close();
    if (home) await rm(home, { recursive: true, force: true });
    if (sandboxDirectory) await rm(sandboxDirectory, { recursive: true, force: true });
  });

  function homeCheck(url: string, name: string) {
    return `import { UrlMonitor, UrlAssertionBuilder } from 'checkly/constructs'
new UrlMonitor('home', {
  name: '${name}',
  request: { url: '${url}', assertions: [UrlAssertionBuilder.statusCode().equals(200)] },
})
`;
  }

  it('deploys the project: its checks exist on the private location and run there', async () => {
    const output = await cli.ok(['deploy', '--force', '--output'], { timeoutMs: CLI_MS });
    expect(output).toContain('Successfully deployed project "Outpost e2e" to account');
    expect(output).toMatch(
      /Create:\n\s+EmailAlertChannel: ops-mail\n\s+UrlMonitor: home\n\s+MultiStepCheck: journey\n\s+ApiCheck: orders-api\n\s+CheckGroupV2: backend\n\s+StatusPage: shop-status\n\s+StatusPageService: shop-service\n/,
    );
    const pages = (await service.api('GET', '/v1/status-pages')).body as unknown[];
    expect(pages).toEqual([
      expect.objectContaining({ name: 'Shop status', url: 'shop-status', defaultTheme: 'DARK', cards: [{ name: 'Storefront', services: [expect.objectContaining({ name: 'Shop' })] }] }),
    ]);

    const deployed = await checks();
    expect(deployed.map((check) => [check.name, check.checkType]).sort()).toEqual([
      ['Home page', 'URL'],
      ['Orders API', 'API'],
      ['Shop journey', 'MULTI_STEP'],
    ]);
    for (const check of deployed) expect(check.privateLocations, check.name).toEqual([slug]);
    const orders = (await service.api('GET', `/v1/checks/${deployed.find((check) => check.name === 'Orders API')!.id}`)).body;
    expect(orders.alertChannels.email).toEqual([{ address: 'ops@example.test' }]);
    expect((await service.api('GET', `/v1/check-groups/${String(orders.groupId)}`)).body).toMatchObject({ name: 'Backend' });

    for (const check of deployed) {
      const { session, detail } = await runToFinal(service, check.id, 120_000);
      expect(session.status, `${check.name}: ${JSON.stringify(detail.error)}`).toBe('PASSED');
    }
    expect(target.hits.get('/api/orders')).toBeGreaterThan(0);
  }, 300_000);

  it('previews a change, then deploys it: one check updated in place, one removed', async () => {
    const before = new Map((await checks()).map((check) => [check.name, check.id]));
    await writeProject({ 'home.check.ts': homeCheck(`${target.url}/health`, 'Health page') });
    await unlink(join(project, 'orders.check.ts'));

    const preview = await cli.ok(['deploy', '--preview'], { timeoutMs: CLI_MS });
    expect(preview).toMatch(/Delete:\n\s+AlertChannel: ops-mail\n\s+Check: orders-api\n\s+CheckGroup: backend\n/);
    expect(preview).toMatch(/Update and Unchanged:\n\s+UrlMonitor: home\n\s+MultiStepCheck: journey\n/);
    expect(preview).not.toContain('Successfully deployed');
    // A preview changes nothing.
    expect((await checks()).map((check) => check.name).sort()).toEqual(['Home page', 'Orders API', 'Shop journey']);

    const output = await cli.ok(['deploy', '--force'], { timeoutMs: CLI_MS });
    expect(output).toContain('Successfully deployed project "Outpost e2e" to account');
    const after = await checks();
    expect(after.map((check) => check.name).sort()).toEqual(['Health page', 'Shop journey']);
    const health = after.find((check) => check.name === 'Health page')!;
    expect(health.id).toBe(before.get('Home page'));
    expect(health.request?.url).toBe(`${target.url}/health`);
    expect((await service.api('GET', `/v1/checks/${before.get('Orders API')!}`)).status).toBe(404);
    expect((await service.api('GET', '/v1/check-groups')).body).toEqual([]);
    expect((await service.api('GET', '/v1/alert-channels')).body).toEqual([]);

    const { session } = await runToFinal(service, health.id, 60_000);
    expect(session.status).toBe('PASSED');
    expect(target.hits.get('/health')).toBeGreaterThan(0);
  }, 240_000);

  it('refuses a heartbeat monitor by name and changes nothing', async () => {
    await writeProject({
      'heartbeat.check.ts': `import { HeartbeatMonitor } from 'checkly/constructs'
new HeartbeatMonitor('nightly-backup', { name: 'Nightly backup', period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' })
`,
    });
    const refused = await cli.run(['deploy', '--force'], { timeoutMs: CLI_MS });
    await unlink(join(project, 'heartbeat.check.ts'));
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain('check "nightly-backup" (HEARTBEAT): Outpost has no heartbeat monitors');
    expect((await checks()).map((check) => check.name).sort()).toEqual(['Health page', 'Shop journey']);
  }, 120_000);

  it('destroys the project and everything it made', async () => {
    const output = await cli.ok(['destroy', '--force'], { timeoutMs: CLI_MS });
    expect(output).toContain('All resources associated with project "Outpost e2e" have been successfully deleted.');
    expect(await checks()).toEqual([]);
    expect((await service.api('GET', '/v1/status-pages')).body).toEqual([]);
    expect((await service.api('GET', '/v1/status-pages/services')).body).toEqual([]);
  }, 120_000);
});
