import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

/** The routes and answers the public checkly CLI reads (docs/api.md, "The public checkly CLI"). */
describe.each(DB_KINDS)('the Checkly dialect (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind);
  });
  afterAll(async () => service?.close());

  /** As the CLI calls: the account in x-checkly-account. */
  const cli = (method: string, path: string, body?: unknown) =>
    service.raw(method, path, body, { authorization: `Bearer ${service.apiKey}`, 'x-checkly-account': service.accountId });

  it('x-checkly-account means what x-service-account means', async () => {
    expect((await cli('GET', '/v1/checks')).status).toBe(200);
    const other = await service.raw('GET', '/v1/checks', undefined, { authorization: `Bearer ${service.apiKey}`, 'x-checkly-account': randomUUID() });
    expect(other.status).toBe(403);
    expect(other.body.message).toContain('x-checkly-account');
    const both = await service.raw('GET', '/v1/checks', undefined, {
      authorization: `Bearer ${service.apiKey}`,
      'x-service-account': service.accountId,
      'x-checkly-account': randomUUID(),
    });
    expect(both.status).toBe(401);
  });

  it('answers the account, the accounts and the key holder', async () => {
    const account = { id: service.accountId, name: 'Bootstrap account', runtimeId: '2026.04', plan: 'SELF_HOSTED', planDisplayName: 'Self-hosted', features: [] };
    expect((await cli('GET', `/next/accounts/${service.accountId}`)).body).toEqual(account);
    expect((await cli('GET', '/next/accounts')).body).toEqual([account]);
    expect((await cli('GET', `/next/accounts/${randomUUID()}`)).status).toBe(403);
    expect((await cli('GET', '/next/users/me')).body).toEqual({ id: expect.any(String), name: expect.stringMatching(/^service key "bootstrap"/) });

    const member = await service.api('POST', '/v1/accounts/me/members', { email: 'me@example.test', name: 'Me', role: 'ADMIN' });
    const key = await service.api('POST', `/v1/accounts/me/members/${member.body.id}/api-keys`, { name: 'laptop' });
    const me = await service.raw('GET', '/next/users/me', undefined, { authorization: `Bearer ${key.body.rawKey}`, 'x-service-account': service.accountId });
    expect(me.body).toEqual({ id: member.body.id, name: 'Me', email: 'me@example.test' });
    await service.api('DELETE', `/v1/accounts/me/members/${member.body.id}`);
  });

  it('writes answer errors as {statusCode, error, message} to the CLI, shape B to everyone else', async () => {
    await service.api('POST', '/v1/variables', { key: 'TWICE', value: '1' });
    const outpost = await service.api('POST', '/v1/variables', { key: 'TWICE', value: '2' });
    expect(outpost.body).toEqual({ message: 'An environment variable with key TWICE already exists', attributes: { key: 'already exists' } });
    const checkly = await cli('POST', '/v1/variables', { key: 'TWICE', value: '2' });
    expect(checkly.status).toBe(400);
    expect(checkly.body).toEqual({ statusCode: 400, error: 'Bad Request', ...outpost.body });
    await service.api('DELETE', '/v1/variables/TWICE');
  });

  it('lists every variable to the CLI when it names no page', async () => {
    for (let i = 0; i < 12; i++) await service.api('POST', '/v1/variables', { key: `V${String(i).padStart(2, '0')}`, value: String(i) });
    expect((await service.api('GET', '/v1/variables')).body).toHaveLength(10);
    expect((await cli('GET', '/v1/variables')).body).toHaveLength(12);
    expect((await cli('GET', '/v1/variables?limit=5')).body).toHaveLength(5);
    for (let i = 0; i < 12; i++) await service.api('DELETE', `/v1/variables/V${String(i).padStart(2, '0')}`);
  });

  it('answers the plan as the CLI reads it', async () => {
    expect((await service.api('GET', '/v1/accounts/me/entitlements')).body).not.toHaveProperty('entitlements.0.type');
    const plan = (await cli('GET', '/v1/accounts/me/entitlements')).body;
    expect(plan).toMatchObject({ plan: 'SELF_HOSTED', planDisplayName: 'Self-hosted', addons: {} });
    const byKey = Object.fromEntries(plan.entitlements.map((e: { key: string }) => [e.key, e]));
    expect(byKey.URL_MONITORS).toMatchObject({ type: 'flag', enabled: true, requiredPlan: 'SELF_HOSTED' });
    expect(byKey.ENVIRONMENT_VARIABLES).toMatchObject({ type: 'metered', quantity: 100 });
    expect(byKey.PRIVATE_LOCATIONS).not.toHaveProperty('quantity');
    expect(byKey.DATA_CENTER_LOCATIONS).toEqual(expect.not.objectContaining({ requiredPlan: expect.anything() }));
  });

  it('lists members as a page to the CLI, filtered and paged, and changes roles', async () => {
    const owner = await service.api('POST', '/v1/accounts/me/members', { email: 'owner@example.test', name: 'Owner', role: 'OWNER' });
    const ada = await service.api('POST', '/v1/accounts/me/members', { email: 'ada@example.test', name: 'Ada', role: 'READ_ONLY' });
    expect((await service.api('GET', '/v1/accounts/me/members')).body).toEqual([owner.body, ada.body]);
    const page = await cli('GET', '/v1/accounts/me/members?limit=1');
    expect(page.body).toEqual({
      members: [
        {
          type: 'member', accountId: service.accountId, userId: owner.body.id, name: 'Owner', email: 'owner@example.test', role: 'OWNER',
          status: 'ACTIVE', createdAt: owner.body.created_at, updatedAt: owner.body.created_at,
          isSupportMembership: false, ssoEnabled: false, mfaEnabled: false,
        },
      ],
      length: 1,
      nextId: ada.body.id,
    });
    expect((await cli('GET', `/v1/accounts/me/members?limit=1&nextId=${ada.body.id}`)).body).toMatchObject({ length: 1, nextId: null });
    expect((await cli('GET', '/v1/accounts/me/members?search=ADA&type=member&status=ACTIVE')).body.members.map((m: { email: string }) => m.email)).toEqual(['ada@example.test']);
    expect((await cli('GET', '/v1/accounts/me/members?type=invite')).body.members).toEqual([]);

    const changed = await service.api('PATCH', `/v1/accounts/me/members/${ada.body.id}`, { role: 'READ_WRITE' });
    expect(changed.body).toEqual({ ...ada.body, role: 'READ_WRITE' });
    expect((await cli('PATCH', `/v1/accounts/me/members/${ada.body.id}`, { role: 'ADMIN' })).body).toMatchObject({ userId: ada.body.id, role: 'ADMIN' });
    const lastOwner = await service.api('PATCH', `/v1/accounts/me/members/${owner.body.id}`, { role: 'ADMIN' });
    expect(lastOwner.status).toBe(409);
    expect((await service.api('PATCH', `/v1/accounts/me/members/${randomUUID()}`, { role: 'ADMIN' })).status).toBe(404);
    expect((await service.api('PATCH', `/v1/accounts/me/members/${ada.body.id}`, { role: 'READ_RUN' })).status).toBe(400);

    // An admin's key may change roles, but not make an owner.
    const key = await service.api('POST', `/v1/accounts/me/members/${ada.body.id}/api-keys`, { name: 'k' });
    const asAda = await service.raw('PATCH', `/v1/accounts/me/members/${ada.body.id}`, { role: 'OWNER' }, {
      authorization: `Bearer ${key.body.rawKey}`,
      'x-service-account': service.accountId,
      'content-type': 'application/json',
    });
    expect(asAda.status).toBe(403);
  });
});
