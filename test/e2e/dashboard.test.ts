/**
 * The web dashboard in real Chromium, against the real service and a real
 * agent: log in with the API key, watch a failing URL check turn red after the
 * agent's run, open its result; open a multi-step check's result and download
 * its trace through the signed link. Screenshots at desktop and phone widths
 * go to test/.artifacts/ for a person to look at.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { runToFinal } from '../support/sessions.js';
import { startTestService, type TestService } from '../support/service.js';
import { respond, startTarget, type Target } from '../support/target.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = resolve(import.meta.dirname, '../.artifacts');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const AXE = resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js');

/** axe-core's WCAG 2.1 A/AA rules on the page as it is: the serious and critical findings, one line each. */
async function accessibilityProblems(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (an injected <script> it would refuse).
  await page.evaluate(await readFile(AXE, 'utf8'));
  const results = await page.evaluate<{ id: string; impact: string; help: string; nodes: { target: string[] }[] }[]>(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
  );
  return results
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

const SCRIPT = `
import { test, expect } from '@playwright/test';

test('the shop answers', async ({ request }) => {
  await test.step('open the home page', async () => {
    const response = await request.get(process.env.TARGET_URL + '/ok');
    expect(response.status()).toBe(200);
  });
  await test.step('read the price list', async () => {
    console.log('prices read');
    expect(await (await request.get(process.env.TARGET_URL + '/ok')).text()).toBe('ok');
  });
});
`;

describe('the web dashboard', () => {
  let service: TestService;
  let agent: TestAgent;
  let target: Target;
  let browser: Browser;
  let sandboxDirectory: string;
  let slug: string;
  let urlCheckId: string;
  let scriptCheckId: string;
  let scriptRun: Promise<{ session: any; detail: any }>;
  const cspViolations: string[] = [];

  beforeAll(async () => {
    // The service serves what `npm run build` bundled (npm test builds first).
    if (!existsSync(resolve(import.meta.dirname, '../../dist/dashboard/index.html'))) {
      throw new Error('dist/dashboard is missing: run `npm run build` first');
    }
    sandboxDirectory = await mkdtemp(join(tmpdir(), 'outpost-e2e-dashboard-'));
    await mkdir(ARTIFACTS, { recursive: true });
    target = await startTarget({ '/fail': respond(500, 'down'), '/ok': respond(200, 'ok') });
    service = await startTestService('pglite');
    const location = await service.privateLocation();
    slug = location.slugName;
    [agent, browser] = await Promise.all([
      startTestAgent({
        apiKey: location.rawKey,
        apiUrl: service.url,
        // Sandbox users of this file's own, so no other test's clean-up can touch its processes.
        sandbox: { ...defaultSandboxConfig(), uidBase: 64600, uidCount: 50, directory: sandboxDirectory },
      }),
      chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      }),
    ]);
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');

    const urlCheck = await service.api('POST', '/v1/checks/url', {
      name: 'Checkout API',
      activated: false,
      frequency: 5,
      tags: ['shop'],
      privateLocations: [slug],
      request: { url: `${target.url}/fail`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    });
    expect(urlCheck.status).toBe(201);
    urlCheckId = urlCheck.body.id;
    const scriptCheck = await service.api('POST', '/v1/checks/multistep', {
      name: 'Shop journey',
      activated: false,
      tags: ['shop', 'journeys'],
      privateLocations: [slug],
      runtimeId: '2026.04',
      script: SCRIPT,
      dependencies: [],
      environmentVariables: [{ key: 'TARGET_URL', value: target.url }],
    });
    expect(scriptCheck.status).toBe(201);
    scriptCheckId = scriptCheck.body.id;
    // The script run takes a few seconds in its sandbox: started now, looked at later.
    scriptRun = runToFinal(service, scriptCheckId, 45_000);
    scriptRun.catch(() => undefined);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await agent?.stop();
    await service?.close();
    await target?.close();
    if (sandboxDirectory) await rm(sandboxDirectory, { recursive: true, force: true });
  });

  async function openPage(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport, acceptDownloads: true, reducedMotion: 'reduce' });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    return { context, page };
  }

  async function logIn(page: Page, audit = false): Promise<void> {
    await page.goto(`${service.url}/`);
    await page.getByLabel('API key').waitFor();
    if (audit) expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel('Account id').fill(service.accountId);
    await page.getByLabel('API key').fill(service.apiKey);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Checks' }).waitFor();
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });

  it('serves the page at / with its assets, a self-only CSP and cache headers, and the API beside it', async () => {
    const root = await fetch(`${service.url}/`);
    expect(root.status).toBe(200);
    expect(root.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(root.headers.get('cache-control')).toBe('no-cache');
    const csp = root.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe|https?:|\*/);
    const html = await root.text();
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.some((path) => path.endsWith('.js'))).toBe(true);
    expect(assets.some((path) => path.endsWith('.css'))).toBe(true);
    for (const path of assets) {
      const asset = await fetch(`${service.url}${path}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(asset.status, path).toBe(200);
      expect(asset.headers.get('content-type'), path).toBe(path.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(asset.headers.get('cache-control'), path).toBe('public, max-age=31536000, immutable');
      expect(asset.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect((await asset.arrayBuffer()).byteLength, path).toBeGreaterThan(100);
    }
    const missing = await fetch(`${service.url}/assets/nothing-here.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ statusCode: 404 });
    // The API is untouched: its routes, its authentication and its JSON 404.
    expect((await service.api('GET', '/v1/checks')).status).toBe(200);
    expect((await service.raw('GET', '/v1/checks')).status).toBe(401);
    expect((await service.raw('GET', '/no-such-route')).body).toMatchObject({ statusCode: 404 });
  });

  it('logs in with the API key, shows the failing check turn red after the agent ran it, and opens its result', async () => {
    const { context, page } = await openPage(DESKTOP);
    await logIn(page, true);
    // The key lives in this tab's sessionStorage only: no cookie, nothing in the address.
    expect(page.url()).not.toContain(service.apiKey);
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate<string>('JSON.stringify(sessionStorage)')).toContain(service.apiKey);
    expect(await page.evaluate<string>('JSON.stringify(localStorage)')).not.toContain(service.apiKey);

    const row = page.locator(`tr[data-check-id="${urlCheckId}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-outcome')).toBe('none');
    expect(await row.innerText()).toContain('No runs yet');
    expect(await row.innerText()).toContain(slug);

    const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [urlCheckId] } });
    expect(triggered.status).toBe(201);
    await page.locator(`tr[data-check-id="${urlCheckId}"][data-outcome="failing"]`).waitFor({ timeout: 20_000 });
    expect(await row.locator('.badge').first().innerText()).toContain('Failing');
    const red = await row.locator('.badge-failing').first().evaluate((element) => (globalThis as any).getComputedStyle(element).color as string);
    expect(red).toBe('rgb(179, 38, 30)');
    // Filters: by status, then by type; the failing check stays, the script check goes.
    await page.getByLabel('Status').selectOption('failing');
    await page.getByLabel('Type').selectOption('URL');
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(page.url()).not.toContain(service.apiKey);
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Type').selectOption('');
    await shot(page, 'checks-desktop');
    expect(await accessibilityProblems(page)).toEqual([]);

    await row.getByRole('link', { name: 'Checkout API' }).click();
    await page.getByRole('heading', { level: 1, name: 'Checkout API' }).waitFor();
    const resultRow = page.locator('table.results tbody tr[data-outcome="failing"]').first();
    await resultRow.waitFor({ timeout: 15_000 });
    expect(await resultRow.innerText()).toContain('HTTP 500');
    expect(await page.locator('.status-bar .status-failing').count()).toBeGreaterThan(0);
    await page.locator('.chart-figure').or(page.getByText('No measured runs')).first().waitFor();
    await shot(page, 'check-desktop');
    expect(await accessibilityProblems(page)).toEqual([]);

    await resultRow.getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: `Checkout API at ${slug}` }).waitFor();
    expect(await page.getByRole('region', { name: 'Assertions' }).innerText()).toMatch(/Failed[\s\S]*STATUS_CODE[\s\S]*EQUALS[\s\S]*200[\s\S]*500/);
    expect(await page.locator('.facts').innerText()).toContain('500');
    expect(await page.getByRole('heading', { name: 'Timings' }).count()).toBe(1);
    await shot(page, 'result-desktop');
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByRole('link', { name: 'Private locations' }).click();
    const card = page.locator(`section[data-location="${slug}"]`);
    await card.waitFor();
    expect(await card.innerText()).toContain('1 agent connected');
    expect(await card.innerText()).toMatch(/Queue depth\s*\d+ waiting/);
    await shot(page, 'locations-desktop');
    await context.close();
  }, 40_000);

  it("opens a multi-step result with its steps and logs, and downloads its trace through the signed link", async () => {
    const { session } = await scriptRun;
    expect(session.status).toBe('PASSED');
    const resultId = session.results[0].checkResultId as string;

    for (const [viewport, suffix] of [
      [DESKTOP, 'desktop'],
      [PHONE, 'phone'],
    ] as const) {
      const { context, page } = await openPage(viewport);
      await logIn(page);
      if (suffix === 'phone') {
        await page.locator(`tr[data-check-id="${urlCheckId}"][data-outcome="failing"]`).waitFor({ timeout: 10_000 });
        await shot(page, 'checks-phone');
      }
      await page.locator(`tr[data-check-id="${scriptCheckId}"]`).getByRole('link', { name: 'Shop journey' }).click();
      await page.getByRole('heading', { level: 1, name: 'Shop journey' }).waitFor();
      const link = page.locator(`table.results tr[data-result-id="${resultId}"] a`);
      await link.waitFor({ timeout: 15_000 });
      if (suffix === 'phone') await shot(page, 'check-phone');
      await link.click();
      await page.getByRole('heading', { name: 'Steps' }).waitFor();
      const steps = await page.locator('ol.steps').innerText();
      expect(steps).toMatch(/passed\s*open the home page[\s\S]*passed\s*read the price list/);
      expect(await page.locator('.logs').innerText()).toContain('prices read');

      const viewer = page.getByRole('link', { name: /Open trace in Trace Viewer/ });
      const viewerHref = (await viewer.getAttribute('href'))!;
      expect(viewerHref.startsWith('https://trace.playwright.dev/?trace=')).toBe(true);
      const traceLink = new URL(decodeURIComponent(viewerHref.slice('https://trace.playwright.dev/?trace='.length)));
      expect(traceLink.pathname).toMatch(/^\/v1\/artifacts\/[0-9a-f-]{36}$/);
      expect(traceLink.searchParams.get('signature')).toBeTruthy();
      expect(viewerHref).not.toContain(service.apiKey);

      await shot(page, `multistep-result-${suffix}`);
      expect(await accessibilityProblems(page)).toEqual([]);
      if (suffix === 'desktop') {
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download trace.zip' }).click()]);
        expect(download.suggestedFilename()).toBe('trace.zip');
        const bytes = await readFile(await download.path());
        expect(bytes.length).toBeGreaterThan(100);
        expect([...bytes.subarray(0, 4)]).toEqual([0x50, 0x4b, 0x03, 0x04]);
      } else {
        // Nothing wider than the phone's screen: no sideways scrolling.
        const wide = await page.evaluate<string[]>(
          `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > ${PHONE.width} + 0.5).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`,
        );
        expect(wide).toEqual([]);
        expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
      }
      await context.close();
    }
    expect(cspViolations).toEqual([]);
  }, 60_000);
});
