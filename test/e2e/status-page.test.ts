import { randomUUID } from 'node:crypto';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { linkIn, startTestSmtp, type TestSmtp } from '../support/smtp.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A visitor's view of a public status page, in real Chromium. */
describe('public status page', () => {
  let service: TestService;
  let smtp: TestSmtp;
  let browser: Browser;
  let pageUrl: string;
  let ids: { web: string; api: string; incident: string };

  beforeAll(async () => {
    smtp = await startTestSmtp();
    service = await startTestService('pglite', { env: { SMTP_URL: smtp.url } });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const web = (await service.api('POST', '/v1/status-pages/services', { name: 'Website' })).body;
    const api = (await service.api('POST', '/v1/status-pages/services', { name: 'Public API' })).body;
    const url = `shop-${randomUUID().slice(0, 8)}`;
    await service.api('POST', '/v1/status-pages', {
      name: 'Shop <status>',
      url,
      cards: [{ name: 'Storefront', services: [web.id, api.id] }],
    });
    const incident = (
      await service.api('POST', '/v1/status-pages/incidents', {
        name: 'Checkout errors',
        severity: 'MAJOR',
        services: [api.id],
        incidentUpdates: [{ description: 'Payments fail for <b>some</b> customers' }],
      })
    ).body;
    await service.api('POST', `/v1/status-pages/incidents/${incident.id}/incident-updates`, {
      description: 'A bad deploy; rolling back',
      status: 'IDENTIFIED',
    });
    pageUrl = `${service.url}/status/${url}`;
    ids = { web: web.id, api: api.id, incident: incident.id };
  });

  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await smtp?.close();
  });

  it('shows each service\'s state, the open incident with its updates newest first, and user text as text', async () => {
    const page = await browser.newPage();
    const response = await page.goto(pageUrl);
    expect(response?.status()).toBe(200);
    expect(await page.title()).toBe('Shop <status>');
    expect(await page.locator('h1').innerText()).toBe('Shop <status>');
    expect(await page.getByRole('status').first().innerText()).toBe('An incident is open');
    expect(await page.locator(`[data-service-id="${ids.web}"]`).innerText()).toMatch(/Website\s+Operational/);
    expect(await page.locator(`[data-service-id="${ids.api}"]`).innerText()).toMatch(/Public API\s+Partial outage/);
    const incident = page.locator(`[data-incident-id="${ids.incident}"]`);
    expect(await incident.locator('h3').innerText()).toBe('Checkout errors');
    expect(await incident.locator('.update').allInnerTexts()).toEqual([
      expect.stringMatching(/^Identified: A bad deploy; rolling back/),
      expect.stringMatching(/^Investigating: Payments fail for <b>some<\/b> customers/),
    ]);
    // Typed markup is shown, never run as markup.
    expect(await page.locator('b').count()).toBe(0);
    await page.close();
  });

  it('moves a resolved incident to the past and says all is operational', async () => {
    await service.api('POST', `/v1/status-pages/incidents/${ids.incident}/incident-updates`, { description: 'Fixed', status: 'RESOLVED' });
    const page = await browser.newPage();
    await page.goto(pageUrl);
    expect(await page.getByRole('status').first().innerText()).toBe('All systems operational');
    expect(await page.locator(`[data-service-id="${ids.api}"]`).innerText()).toMatch(/Operational/);
    expect(await page.getByText('No open incidents.').count()).toBe(1);
    expect(await page.locator(`.incident.resolved[data-incident-id="${ids.incident}"]`).count()).toBe(1);
    await page.close();
  });

  it('shows open maintenance with its latest update, and drops it once completed', async () => {
    const window = (
      await service.api('POST', '/v1/maintenance-windows', {
        name: 'Database upgrade',
        tags: ['db'],
        startsAt: '2026-12-01T02:00:00Z',
        endsAt: '2026-12-01T04:00:00Z',
      })
    ).body;
    const held = (
      await service.api('POST', `/v1/maintenance-windows/${window.id}/maintenances`, { description: 'Moving to PostgreSQL 17', status: 'IN_PROGRESS' })
    ).body;
    const page = await browser.newPage();
    await page.goto(pageUrl);
    const shown = page.locator(`[data-maintenance-id="${held.id}"]`);
    expect(await shown.locator('h3').innerText()).toBe('Database upgrade');
    expect(await shown.innerText()).toMatch(/In progress/);
    expect(await shown.innerText()).toMatch(/Moving to PostgreSQL 17/);
    await service.api('POST', `/v1/maintenance-windows/${window.id}/maintenances/${held.id}/updates`, { description: 'Done', status: 'COMPLETED' });
    await page.reload();
    expect(await page.locator(`[data-maintenance-id="${held.id}"]`).count()).toBe(0);
    expect(await page.getByText('No maintenance planned.').count()).toBe(1);
    await page.close();
  });

  it('subscribes a visitor through the form and the link mailed to them', async () => {
    const page = await browser.newPage();
    await page.goto(pageUrl);
    const address = `visitor-${randomUUID().slice(0, 6)}@example.test`;
    await page.getByPlaceholder('you@example.com').fill(address);
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).toBe(`Check ${address} for a link to confirm your subscription.`);

    const mail = await smtp.waitFor(address, /Confirm your subscription/);
    await page.goto(linkIn(mail, 'http').replace('http://localhost', 'http://127.0.0.1'));
    expect(await page.locator('h1').innerText()).toBe('Subscription confirmed');
    await page.getByRole('link', { name: /Back to/ }).click();
    expect(await page.locator('h1').innerText()).toBe('Shop <status>');

    const pages = (await service.api('GET', '/v1/status-pages?limit=100')).body as { id: string; url: string }[];
    const id = pages.find((candidate) => pageUrl.endsWith(`/status/${candidate.url}`))!.id;
    const subscriptions = (await service.api('GET', `/v1/status-pages/${id}/subscriptions`)).body;
    expect(subscriptions).toEqual([expect.objectContaining({ address, status: 'VERIFIED' })]);
    await page.close();
  });

  it('answers an address that is not one on the page itself, and an unknown page with 404', async () => {
    const page = await browser.newPage();
    const response = await page.request.post(`${pageUrl}/subscribe`, { form: { email: 'not-an-address' } });
    expect(response.status()).toBe(400);
    expect(await response.text()).toContain('is not an e-mail address');
    expect((await page.goto(`${service.url}/status/no-such-page`))?.status()).toBe(404);
    expect(await page.locator('h1').innerText()).toBe('Status page not found');
    await page.close();
  });
});
