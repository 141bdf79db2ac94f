import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecondAccount, expectErrorA, expectErrorB } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type ApiAnswer, type TestService } from '../support/service.js';

type Call = (method: string, path: string, body?: unknown) => Promise<ApiAnswer>;

describe.each(DB_KINDS)('members and API keys (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind);
  });
  afterAll(async () => service?.close());

  /** An account of its own, reached with a service key; `as(rawKey)` calls it with another key. */
  async function freshAccount() {
    const account = await createSecondAccount(service);
    const as =
      (rawKey: string): Call =>
      (method, path, body) =>
        service.raw(method, path, body, { authorization: `Bearer ${rawKey}`, 'x-service-account': account.accountId });
    const call = as(account.apiKey);
    const addMember = async (role: string, email = `${randomUUID().slice(0, 8)}@example.test`) => {
      const answer = await call('POST', '/v1/accounts/me/members', { email, name: `Member ${role}`, role });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body as { id: string; email: string };
    };
    const keyOf = async (memberId: string, by: Call = call) => {
      const answer = await by('POST', `/v1/accounts/me/members/${memberId}/api-keys`, { name: 'laptop' });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body as { id: string; rawKey: string };
    };
    return { account, call, as, addMember, keyOf };
  }

  describe('members', () => {
    it('adds a member (READ_WRITE unless told) and lists them', async () => {
      const { call } = await freshAccount();
      expect((await call('GET', '/v1/accounts/me/members')).body).toEqual([]);
      const added = await call('POST', '/v1/accounts/me/members', { email: 'ada@example.test', name: 'Ada' });
      expect(added.status).toBe(201);
      expect(added.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        email: 'ada@example.test',
        name: 'Ada',
        role: 'READ_WRITE',
        created_at: expect.any(String),
      });
      const owner = await call('POST', '/v1/accounts/me/members', { email: 'grace@example.test', name: 'Grace', role: 'OWNER' });
      expect((await call('GET', '/v1/accounts/me/members')).body).toEqual([added.body, owner.body]);
    });

    it.each([
      ['an address that is not one', { email: 'not-an-address', name: 'X' }, ['email']],
      ['no address', { name: 'X' }, ['email']],
      ['an empty name', { email: 'x@example.test', name: '' }, ['name']],
      ['an unknown role', { email: 'x@example.test', name: 'X', role: 'GOD' }, ['role']],
    ])('refuses %s: 400 naming the field', async (_case, body, fields) => {
      const { call } = await freshAccount();
      expectErrorB(await call('POST', '/v1/accounts/me/members', body), fields);
      expect((await call('GET', '/v1/accounts/me/members')).body).toEqual([]);
    });

    it('refuses an address that is already a member\'s, whatever its case', async () => {
      const { call, addMember } = await freshAccount();
      await addMember('READ_ONLY', 'Ada@Example.test');
      expectErrorB(await call('POST', '/v1/accounts/me/members', { email: 'ada@example.TEST', name: 'Ada again' }), ['email']);
    });

    it('removes a member: 204, their keys stop working, and a second removal is a 404 in shape A', async () => {
      const { call, as, addMember, keyOf } = await freshAccount();
      await addMember('OWNER');
      const leaving = await addMember('READ_WRITE');
      const key = await keyOf(leaving.id);
      expect((await as(key.rawKey)('GET', '/v1/checks')).status).toBe(200);

      const removed = await call('DELETE', `/v1/accounts/me/members/${leaving.id}`);
      expect(removed.status).toBe(204);
      expect(removed.body).toBeUndefined();
      expectErrorA(await as(key.rawKey)('GET', '/v1/checks'), 401, 'Unauthorized');
      expect((await call('GET', '/v1/accounts/me/api-keys')).body.map((k: { id: string }) => k.id)).not.toContain(key.id);
      expectErrorA(await call('DELETE', `/v1/accounts/me/members/${leaving.id}`), 404, 'Not Found');
    });

    it('answers a malformed member id with a 400 in shape A, as the spec shows for this operation', async () => {
      const { call } = await freshAccount();
      expectErrorA(await call('DELETE', '/v1/accounts/me/members/not-a-uuid'), 400, 'Bad Request');
    });

    it('keeps the last owner: 409 in shape A, even when two owners are removed at once', async () => {
      const { call, addMember } = await freshAccount();
      const first = await addMember('OWNER');
      const second = await addMember('OWNER');
      const answers = await Promise.all([first, second].map((owner) => call('DELETE', `/v1/accounts/me/members/${owner.id}`)));
      expect(answers.map((answer) => answer.status).sort()).toEqual([204, 409]);
      expectErrorA(answers.find((answer) => answer.status === 409)!, 409, 'Conflict');
      const left = (await call('GET', '/v1/accounts/me/members')).body;
      expect(left).toHaveLength(1);
      expect(left[0].role).toBe('OWNER');
    });

    it('does not reach another account\'s members', async () => {
      const mine = await freshAccount();
      const theirs = await freshAccount();
      const member = await theirs.addMember('READ_WRITE');
      expectErrorA(await mine.call('DELETE', `/v1/accounts/me/members/${member.id}`), 404, 'Not Found');
      expect((await mine.call('POST', `/v1/accounts/me/members/${member.id}/api-keys`, { name: 'x' })).status).toBe(404);
      expect((await theirs.call('GET', '/v1/accounts/me/members')).body).toHaveLength(1);
    });
  });

  describe('API keys', () => {
    it('makes a member\'s key: the raw key once, then only masked; it acts on the account', async () => {
      const { call, as, addMember, keyOf } = await freshAccount();
      const member = await addMember('READ_WRITE');
      const key = await keyOf(member.id);
      expect(key).toEqual({
        id: expect.any(String),
        name: 'laptop',
        kind: 'USER',
        memberId: member.id,
        maskedKey: expect.stringMatching(/^ok_\*+.{4}$/),
        rawKey: expect.stringMatching(/^ok_[A-Za-z0-9_-]{40}$/),
        created_at: expect.any(String),
      });
      const listed = (await call('GET', '/v1/accounts/me/api-keys')).body;
      const { rawKey, ...shown } = key;
      expect(listed).toContainEqual(shown);
      expect(JSON.stringify(listed)).not.toContain(rawKey);
      expect((await as(rawKey)('POST', '/v1/variables', { key: 'MADE_BY_MEMBER', value: 'x' })).status).toBe(201);
    });

    it('makes a service key, which works until it is revoked; revoking twice is a 404 in shape B', async () => {
      const { call, as } = await freshAccount();
      const created = await call('POST', '/v1/accounts/me/service-api-keys', { name: 'CI pipeline' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: 'CI pipeline', kind: 'SERVICE', memberId: null });
      const ci = as(created.body.rawKey);
      expect((await ci('GET', '/v1/checks')).status).toBe(200);
      const revoked = await call('DELETE', `/v1/accounts/me/api-keys/${created.body.id}`);
      expect(revoked.status).toBe(204);
      expectErrorA(await ci('GET', '/v1/checks'), 401, 'Unauthorized');
      expectErrorB(await call('DELETE', `/v1/accounts/me/api-keys/${created.body.id}`), ['keyId'], 404);
    });

    it.each([
      ['no name', {}, ['name']],
      ['an empty name', { name: '' }, ['name']],
    ])('refuses a key with %s: 400 naming the field', async (_case, body, fields) => {
      const { call } = await freshAccount();
      expectErrorB(await call('POST', '/v1/accounts/me/service-api-keys', body), fields);
    });
  });

  describe('roles', () => {
    it('lets a READ_ONLY member read and nothing else: 403 (shape B, as writes answer), nothing stored', async () => {
      const { call, as, addMember, keyOf } = await freshAccount();
      const reader = as((await keyOf((await addMember('READ_ONLY')).id)).rawKey);
      expect((await reader('GET', '/v1/checks')).status).toBe(200);
      expect((await reader('GET', '/v1/accounts/me/entitlements')).status).toBe(200);
      expectErrorB(await reader('POST', '/v1/variables', { key: 'NOPE', value: 'x' }), [], 403);
      expectErrorB(await reader('DELETE', `/v1/accounts/me/api-keys/${randomUUID()}`), [], 403);
      expectErrorA(await call('GET', '/v1/variables/NOPE'), 404, 'Not Found');
    });

    it('lets a READ_WRITE member change checks and their own keys, not members or others\' keys', async () => {
      const { call, as, addMember, keyOf } = await freshAccount();
      const writer = await addMember('READ_WRITE');
      const other = await addMember('READ_WRITE');
      const writerKey = await keyOf(writer.id);
      const otherKey = await keyOf(other.id);
      const asWriter = as(writerKey.rawKey);
      expect((await asWriter('POST', '/v1/variables', { key: 'WRITER', value: 'x' })).status).toBe(201);
      expectErrorB(await asWriter('POST', '/v1/accounts/me/members', { email: 'x@example.test', name: 'X' }), [], 403);
      expectErrorB(await asWriter('POST', '/v1/accounts/me/service-api-keys', { name: 'x' }), [], 403);
      expectErrorB(await asWriter('POST', `/v1/accounts/me/members/${other.id}/api-keys`, { name: 'x' }), [], 403);
      expectErrorB(await asWriter('DELETE', `/v1/accounts/me/api-keys/${otherKey.id}`), [], 403);
      expectErrorA(await asWriter('DELETE', `/v1/accounts/me/members/${other.id}`), 403, 'Forbidden');

      const second = await keyOf(writer.id, asWriter);
      expect((await asWriter('DELETE', `/v1/accounts/me/api-keys/${second.id}`)).status).toBe(204);
      expect((await call('GET', '/v1/accounts/me/members')).body).toHaveLength(2);
    });

    it('lets an ADMIN member manage members and keys', async () => {
      const { as, addMember, keyOf } = await freshAccount();
      const admin = as((await keyOf((await addMember('ADMIN')).id)).rawKey);
      const added = await admin('POST', '/v1/accounts/me/members', { email: 'new@example.test', name: 'New' });
      expect(added.status).toBe(201);
      expect((await admin('POST', `/v1/accounts/me/members/${added.body.id}/api-keys`, { name: 'x' })).status).toBe(201);
      expect((await admin('POST', '/v1/accounts/me/service-api-keys', { name: 'x' })).status).toBe(201);
      expect((await admin('DELETE', `/v1/accounts/me/members/${added.body.id}`)).status).toBe(204);
    });

    it('answers 401 without a key and 403 with another account\'s id', async () => {
      const other = await createSecondAccount(service);
      expectErrorA(await service.raw('GET', '/v1/accounts/me/members'), 401, 'Unauthorized');
      expectErrorA(
        await service.raw('DELETE', `/v1/accounts/me/members/${randomUUID()}`, undefined, {
          authorization: `Bearer ${service.apiKey}`,
          'x-service-account': other.accountId,
        }),
        403,
        'Forbidden',
      );
    });
  });
});
