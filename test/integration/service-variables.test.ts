import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ACCOUNT_VARIABLES } from '../../src/service/store/variables.js';
import {
  createIdleUrlCheck,
  createSecondAccount,
  expectErrorA,
  expectErrorANaming,
  expectErrorB,
  ManualAgent,
  triggerCheck,
} from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const MASK = '*****';
const SCRIPT = `const { test } = require('@playwright/test');
test('reads variables', async () => {});
`;
/** A key no other test in the file uses. */
const freshKey = (prefix = 'VAR') => `${prefix}_${randomUUID().slice(0, 8).toUpperCase()}`;

describe.each(DB_KINDS)('environment variables (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind);
  });
  afterAll(async () => service?.close());

  const create = (body: Record<string, unknown>) => service.api('POST', '/v1/variables', body);

  describe('create and read', () => {
    it('creates a plain variable: 201 with locked and secret defaulting to false, and reads it back', async () => {
      const key = freshKey();
      const created = await create({ key, value: 'https://shop.test' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ key, value: 'https://shop.test', locked: false, secret: false });
      const read = await service.api('GET', `/v1/variables/${key}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
    });

    it('shows a locked variable\'s value (locking hides it from eyes, not from the API)', async () => {
      const key = freshKey();
      const created = await create({ key, value: 'visible', locked: true });
      expect(created.body).toEqual({ key, value: 'visible', locked: true, secret: false });
    });

    it('never returns a secret value: not on create, read or list', async () => {
      const key = freshKey('TOKEN');
      const created = await create({ key, value: 's3cr3t-value', secret: true });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ key, value: MASK, locked: false, secret: true });
      expect((await service.api('GET', `/v1/variables/${key}`)).body.value).toBe(MASK);
      const list = await service.api('GET', '/v1/variables?limit=100');
      expect(list.body.find((variable: { key: string }) => variable.key === key)).toEqual(created.body);
      expect(JSON.stringify(list.body)).not.toContain('s3cr3t-value');
    });

    it('lists in key order, paged by limit and page', async () => {
      const other = await createSecondAccount(service);
      const as = { authorization: `Bearer ${other.apiKey}`, 'x-service-account': other.accountId };
      for (const key of ['C_VAR', 'A_VAR', 'B_VAR']) {
        expect((await service.raw('POST', '/v1/variables', { key, value: key }, as)).status).toBe(201);
      }
      const all = await service.raw('GET', '/v1/variables', undefined, as);
      expect(all.body.map((variable: { key: string }) => variable.key)).toEqual(['A_VAR', 'B_VAR', 'C_VAR']);
      const second = await service.raw('GET', '/v1/variables?limit=2&page=2', undefined, as);
      expect(second.body).toEqual([{ key: 'C_VAR', value: 'C_VAR', locked: false, secret: false }]);
      expect((await service.raw('GET', '/v1/variables?limit=2&page=3', undefined, as)).body).toEqual([]);
    });

    it('refuses a key that exists: 400 naming key, and keeps the stored value', async () => {
      const key = freshKey();
      await create({ key, value: 'first' });
      expectErrorB(await create({ key, value: 'second' }), ['key']);
      expect((await service.api('GET', `/v1/variables/${key}`)).body.value).toBe('first');
    });

    it.each([
      ['no key', { value: 'x' }, ['key']],
      ['no value', { key: 'NO_VALUE' }, ['value']],
      ['a key starting with a digit', { key: '1PASSWORD', value: 'x' }, ['key']],
      ['a key with a dash', { key: 'API-KEY', value: 'x' }, ['key']],
      ['an empty key', { key: '', value: 'x' }, ['key']],
      ['a key over 255 characters', { key: `K${'X'.repeat(255)}`, value: 'x' }, ['key']],
      ['a value over 131,072 characters', { key: 'BIG', value: 'x'.repeat(131_073) }, ['value']],
      ['a value that is a number', { key: 'NUM', value: 5 }, ['value']],
      ['locked as a string', { key: 'LOCKED', value: 'x', locked: 'yes' }, ['locked']],
      ['secret as a number', { key: 'SECRET', value: 'x', secret: 1 }, ['secret']],
      ['a SERVICE_SECRET_ key', { key: 'SERVICE_SECRET_TOKEN', value: 'x' }, ['key']],
      ['the SERVICE key', { key: 'SERVICE', value: 'x' }, ['key']],
      ['the CI key', { key: 'CI', value: 'x' }, ['key']],
    ])('refuses %s: 400 naming the field', async (_case, body, fields) => {
      expectErrorB(await create(body), fields);
    });

    it('answers 404 (shape A) for a key that does not exist, and 400 (shape B) for a malformed one', async () => {
      expectErrorA(await service.api('GET', '/v1/variables/NOT_THERE'), 404, 'Not Found');
      expectErrorANaming(await service.api('GET', '/v1/variables/not-a-key'), ['key']);
    });

    it(`holds at most ${MAX_ACCOUNT_VARIABLES} variables per account, even when created at once`, async () => {
      const other = await createSecondAccount(service);
      const as = { authorization: `Bearer ${other.apiKey}`, 'x-service-account': other.accountId };
      const answers = await Promise.all(
        Array.from({ length: MAX_ACCOUNT_VARIABLES + 5 }, (_, index) =>
          service.raw('POST', '/v1/variables', { key: `V${index}`, value: String(index) }, as),
        ),
      );
      expect(answers.filter((answer) => answer.status === 201)).toHaveLength(MAX_ACCOUNT_VARIABLES);
      for (const refused of answers.filter((answer) => answer.status !== 201)) expectErrorB(refused, ['key']);
      const pages = await Promise.all(
        [1, 2].map((page) => service.raw('GET', `/v1/variables?limit=100&page=${page}`, undefined, as)),
      );
      expect(pages[0]!.body).toHaveLength(MAX_ACCOUNT_VARIABLES);
      expect(pages[1]!.body).toEqual([]);
    });
  });

  describe('update', () => {
    it('replaces the value and keeps locked and secret when they are left out', async () => {
      const key = freshKey();
      await create({ key, value: 'old', locked: true });
      const updated = await service.api('PUT', `/v1/variables/${key}`, { value: 'new' });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ key, value: 'new', locked: true, secret: false });
      expect((await service.api('GET', `/v1/variables/${key}`)).body).toEqual(updated.body);
    });

    it('unlocks, and makes a plain variable secret', async () => {
      const key = freshKey();
      await create({ key, value: 'plain', locked: true });
      const updated = await service.api('PUT', `/v1/variables/${key}`, { value: 'now hidden', locked: false, secret: true });
      expect(updated.body).toEqual({ key, value: MASK, locked: false, secret: true });
    });

    it('keeps a secret value when the mask is sent back, and replaces it when a new value is sent', async () => {
      const location = await service.privateLocation();
      const key = freshKey('TOKEN');
      await create({ key, value: 'original-secret', secret: true });
      expect((await service.api('PUT', `/v1/variables/${key}`, { value: MASK, locked: true })).body).toEqual({
        key,
        value: MASK,
        locked: true,
        secret: true,
      });
      const agent = await new ManualAgent(service, location.rawKey).connect({ checkTypes: ['MULTI_STEP'], runtimes: ['2026.04'] });
      const check = await service.api('POST', '/v1/checks/multistep', {
        name: 'reads a secret',
        script: SCRIPT,
        activated: false,
        privateLocations: [location.slugName],
      });
      await triggerCheck(service, check.body.id);
      expect((await agent.claimOne()).environmentVariables).toContainEqual({ key, value: 'original-secret', secret: true });

      await service.api('PUT', `/v1/variables/${key}`, { value: 'rotated-secret' });
      await triggerCheck(service, check.body.id);
      expect((await agent.claimOne()).environmentVariables).toContainEqual({ key, value: 'rotated-secret', secret: true });
    });

    it('refuses to make a secret variable plain: 400 naming secret, value kept', async () => {
      const key = freshKey('TOKEN');
      await create({ key, value: 'stays-secret', secret: true });
      expectErrorB(await service.api('PUT', `/v1/variables/${key}`, { value: MASK, secret: false }), ['secret']);
      expect((await service.api('GET', `/v1/variables/${key}`)).body).toEqual({ key, value: MASK, locked: false, secret: true });
    });

    it.each([
      ['no value', {}, ['value']],
      ['a value that is null', { value: null }, ['value']],
      ['a value over 131,072 characters', { value: 'x'.repeat(131_073) }, ['value']],
      ['locked as a string', { value: 'x', locked: 'no' }, ['locked']],
    ])('refuses %s: 400 naming the field, nothing changed', async (_case, body, fields) => {
      const key = freshKey();
      await create({ key, value: 'unchanged' });
      expectErrorB(await service.api('PUT', `/v1/variables/${key}`, body), fields);
      expect((await service.api('GET', `/v1/variables/${key}`)).body.value).toBe('unchanged');
    });

    it('answers 404 (shape A) for a key that does not exist', async () => {
      expectErrorB(await service.api('PUT', '/v1/variables/NOT_THERE', { value: 'x' }), [], 404);
    });
  });

  describe('delete', () => {
    it('deletes: 204 with no body, then 404 (shape B) on read-back and on a second delete', async () => {
      const key = freshKey();
      await create({ key, value: 'gone soon' });
      const deleted = await service.api('DELETE', `/v1/variables/${key}`);
      expect(deleted.status).toBe(204);
      expect(deleted.body).toBeUndefined();
      expectErrorA(await service.api('GET', `/v1/variables/${key}`), 404, 'Not Found');
      expectErrorB(await service.api('DELETE', `/v1/variables/${key}`), ['key'], 404);
    });
  });

  describe('accounts', () => {
    it('keeps each account\'s variables to itself, same key or not', async () => {
      const other = await createSecondAccount(service);
      const as = { authorization: `Bearer ${other.apiKey}`, 'x-service-account': other.accountId };
      const key = freshKey();
      await create({ key, value: 'mine' });
      expectErrorA(await service.raw('GET', `/v1/variables/${key}`, undefined, as), 404, 'Not Found');
      expectErrorB(await service.raw('DELETE', `/v1/variables/${key}`, undefined, as), ['key'], 404);
      expectErrorB(await service.raw('PUT', `/v1/variables/${key}`, { value: 'theirs' }, as), [], 404);
      expect((await service.raw('POST', '/v1/variables', { key, value: 'theirs' }, as)).status).toBe(201);
      expect((await service.api('GET', `/v1/variables/${key}`)).body.value).toBe('mine');
    });

    it('answers 401 without a key and 403 with another account\'s id', async () => {
      const other = await createSecondAccount(service);
      expectErrorA(await service.raw('GET', '/v1/variables'), 401, 'Unauthorized');
      expectErrorA(
        await service.raw('GET', '/v1/variables', undefined, { authorization: `Bearer ${service.apiKey}`, 'x-service-account': other.accountId }),
        403,
        'Forbidden',
      );
    });
  });

  describe('runs', () => {
    it('hands every account variable to a script run; a check variable of the same key wins, secret flag and all', async () => {
      const other = await createSecondAccount(service);
      const as = { authorization: `Bearer ${other.apiKey}`, 'x-service-account': other.accountId };
      const call = (method: string, path: string, body?: unknown) => service.raw(method, path, body, as);
      await call('POST', '/v1/variables', { key: 'BASE_URL', value: 'https://account.test' });
      await call('POST', '/v1/variables', { key: 'API_TOKEN', value: 'account-token', secret: true });
      await call('POST', '/v1/variables', { key: 'SHARED', value: 'account-plain' });
      const location = await call('POST', '/v1/private-locations', { name: 'Rack', slugName: `rack-${randomUUID().slice(0, 8)}` });
      const key = await call('POST', `/v1/private-locations/${location.body.id}/keys`);
      const agent = await new ManualAgent(service, key.body.rawKey).connect({ checkTypes: ['MULTI_STEP', 'URL'], runtimes: ['2026.04'] });

      const check = await call('POST', '/v1/checks/multistep', {
        name: 'overrides one',
        script: SCRIPT,
        activated: false,
        privateLocations: [location.body.slugName],
        environmentVariables: [{ key: 'SHARED', value: 'check-secret', secret: true }],
      });
      expect(check.status).toBe(201);
      const triggered = await call('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.body.id] } });
      expect(triggered.status).toBe(201);
      const job = await agent.claimOne();
      expect(job.environmentVariables).toEqual([
        { key: 'API_TOKEN', value: 'account-token', secret: true },
        { key: 'BASE_URL', value: 'https://account.test', secret: false },
        { key: 'SHARED', value: 'check-secret', secret: true },
      ]);

      // Variables are read when a run starts: a change shows in the next run.
      await call('DELETE', '/v1/variables/BASE_URL');
      await call('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.body.id] } });
      expect((await agent.claimOne()).environmentVariables.map((variable) => variable.key)).toEqual(['API_TOKEN', 'SHARED']);
    });

    it('gives uptime monitors none: they have nothing to read them with', async () => {
      const location = await service.privateLocation();
      await create({ key: freshKey(), value: 'not for probes' });
      const agent = await new ManualAgent(service, location.rawKey).connect();
      const check = await createIdleUrlCheck(service, [location.slugName]);
      await triggerCheck(service, check.id);
      expect((await agent.claimOne()).environmentVariables).toEqual([]);
    });
  });
});
