import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daysAgo, linkedCheck, storeRuns, type StoredRun } from '../support/check-results.js';
import { startTestService, type TestService } from '../support/service.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots for a person to look at; git-ignored. */
const ARTIFACTS = join(import.meta.dirname, '..', '.artifacts');
const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="32" viewBox="0 0 120 32"><rect width="32" height="32" rx="6" fill="#ffb000"/><text x="40" y="23" font-family="sans-serif" font-size="18" fill="#fff">Shop</text></svg>`;

/** The browser globals these tests read in the page (the project compiles without the DOM library). */
interface InPage {
  getComputedStyle(element: unknown): { backgroundColor: string; display: string };
  document: { documentElement: { scrollWidth: number }; body: { scrollHeight: number } };
  scrollTo(x: number, y: number): void;
  scrollY: number;
}

/** History of a service: two runs a day from `since` days ago, all passing but on the days given. */
function history(since: number, bad: Record<number, number>): StoredRun[] {
  const runs: StoredRun[] = [];
  for (let day = since; day >= 0; day -= 1) {
    const failed = bad[day] ?? 0;
    const count = failed > 0 ? 10 : 2;
    for (let i = 0; i < count; i += 1) runs.push({ at: daysAgo(day, i), failed: i < failed });
  }
  return runs;
}

/** A visitor's view of a page with uptime bars, local times and refreshes, in real Chromium. */
describe('public status page: uptime, local times, refresh, branding', () => {
  let service: TestService;
  let browser: Browser;
  let pageUrl: string;
  let ids: { web: string; api: string; docs: string; incident: string };

  beforeAll(async () => {
    service = await startTestService('pglite');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    const svc = async (name: string) => (await service.api('POST', '/v1/status-pages/services', { name })).body.id as string;
    const [web, api, docs] = [await svc('Website'), await svc('Public API'), await svc('Documentation')];
    const url = `shop-${randomUUID().slice(0, 8)}`;
    const created = await service.api('POST', '/v1/status-pages', {
      name: 'Shop status',
      url,
      cards: [
        { name: 'Storefront', services: [web, api] },
        { name: 'Help', services: [docs] },
      ],
      logo: 'https://cdn.shop.test/logo.svg',
      redirectTo: 'https://shop.test/',
      defaultTheme: 'LIGHT',
      themeColors: { light: { headerBackgroundColor: '#0b3d91', headerFontColor: '#ffffff' } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await storeRuns(service, await linkedCheck(service, web), history(69, { 40: 1, 12: 3 }));
    await storeRuns(service, await linkedCheck(service, api), history(89, { 75: 10, 30: 2, 2: 6, 1: 1 }));
    const incident = (
      await service.api('POST', '/v1/status-pages/incidents', {
        name: 'Checkout errors',
        severity: 'MAJOR',
        services: [api],
        incidentUpdates: [{ description: 'Payments fail for some customers', publicIncidentUpdateDate: '2026-01-15T15:30:00Z' }],
      })
    ).body;
    pageUrl = `${service.url}/status/${url}`;
    ids = { web, api, docs, incident: incident.id };
  });

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  async function open(options: { width: number; height: number; javaScript?: boolean }): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({
      viewport: { width: options.width, height: options.height },
      timezoneId: 'Asia/Kolkata',
      locale: 'en-GB',
      javaScriptEnabled: options.javaScript ?? true,
      isMobile: options.width < 600,
      deviceScaleFactor: options.width < 600 ? 2 : 1,
    });
    await context.route('https://cdn.shop.test/**', (route) => route.fulfill({ contentType: 'image/svg+xml', body: LOGO }));
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    return { page, problems };
  }

  it('draws each measured service\'s 90 days, coloured by availability, with text for every day', async () => {
    const { page, problems } = await open({ width: 1280, height: 900 });
    expect((await page.goto(pageUrl))?.status()).toBe(200);
    const web = page.locator(`[data-service-id="${ids.web}"]`);
    const days = web.locator('.bar .day');
    expect(await days.count()).toBe(90);
    // 70 days of history: the first 20 days have no data.
    expect(await days.nth(0).getAttribute('title')).toMatch(/: no data$/);
    expect(await days.nth(19).getAttribute('class')).toBe('day b-none');
    expect(await days.nth(20).getAttribute('class')).toBe('day b-0');
    // 12 days ago 7 of 10 runs passed; 40 days ago 9 of 10.
    const low = days.nth(89 - 12);
    expect(await low.getAttribute('title')).toMatch(/^\d+ \w{3} \d{4}: 70\.00 % of 10 runs passed$/);
    expect(await low.getAttribute('class')).toBe('day b-4');
    expect(await days.nth(89 - 40).getAttribute('class')).toBe('day b-3');
    const colour = (index: number) => days.nth(index).evaluate((element) => (globalThis as unknown as InPage).getComputedStyle(element).backgroundColor);
    expect(await colour(89)).toBe('rgb(45, 164, 78)');
    expect(await colour(89 - 12)).toBe('rgb(207, 34, 46)');
    expect(await colour(0)).not.toBe(await colour(89));
    const bar = web.getByRole('img');
    expect(await bar.getAttribute('aria-label')).toMatch(
      /^Uptime over the last 90 days: 97\.43 %\. Days below 100 %: .+ 90\.00 %, .+ 70\.00 %\. 20 days without data\.$/,
    );
    expect(await web.locator('.legend').innerText()).toMatch(/90 days ago\s+97\.43 % uptime\s+Today/);
    expect(await page.locator(`[data-service-id="${ids.docs}"] .bar`).count()).toBe(0);
    expect(await page.locator(`[data-service-id="${ids.api}"] .state`).innerText()).toBe('Partial outage');
    expect(await page.locator('img.logo').evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth)).toBe(120);
    expect(problems).toEqual([]);

    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'status-page-desktop.png'), fullPage: true });
    await page.context().close();
  });

  it('shows times in the visitor\'s zone, and in UTC to a visitor without JavaScript', async () => {
    const { page } = await open({ width: 1280, height: 900 });
    await page.goto(pageUrl);
    const time = page.locator(`[data-incident-id="${ids.incident}"] time`);
    // 15:30 UTC is 21:00 in Kolkata.
    expect(await time.innerText()).toMatch(/^15 Jan 2026, 21:00 (IST|GMT\+5:30)$/);
    expect(await time.getAttribute('title')).toBe('15 Jan 2026, 15:30 UTC');
    await page.context().close();

    const plain = await open({ width: 1280, height: 900, javaScript: false });
    await plain.page.goto(pageUrl);
    expect(await plain.page.locator(`[data-incident-id="${ids.incident}"] time`).innerText()).toBe('15 Jan 2026, 15:30 UTC');
    await plain.page.context().close();
  });

  it('fits a phone: the last 30 days, nothing wider than the screen', async () => {
    const { page, problems } = await open({ width: 390, height: 844 });
    await page.goto(pageUrl);
    const days = page.locator(`[data-service-id="${ids.web}"] .bar .day`);
    expect(await days.evaluateAll((all) => all.filter((day) => (globalThis as unknown as InPage).getComputedStyle(day).display !== 'none').length)).toBe(30);
    expect(await page.locator(`[data-service-id="${ids.web}"] .legend`).innerText()).toMatch(/^30 days ago/);
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(problems).toEqual([]);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'status-page-phone.png'), fullPage: true });
    await page.context().close();
  });

  it('refreshes itself every 60 s in place, keeping what the visitor scrolled to in view', async () => {
    const { page, problems } = await open({ width: 1280, height: 600 });
    await page.clock.install();
    await page.goto(pageUrl);
    await page.evaluate(() => (globalThis as unknown as InPage).scrollTo(0, (globalThis as unknown as InPage).document.body.scrollHeight));
    const formTop = () => page.locator('form').evaluate((form) => Math.round(form.getBoundingClientRect().top));
    const before = await formTop();
    expect(await page.evaluate(() => (globalThis as unknown as InPage).scrollY)).toBeGreaterThan(0);
    const fresh = (
      await service.api('POST', '/v1/status-pages/incidents', {
        name: 'Search is slow',
        severity: 'MINOR',
        services: [ids.web],
        incidentUpdates: [{ description: 'Looking into it' }],
      })
    ).body;
    expect(await page.locator(`[data-incident-id="${fresh.id}"]`).count()).toBe(0);
    await page.clock.fastForward(61_000);
    await page.locator(`[data-incident-id="${fresh.id}"]`).waitFor({ timeout: 5000 });
    expect(await page.locator(`[data-service-id="${ids.web}"] .state`).innerText()).toBe('Degraded performance');
    // Times in the new content are the visitor's too.
    expect(await page.locator(`[data-incident-id="${ids.incident}"] time`).innerText()).toMatch(/21:00/);
    // No jump to the top: what the visitor looked at stays where it was, though an incident was added above it.
    expect(await formTop()).toBe(before);
    expect(problems, problems.join('\n')).toEqual([]);
    await page.context().close();
  });
});
