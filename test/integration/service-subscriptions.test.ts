import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asNewAccount, eventually, expectErrorA, expectErrorB } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';
import { linkIn, startTestSmtp, type TestSmtp } from '../support/smtp.js';

describe.each(DB_KINDS)('status page subscriptions and their e-mail (%s)', (kind) => {
  let service: TestService;
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startTestSmtp();
    service = await startTestService(kind, { tickMs: 100, mailRetryBaseMs: 200, env: { SMTP_URL: smtp.url, MAIL_FROM: 'Status <status@outpost.test>' } });
  });
  afterAll(async () => {
    await service?.close();
    await smtp?.close();
  });

  /** An account with one service shown on one page, and a second page that does not show it. */
  async function freshSetup() {
    const { call } = await asNewAccount(service);
    const web = (await call('POST', '/v1/status-pages/services', { name: 'Website' })).body;
    const other = (await call('POST', '/v1/status-pages/services', { name: 'Other' })).body;
    const page = (await call('POST', '/v1/status-pages', { name: 'Shop', url: `shop-${randomUUID().slice(0, 8)}`, cards: [{ name: 'All', services: [web.id] }] })).body;
    const elsewhere = (await call('POST', '/v1/status-pages', { name: 'Elsewhere', url: `else-${randomUUID().slice(0, 8)}`, cards: [{ name: 'All', services: [other.id] }] })).body;
    const address = () => `${randomUUID().slice(0, 8)}@example.test`;
    /** Subscribes and follows the link the e-mail carries. */
    const verified = async (pageId: string, to = address()) => {
      const created = await call('POST', `/v1/status-pages/${pageId}/subscriptions`, { address: to });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const mail = await smtp.waitFor(to, /Confirm/);
      const link = new URL(linkIn(mail, `${service.url.replace('127.0.0.1', 'localhost')}/status/`));
      expect((await service.raw('GET', `${link.pathname}${link.search}`)).status).toBe(200);
      return { id: created.body.id as string, address: to };
    };
    return { call, web, other, page, elsewhere, address, verified };
  }

  it('subscribes PENDING, mails a confirmation link, and turns VERIFIED when it is followed', async () => {
    const { call, page, address } = await freshSetup();
    const to = address();
    const created = await call('POST', `/v1/status-pages/${page.id}/subscriptions`, { address: to });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      type: 'EMAIL',
      address: to,
      status: 'PENDING',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const mail = await smtp.waitFor(to, /Confirm your subscription to Shop/);
    expect(mail.from).toBe('status@outpost.test');
    const link = new URL(linkIn(mail, 'http'));
    expect(link.pathname).toBe(`/status/${page.url}/subscriptions/verify`);

    expect((await call('GET', `/v1/status-pages/${page.id}/subscriptions`)).body).toEqual([created.body]);
    const confirmed = await service.raw('GET', `${link.pathname}${link.search}`);
    expect(confirmed.status).toBe(200);
    expect(confirmed.headers.get('content-type')).toMatch(/^text\/html/);
    expect(confirmed.body).toContain('Subscription confirmed');
    const [listed] = (await call('GET', `/v1/status-pages/${page.id}/subscriptions`)).body;
    expect(listed).toMatchObject({ id: created.body.id, status: 'VERIFIED' });
    // Following the link again changes nothing.
    expect((await service.raw('GET', `${link.pathname}${link.search}`)).status).toBe(200);
  });

  it('refuses a link with a wrong token, or for another page: 404, nothing verified', async () => {
    const { call, page, elsewhere, address } = await freshSetup();
    const to = address();
    await call('POST', `/v1/status-pages/${page.id}/subscriptions`, { address: to });
    const link = new URL(linkIn(await smtp.waitFor(to), 'http'));
    const token = link.searchParams.get('token')!;
    expect((await service.raw('GET', `/status/${page.url}/subscriptions/verify?token=${token}x`)).status).toBe(404);
    expect((await service.raw('GET', `/status/${elsewhere.url}/subscriptions/verify?token=${token}`)).status).toBe(404);
    expect((await service.raw('GET', `/status/${page.url}/subscriptions/verify`)).status).toBe(404);
    expect((await call('GET', `/v1/status-pages/${page.id}/subscriptions`)).body[0].status).toBe('PENDING');
  });

  it.each([
    ['an address that is not one', { address: 'nobody' }, ['address']],
    ['no address', {}, ['address']],
  ])('refuses %s: 400 naming the field', async (_case, body, fields) => {
    const { call, page } = await freshSetup();
    expectErrorB(await call('POST', `/v1/status-pages/${page.id}/subscriptions`, body), fields);
    expect((await call('GET', `/v1/status-pages/${page.id}/subscriptions`)).body).toEqual([]);
  });

  it('refuses an address already on the list, whatever its case', async () => {
    const { call, page } = await freshSetup();
    await call('POST', `/v1/status-pages/${page.id}/subscriptions`, { address: 'Ada@Example.test' });
    expectErrorB(await call('POST', `/v1/status-pages/${page.id}/subscriptions`, { address: 'ada@example.TEST' }), ['address']);
  });

  it('deletes a subscription: 204, then 404 in shape B; another account reaches none of it', async () => {
    const { call, page, address } = await freshSetup();
    const theirs = await freshSetup();
    const created = await call('POST', `/v1/status-pages/${page.id}/subscriptions`, { address: address() });
    expectErrorA(await theirs.call('GET', `/v1/status-pages/${page.id}/subscriptions`), 404, 'Not Found');
    expectErrorB(await theirs.call('POST', `/v1/status-pages/${page.id}/subscriptions`, { address: address() }), [], 404);
    expectErrorB(await theirs.call('DELETE', `/v1/status-pages/${page.id}/subscriptions/${created.body.id}`), ['subscriptionId'], 404);
    const deleted = await call('DELETE', `/v1/status-pages/${page.id}/subscriptions/${created.body.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expectErrorB(await call('DELETE', `/v1/status-pages/${page.id}/subscriptions/${created.body.id}`), ['subscriptionId'], 404);
    expect((await call('GET', `/v1/status-pages/${page.id}/subscriptions`)).body).toEqual([]);
  });

  it('mails incident updates that ask for it to VERIFIED subscribers of pages showing the service, and to no one else', async () => {
    const { call, web, page, elsewhere, address, verified } = await freshSetup();
    const reader = await verified(page.id);
    const pending = address();
    await call('POST', `/v1/status-pages/${page.id}/subscriptions`, { address: pending });
    const stranger = await verified(elsewhere.id);

    const quiet = await call('POST', '/v1/status-pages/incidents', {
      name: 'Quiet one',
      services: [web.id],
      incidentUpdates: [{ description: 'Nobody hears of this' }],
    });
    const opened = await call('POST', '/v1/status-pages/incidents', {
      name: 'Checkout errors',
      severity: 'MAJOR',
      services: [web.id],
      incidentUpdates: [{ description: 'Payments fail', notifySubscribers: true }],
    });
    expect(opened.status).toBe(201);
    const first = await smtp.waitFor(reader.address, /Checkout errors: INVESTIGATING/);
    expect(first.subject).toBe('[Shop] Checkout errors: INVESTIGATING');
    expect(first.text).toContain('Payments fail');
    expect(first.text).toContain('Affects: Website');

    await call('POST', `/v1/status-pages/incidents/${opened.body.id}/incident-updates`, {
      description: 'Fixed',
      status: 'RESOLVED',
      notifySubscribers: true,
    });
    await smtp.waitFor(reader.address, /Checkout errors: RESOLVED/);
    // Give any wrong e-mail the time to arrive before saying it did not.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const to = (address_: string) => smtp.received.filter((mail) => mail.to.includes(address_));
    expect(to(pending).map((mail) => mail.subject)).toEqual(['Confirm your subscription to Shop']);
    expect(to(stranger.address).map((mail) => mail.subject)).toEqual(['Confirm your subscription to Elsewhere']);
    expect(smtp.received.some((mail) => mail.subject.includes(quiet.body.name))).toBe(false);

    const outbox = await eventually(async () => {
      const rows = await service.service.db.query<{ kind: string; state: string }>(
        'SELECT kind, state FROM email_outbox WHERE recipient = $1 ORDER BY created_at',
        [reader.address],
      );
      return rows.every((row) => row.state === 'sent') ? rows : undefined;
    }, 5000, 'every e-mail recorded as sent');
    expect(outbox).toEqual([
      { kind: 'subscription-verify', state: 'sent' },
      { kind: 'incident-update', state: 'sent' },
      { kind: 'incident-update', state: 'sent' },
    ]);
  });

  it('mails maintenance updates that ask for it to the VERIFIED subscribers of every page of the account', async () => {
    const { call, page, elsewhere, address, verified } = await freshSetup();
    const reader = await verified(page.id);
    const other = await verified(elsewhere.id);
    const pending = address();
    await call('POST', `/v1/status-pages/${page.id}/subscriptions`, { address: pending });
    const window = (
      await call('POST', '/v1/maintenance-windows', {
        name: 'Database upgrade',
        tags: ['db'],
        startsAt: '2026-12-01T02:00:00Z',
        endsAt: '2026-12-01T04:00:00Z',
      })
    ).body;
    const held = (await call('POST', `/v1/maintenance-windows/${window.id}/maintenances`, { description: 'Planned' })).body;
    await call('POST', `/v1/maintenance-windows/${window.id}/maintenances/${held.id}/updates`, {
      description: 'Starting now',
      status: 'IN_PROGRESS',
      notifySubscribers: true,
    });
    const mail = await smtp.waitFor(reader.address, /Maintenance: Database upgrade: IN_PROGRESS/);
    expect(mail.subject).toBe('[Shop] Maintenance: Database upgrade: IN_PROGRESS');
    expect(mail.text).toContain('Starting now');
    expect(mail.text).toContain('From 2026-12-01T02:00:00.000Z to 2026-12-01T04:00:00.000Z');
    await smtp.waitFor(other.address, /Maintenance: Database upgrade/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The first update asked for no e-mail; the pending address hears nothing either.
    expect(smtp.received.filter((m) => m.to.includes(reader.address) && m.subject.includes('Maintenance'))).toHaveLength(1);
    expect(smtp.received.some((m) => m.to.includes(pending) && m.subject.includes('Maintenance'))).toBe(false);
  });

  it('stops mailing a subscriber who follows the unsubscribe link', async () => {
    const { call, web, page, verified } = await freshSetup();
    const reader = await verified(page.id);
    await call('POST', '/v1/status-pages/incidents', {
      name: 'Slow pages',
      services: [web.id],
      incidentUpdates: [{ description: 'Looking', notifySubscribers: true }],
    });
    const mail = await smtp.waitFor(reader.address, /Slow pages/);
    const link = new URL(linkIn(mail, `${service.url.replace('127.0.0.1', 'localhost')}/status/${page.url}/subscriptions/unsubscribe`));
    const answer = await service.raw('GET', `${link.pathname}${link.search}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('Unsubscribed');
    expect((await call('GET', `/v1/status-pages/${page.id}/subscriptions`)).body).toEqual([]);
    expect((await service.raw('GET', `${link.pathname}${link.search}`)).status).toBe(404);
  });

  it('retries an e-mail the mail server refuses for a while, and records the attempts', async () => {
    const { call, page, address } = await freshSetup();
    const to = address();
    smtp.refuse(to, 2);
    await call('POST', `/v1/status-pages/${page.id}/subscriptions`, { address: to });
    await smtp.waitFor(to, /Confirm/, 15_000);
    // The server has the e-mail a moment before the service records that it was sent.
    const row = await eventually(async () => {
      const [found] = await service.service.db.query<{ state: string; attempts: number; last_error: string | null }>(
        'SELECT state, attempts, last_error FROM email_outbox WHERE recipient = $1',
        [to],
      );
      return found?.state === 'sent' ? found : undefined;
    }, 5000, 'the e-mail recorded as sent');
    expect(row).toEqual({ state: 'sent', attempts: 3, last_error: null });
  });

  it('gives an e-mail up after the last attempt, and says why', async () => {
    const { call, page, address } = await freshSetup();
    const to = address();
    smtp.refuse(to, 100);
    await call('POST', `/v1/status-pages/${page.id}/subscriptions`, { address: to });
    // Six attempts, 0.2 s doubling between them: about 6 s.
    const row = await eventually(
      async () => {
        const [found] = await service.service.db.query<{ state: string; attempts: number; last_error: string }>(
          'SELECT state, attempts, last_error FROM email_outbox WHERE recipient = $1',
          [to],
        );
        return found?.state === 'failed' ? found : undefined;
      },
      20_000,
      'the e-mail given up',
    );
    expect(row.attempts).toBe(6);
    expect(row.last_error).toMatch(/Mailbox busy/);
    expect(smtp.received.some((mail) => mail.to.includes(to))).toBe(false);
  });
});

describe('e-mail without a mail server', () => {
  it('writes the e-mail, link included, to the log instead', async () => {
    const service = await startTestService('pglite');
    try {
      const page = await service.api('POST', '/v1/status-pages', { name: 'Shop', url: `shop-${randomUUID().slice(0, 8)}` });
      await service.api('POST', `/v1/status-pages/${page.body.id}/subscriptions`, { address: 'ada@example.test' });
      const line = await eventually(
        async () => service.logs.find((entry) => entry.includes('no SMTP_URL set')),
        5000,
        'the logged e-mail',
      );
      expect(line).toContain('ada@example.test');
      expect(line).toContain(`/status/${page.body.url}/subscriptions/verify?token=`);
    } finally {
      await service.close();
    }
  });
});
