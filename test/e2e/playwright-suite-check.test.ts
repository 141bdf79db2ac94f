/**
 * A Playwright check suite the whole way: its code bundle uploaded and the
 * check created through the API, run by a real agent (engine from the npm
 * registry, npm ci, Debian's Chromium) against a loopback site, its report
 * scrubbed and stored by the service.
 */
import { chmod, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create as createTar } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';
import { runToFinal } from '../support/sessions.js';
import { startTarget, type Target } from '../support/target.js';

const FIXTURE = join(import.meta.dirname, '../fixtures/playwright-suite');
const SECRET = 'e2e-suite-token-41d8';

describe('Playwright check suites end to end', () => {
  let service: TestService;
  let agent: TestAgent;
  let target: Target;
  let slug: string;
  let work: string;
  let bundleId: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'outpost-e2e-suites-'));
    // Sandbox users reach the dependency cache through it, as through /var/cache on a host.
    await chmod(work, 0o755);
    target = await startTarget({
      '/': (_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Outpost fixture</h1>'),
      '/health': (_request, response) => response.end('ok'),
      '/status': (_request, response) => response.end('green'),
    });
    service = await startTestService(DB_KINDS[0]!);
    const location = await service.privateLocation();
    slug = location.slugName;
    const bundle = join(work, 'suite.tar.gz');
    await createTar({ gzip: true, file: bundle, cwd: FIXTURE, portable: true }, ['package.json', 'package-lock.json', 'playwright.config.js', 'tests']);
    const uploaded = await fetch(`${service.url}/v1/code-bundles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}`, 'x-service-account': service.accountId, 'content-type': 'application/gzip' },
      body: await readFile(bundle),
    });
    expect(uploaded.status).toBe(201);
    bundleId = ((await uploaded.json()) as { id: string }).id;
    agent = await startTestAgent(
      {
        apiKey: location.rawKey,
        apiUrl: service.url,
        sandbox: {
          ...defaultSandboxConfig(),
          // Sandbox users of this file's own (suites take the ids after the script slots).
          uidBase: 61400,
          directory: join(work, 'sandboxes'),
          enginesDirectory: join(tmpdir(), 'outpost-test-engines'),
          dependencyCache: join(work, 'dependency-cache'),
        },
      },
      process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {},
    );
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await target?.close();
    await rm(work, { recursive: true, force: true });
  });

  async function runSuite(extra: Record<string, unknown> = {}, variables: Record<string, unknown>[] = []): Promise<{ session: any; detail: any }> {
    const created = await service.api('POST', '/v1/checks/playwright', {
      name: 'checkout suite',
      codeBundleId: bundleId,
      activated: false,
      privateLocations: [slug],
      environmentVariables: [{ key: 'TARGET_URL', value: target.url }, { key: 'API_TOKEN', value: SECRET, secret: true }, ...variables],
      ...extra,
    });
    expect(created.status).toBe(201);
    return runToFinal(service, created.body.id, 240_000);
  }

  it('runs every test of the bundle and stores each test, the report and the traces, with no secret in them', async () => {
    const { session, detail } = await runSuite();
    expect(session.status, JSON.stringify(detail.error)).toBe('PASSED');
    expect(detail.details.tests).toHaveLength(3);
    expect(detail.details.engine).toBe('NODE_24');
    expect(detail.artifacts[0], JSON.stringify(detail.artifacts.slice(0, 2))).toMatchObject({ name: 'report.json', uploaded: true });
    expect(detail.artifacts.filter((artifact: { name: string; uploaded: boolean }) => artifact.name.endsWith('.zip') && artifact.uploaded)).toHaveLength(3);
    expect(JSON.stringify({ session, detail })).not.toContain(SECRET);
    // Artifacts sit under their job's id, beside the stored code bundles.
    const [jobDirectory] = (await readdir(service.artifactsDir)).filter((name) => name !== 'code-bundles');
    const stored = await readFile(join(service.artifactsDir, jobDirectory!, 'report.json'), 'utf8');
    expect(stored).toContain('called with token *****');
    expect(stored).not.toContain(SECRET);
  }, 300_000);

  it('fails the check when a test fails, and runs only the tagged tests', async () => {
    const { session, detail } = await runSuite({ pwTags: ['@api'] }, [{ key: 'EXPECTED_STATUS', value: 'red' }]);
    expect(session.status).toBe('FAILED');
    expect(detail.error.code).toBe('SCRIPT_FAILED');
    expect(detail.details.tests.map((test: { project: string }) => test.project)).toEqual(['api', 'api']);
  }, 300_000);
});
