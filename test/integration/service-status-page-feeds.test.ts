import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../support/databases.js';
import { daysAgo, linkedCheck, storeRuns } from '../support/check-results.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * What a page tells machines (summary, Atom, RSS) and the uptime bar it
 * draws from the results of the checks linked to each service.
 */
describe.each(DB_KINDS)('status page summary, feeds and uptime (%s)', (kind) => {
  let service: TestService;
  let address: string;
  let ids: { web: string; api: string; docs: string; other: string; open: string; resolved: string; foreign: string };

  beforeAll(async () => {
    service = await startTestService(kind);
    const svc = async (name: string) => (await service.api('POST', '/v1/status-pages/services', { name })).body.id as string;
    const [web, api, docs, other] = [await svc('Website'), await svc('Public API'), await svc('Docs'), await svc('Elsewhere')];
    address = `feeds-${randomUUID().slice(0, 8)}`;
    await service.api('POST', '/v1/status-pages', {
      name: 'Shop & Co',
      url: address,
      cards: [
        { name: 'Storefront', services: [web, api] },
        { name: 'Help', services: [docs, web] },
      ],
    });

    // Website: 20 measured runs, 18 passed (90 %), over four days, plus runs that measure nothing or are too old.
    const website = await linkedCheck(service, web);
    await storeRuns(service, website, [
      ...[0, 1, 2, 3].map((i) => ({ at: daysAgo(2, i), failed: i === 0 })), // 75 %
      ...Array.from({ length: 10 }, (_, i) => ({ at: daysAgo(1, i), failed: i === 3 })), // 90 %
      ...[0, 1, 2].map((i) => ({ at: daysAgo(5, i) })),
      { at: daysAgo(5, 3), degraded: true }, // degraded is up: 100 %
      { at: daysAgo(0), failed: false },
      { at: daysAgo(0, 1), failed: false },
      { at: daysAgo(3), cancelled: true }, // measured nothing: a day without data
      { at: daysAgo(100), failed: true }, // before the bar
    ]);
    // Docs: linked through a check tagged like an open maintenance window.
    await linkedCheck(service, docs, { tags: ['docs-site'] });
    await service.api('POST', '/v1/maintenance-windows', {
      name: 'Docs move',
      tags: ['docs-site'],
      startsAt: new Date(Date.now() - 3600_000).toISOString(),
      endsAt: new Date(Date.now() + 3600_000).toISOString(),
    });

    const incident = async (services: string[], severity: string, description: string) =>
      (
        await service.api('POST', '/v1/status-pages/incidents', {
          name: 'Checkout <errors> & "timeouts"',
          severity,
          services,
          incidentUpdates: [{ description, publicIncidentUpdateDate: '2026-01-15T15:30:00Z' }],
        })
      ).body.id as string;
    const resolved = await incident([web], 'MINOR', 'Slow pages');
    await service.api('POST', `/v1/status-pages/incidents/${resolved}/incident-updates`, { description: 'Fixed', status: 'RESOLVED' });
    const open = await incident([api], 'MAJOR', 'Payments fail for <b>some</b> customers\u0001');
    await service.api('POST', `/v1/status-pages/incidents/${open}/incident-updates`, { description: 'A bad deploy', status: 'IDENTIFIED' });
    const foreign = await incident([other], 'CRITICAL', 'Not on this page');
    ids = { web, api, docs, other, open, resolved, foreign };
  });
  afterAll(async () => service?.close());

  const get = (path: string) => fetch(`${service.url}/status/${address}${path}`);

  it('summarises the page as summary.json, in the comparable product\'s shape, at both addresses', async () => {
    const answer = await get('/summary.json');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    const summary = (await answer.json()) as Record<string, any>;
    expect(summary.page).toEqual({
      id: expect.any(String),
      name: 'Shop & Co',
      url: expect.stringMatching(new RegExp(`^http.*/status/${address}$`)),
      time_zone: 'Etc/UTC',
      updated_at: expect.any(String),
    });
    expect(summary.status).toEqual({ indicator: 'major', description: 'Partial system outage' });
    expect(summary.components).toEqual([
      { id: 'card-1', name: 'Storefront', status: 'partial_outage', position: 1, group: true, group_id: null, components: [ids.web, ids.api] },
      {
        id: ids.web,
        name: 'Website',
        status: 'operational',
        position: 2,
        group: false,
        group_id: 'card-1',
        uptime: { days: 90, percent: 90 },
      },
      { id: ids.api, name: 'Public API', status: 'partial_outage', position: 3, group: false, group_id: 'card-1', uptime: null },
      // The website is in both cards; it is listed once, in the first.
      { id: 'card-2', name: 'Help', status: 'under_maintenance', position: 4, group: true, group_id: null, components: [ids.docs] },
      {
        id: ids.docs,
        name: 'Docs',
        status: 'under_maintenance',
        position: 5,
        group: false,
        group_id: 'card-2',
        uptime: { days: 90, percent: null },
      },
    ]);
    expect(summary.incidents).toEqual([
      {
        id: ids.open,
        name: 'Checkout <errors> & "timeouts"',
        status: 'identified',
        impact: 'major',
        severity: 'MAJOR',
        created_at: expect.any(String),
        updated_at: expect.any(String),
        resolved_at: null,
        shortlink: expect.stringMatching(new RegExp(`/status/${address}#incident-${ids.open}$`)),
        components: [{ id: ids.api, name: 'Public API' }],
        incident_updates: [
          { id: expect.any(String), status: 'identified', body: 'A bad deploy', created_at: expect.any(String), display_at: expect.any(String) },
          {
            id: expect.any(String),
            status: 'investigating',
            body: 'Payments fail for <b>some</b> customers\u0001',
            created_at: expect.any(String),
            display_at: '2026-01-15T15:30:00.000Z',
          },
        ],
      },
    ]);
    expect(summary.scheduled_maintenances).toEqual([]);
    expect(await (await get('/api/v2/summary.json')).json()).toEqual({
      ...summary,
      page: { ...summary.page, updated_at: expect.any(String) },
    });
    expect((await fetch(`${service.url}/status/no-such-page/summary.json`)).status).toBe(404);
  });

  it('lists the page\'s incidents, open and resolved, newest first, as an Atom feed', async () => {
    const answer = await get('/history.atom');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
    const xml = await answer.text();
    expect(xml.startsWith('<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom"')).toBe(true);
    expect(xml).toContain('<title>Shop &amp; Co: incident history</title>');
    expect(xml).toMatch(new RegExp(`<link rel="self" type="application/atom\\+xml" href="http://[^"]+/status/${address}/history.atom"/>`));
    const entries = [...xml.matchAll(/<entry>([\s\S]*?)<\/entry>/g)].map((match) => match[1]!);
    expect(entries.map((entry) => /<id>urn:uuid:([^<]+)<\/id>/.exec(entry)![1])).toEqual([ids.open, ids.resolved]);
    const [open, resolved] = entries as [string, string];
    expect(open).toContain('<title>Checkout &lt;errors&gt; &amp; &quot;timeouts&quot;</title>');
    expect(open).toContain(`href="http`);
    expect(open).toContain(`/status/${address}#incident-${ids.open}"/>`);
    expect(open).toContain('<category term="IDENTIFIED" label="Identified"/>');
    expect(open).toMatch(/<updated>\d{4}-\d\d-\d\dT[\d:.]+Z<\/updated>/);
    // The content is HTML, escaped once for XML; the user's markup is escaped once more; a control character is dropped.
    expect(open).toContain(
      '&lt;p&gt;&lt;small&gt;15 Jan 2026, 15:30 UTC&lt;/small&gt;&lt;br&gt;&lt;strong&gt;Investigating&lt;/strong&gt; - Payments fail for &amp;lt;b&amp;gt;some&amp;lt;/b&amp;gt; customers&lt;/p&gt;',
    );
    expect(xml).not.toContain('\u0001');
    expect(resolved).toContain('<category term="RESOLVED" label="Resolved"/>');
    expect(xml).not.toContain(ids.foreign);
  });

  it('and as an RSS feed', async () => {
    const answer = await get('/history.rss');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/rss+xml; charset=utf-8');
    const xml = await answer.text();
    expect(xml).toContain('<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">');
    const items = [...xml.matchAll(/<item>([\s\S]*?)<\/item>/g)].map((match) => match[1]!);
    expect(items.map((item) => /<guid isPermaLink="false">urn:uuid:([^<]+)<\/guid>/.exec(item)![1])).toEqual([ids.open, ids.resolved]);
    expect(items[0]).toMatch(/<pubDate>\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT<\/pubDate>/);
    expect(items[0]).toContain('<category>Identified</category>');
    expect(items[1]).toContain('Slow pages');
    expect((await fetch(`${service.url}/status/no-such-page/history.rss`)).status).toBe(404);
  });

  it('draws a 90-day bar per measured service from its linked checks\' results, and readable states', async () => {
    const html = await (await get('')).text();
    const serviceHtml = (id: string) => html.split('<div class="service" ').find((part) => part.startsWith(`data-service-id="${id}"`))!;
    const website = serviceHtml(ids.web);
    const days = [...website.matchAll(/<span class="day b-([^"]+)" data-date="([^"]+)"(?: data-availability="([^"]+)")? title="([^"]+)"/g)];
    expect(days).toHaveLength(90);
    const byAge = days.reverse(); // today first
    expect(byAge[0]![2]).toBe(daysAgo(0).toISOString().slice(0, 10));
    expect(byAge.slice(0, 6).map((day) => [day[1], day[3]])).toEqual([
      ['0', '100'],
      ['3', '90.00'],
      ['4', '75.00'],
      ['none', undefined],
      ['none', undefined],
      ['0', '100'],
    ]);
    expect(byAge[2]![4]).toMatch(/: 75\.00 % of 4 runs passed$/);
    expect(byAge[3]![4]).toMatch(/: no data$/);
    expect(byAge.slice(6).every((day) => day[1] === 'none')).toBe(true);
    expect(website).toMatch(/role="img" aria-label="Uptime over the last 90 days: 90\.00 %\. Days below 100 %: [^"]+ 75\.00 %, [^"]+ 90\.00 %\. 86 days without data\."/);
    expect(website).toContain('<span class="total">90.00 % uptime</span>');

    // No linked check: a state, no bar. Docs: a linked check without results, under maintenance.
    const api = serviceHtml(ids.api);
    expect(api).not.toContain('class="uptime"');
    expect(api).toMatch(/^data-service-id="[^"]+" data-status="partial_outage">\n<div class="service-head"><span class="name">Public API<\/span><span class="state state-partial_outage">Partial outage<\/span>/);
    expect(html).toContain('<span class="state state-under_maintenance">Under maintenance</span>');
    expect(html).toContain('<span class="total">No data yet</span>');
    // Times as ISO for the script, readable UTC without it; feeds announced.
    expect(html).toContain('<time datetime="2026-01-15T15:30:00.000Z">15 Jan 2026, 15:30 UTC</time>');
    expect(html).toContain(`<link rel="alternate" type="application/atom+xml" title="Shop &amp; Co: incidents (Atom)" href="/status/${address}/history.atom">`);
    expect(html).toContain(`<div id="content" data-refresh-url="/status/${address}" data-refresh-seconds="60">`);
    expect(html).toContain('<noscript><meta http-equiv="refresh" content="60"></noscript>');
  });
});
