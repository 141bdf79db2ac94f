/**
 * A browser check the whole way: created through the API
 * (`POST /v1/checks/browser`), run by a real agent in Debian's Chromium in a
 * sandbox of runtime 2026.04 against a loopback shop, its steps, what the
 * pages saw and its artifacts reported, the stored trace free of the secret.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { SCRUB_MARKER } from '../../src/scrub/index.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { DB_KINDS } from '../support/databases.js';
import { secretSpellings, spellingsFound } from '../support/secret-spellings.js';
import { startTestService, type TestService } from '../support/service.js';
import { runToFinal } from '../support/sessions.js';
import { CONSOLE_ERROR, startShopApp, type ShopApp } from '../support/shop-app.js';
import { readZip } from '../support/zip.js';

const PASSWORD = 'e2e-shop-Pa55-8812';
const CHROMIUM = '/usr/bin/chromium';

describe.skipIf(!existsSync(CHROMIUM))('browser checks end to end', () => {
  let service: TestService;
  let agent: TestAgent;
  let app: ShopApp;
  let slug: string;
  let sandboxDirectory: string;

  beforeAll(async () => {
    sandboxDirectory = await mkdtemp(join(tmpdir(), 'outpost-e2e-browser-'));
    app = await startShopApp({ password: PASSWORD });
    service = await startTestService(DB_KINDS[0]!);
    const location = await service.privateLocation();
    slug = location.slugName;
    agent = await startTestAgent({
      apiKey: location.rawKey,
      apiUrl: service.url,
      // Sandbox users of this file's own, so no other test's clean-up can touch its processes.
      sandbox: { ...defaultSandboxConfig(), uidBase: 61800, directory: sandboxDirectory, chromiumPath: CHROMIUM },
    });
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');
  });

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await app?.close();
    if (sandboxDirectory) await rm(sandboxDirectory, { recursive: true, force: true });
  });

  it('runs the script in Chromium and reports its steps, what the pages saw and its scrubbed artifacts', { timeout: 90_000 }, async () => {
    const script = await readFile(new URL('../fixtures/browser/log-in.spec.js', import.meta.url), 'utf8');
    const created = await service.api('POST', '/v1/checks/browser', {
      name: 'shop log-in',
      activated: false,
      privateLocations: [slug],
      runtimeId: '2026.04',
      script,
      environmentVariables: [
        { key: 'TARGET_URL', value: app.url },
        { key: 'SHOP_PASSWORD', value: PASSWORD, secret: true },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { session, detail } = await runToFinal(service, created.body.id, 80_000);
    expect(session.status, JSON.stringify(detail.error)).toBe('PASSED');
    expect(spellingsFound(JSON.stringify({ session, detail }), secretSpellings(PASSWORD))).toEqual([]);
    expect(detail.details.steps.map((step: { name: string }) => step.name)).toEqual(['open the home page', 'go to the log-in form', 'log in']);
    expect(detail.details.consoleErrors).toEqual(expect.arrayContaining([expect.objectContaining({ text: CONSOLE_ERROR })]));
    expect(detail.details.failedRequests).toEqual(expect.arrayContaining([expect.objectContaining({ status: 404 })]));
    expect(detail.details.webVitals.length).toBe(1);
    expect(detail.logs.map((line: { message: string }) => line.message)).toContain(`logged in with ${SCRUB_MARKER}`);
    const names: string[] = detail.artifacts.map((artifact: { name: string }) => artifact.name);
    expect(names).toContain('trace.zip');
    expect(names.some((name) => /^account-\d+\.png$/.test(name))).toBe(true);

    const [jobDirectory] = await readdir(service.artifactsDir);
    const entries = await readZip(join(service.artifactsDir, jobDirectory!, 'trace.zip'));
    expect(entries.length).toBeGreaterThan(1);
    const leaks = entries.flatMap((entry) => spellingsFound(entry.data, secretSpellings(PASSWORD)).map((found) => `${entry.name}: ${found}`));
    expect(leaks).toEqual([]);
  });
});
