import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createIdleUrlCheck,
  createSecondAccount,
  expectErrorA,
  expectErrorB,
  ManualAgent,
  triggerCheck,
  urlCheckBody,
} from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe.each(DB_KINDS)('service authentication and account isolation (%s)', (kind) => {
  let service: TestService;
  /** What the bootstrap account owns: a location with a connected agent, a check, a finished session. */
  let owned: {
    location: { id: string; slugName: string; rawKey: string; keyId: string };
    checkId: string;
    sessionId: string;
    resultId: string;
    jobId: string;
  };
  let second: { accountId: string; apiKey: string };
  const asSecond = (method: string, path: string, body?: unknown) =>
    service.raw(method, path, body, { ...bearer(second.apiKey), 'x-service-account': second.accountId });

  beforeAll(async () => {
    service = await startTestService(kind, { maxWaitSeconds: 2, tickMs: 100 });
    const location = await service.privateLocation();
    const check = await createIdleUrlCheck(service, [location.slugName]);
    const session = await triggerCheck(service, check.id);
    const agent = await new ManualAgent(service, location.rawKey).connect();
    const job = await agent.claimOne();
    const reported = await agent.report(job);
    if (reported.status !== 200) throw new Error(`result refused: ${JSON.stringify(reported.body)}`);
    const record = await service.api('GET', `/v1/check-sessions/${session.checkSessionId}`);
    owned = {
      location,
      checkId: check.id,
      sessionId: session.checkSessionId,
      resultId: record.body.results[0].checkResultId,
      jobId: job.jobId,
    };
    second = await createSecondAccount(service);
  });
  afterAll(async () => service?.close());

  describe('user API', () => {
    it('answers 401 without an Authorization header, in the route\'s shape (A for reads, B for writes)', async () => {
      expectErrorA(await service.raw('GET', '/v1/checks', undefined, { 'x-service-account': service.accountId }), 401, 'Unauthorized');
      expectErrorA(await service.raw('GET', '/v1/private-locations'), 401, 'Unauthorized');
      // A write answers in shape B, every error of it.
      expectErrorB(await service.raw('POST', '/v1/checks/url', urlCheckBody([]), { 'x-service-account': service.accountId }), [], 401);
    });

    it('answers 401 shape A to an Authorization header that is not a bearer credential', async () => {
      const answer = await service.raw('GET', '/v1/checks', undefined, {
        authorization: `Basic ${Buffer.from(`user:${service.apiKey}`).toString('base64')}`,
        'x-service-account': service.accountId,
      });
      expectErrorA(answer, 401, 'Unauthorized');
    });

    it('answers 401 shape A to an unknown API key', async () => {
      const answer = await service.raw('GET', '/v1/checks', undefined, {
        ...bearer(`test_${randomUUID()}`),
        'x-service-account': service.accountId,
      });
      expectErrorA(answer, 401, 'Unauthorized');
    });

    it('answers 401 shape A to a private location key used on the user API', async () => {
      const answer = await service.raw('GET', '/v1/private-locations', undefined, {
        ...bearer(owned.location.rawKey),
        'x-service-account': service.accountId,
      });
      expectErrorA(answer, 401, 'Unauthorized');
    });

    it('answers 401 when x-service-account is missing, in the route\'s shape', async () => {
      expectErrorA(await service.raw('GET', '/v1/checks', undefined, bearer(service.apiKey)), 401, 'Unauthorized');
      expectErrorA(await service.raw('GET', '/v1/private-locations', undefined, bearer(service.apiKey)), 401, 'Unauthorized');
      expectErrorA(
        await service.raw('GET', `/v1/checks/${owned.checkId}`, undefined, bearer(service.apiKey)),
        401,
        'Unauthorized',
      );
      expectErrorB(
        await service.raw('POST', '/v2/check-sessions/trigger', { target: { checkId: [owned.checkId] } }, bearer(service.apiKey)),
        [],
        401,
      );
    });

    it('reads a check session without x-service-account, the key naming the account', async () => {
      const answer = await service.raw('GET', `/v1/check-sessions/${owned.sessionId}`, undefined, bearer(service.apiKey));
      expect(answer.status).toBe(200);
      expect(answer.body.checkSessionId).toBe(owned.sessionId);
      expect(answer.body.checkId).toBe(owned.checkId);
      expect(answer.body.status).toBe('PASSED');
    });

    it('still refuses a check session read without any key, or with an unknown key', async () => {
      expectErrorA(await service.raw('GET', `/v1/check-sessions/${owned.sessionId}`), 401, 'Unauthorized');
      expectErrorA(
        await service.raw('GET', `/v1/check-sessions/${owned.sessionId}`, undefined, bearer(`test_${randomUUID()}`)),
        401,
        'Unauthorized',
      );
    });

    it('answers 403 shape A when the key is valid but x-service-account names another account', async () => {
      for (const accountId of [second.accountId, randomUUID()]) {
        const headers = { ...bearer(service.apiKey), 'x-service-account': accountId };
        const list = await service.raw('GET', '/v1/checks', undefined, headers);
        expectErrorA(list, 403, 'Forbidden');
        expect(JSON.stringify(list.body)).not.toContain(accountId);
        expectErrorA(await service.raw('GET', `/v1/private-locations/${owned.location.id}`, undefined, headers), 403, 'Forbidden');
        expectErrorA(await service.raw('GET', `/v1/check-sessions/${owned.sessionId}`, undefined, headers), 403, 'Forbidden');
      }
    });

    it('answers every operation of the user API with 401 without a key and 403 for another account, whatever it is', async () => {
      const document = (await service.raw('GET', '/openapi.json')).body as {
        paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>>;
      };
      const operations: [string, string][] = [];
      for (const [path, item] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          // The agent protocol has its own keys; every other operation is the user API.
          if (!['get', 'post', 'put', 'delete'].includes(method) || operation.security?.some((scheme) => 'privateLocationKey' in scheme)) continue;
          operations.push([method.toUpperCase(), path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000001')]);
        }
      }
      expect(operations.length).toBeGreaterThan(60);
      for (const [method, path] of operations) {
        const body = method === 'GET' || method === 'DELETE' ? undefined : {};
        const unauthorized = await service.raw(method, path, body);
        const forbidden = await service.raw(method, path, body, { ...bearer(service.apiKey), 'x-service-account': second.accountId });
        // One shape per route: reads and member removal answer in shape A, other writes in shape B.
        if (method === 'GET' || path.startsWith('/v1/accounts/me/members/') && method === 'DELETE') {
          expectErrorA(unauthorized, 401, 'Unauthorized');
          expectErrorA(forbidden, 403, 'Forbidden');
        } else {
          expectErrorB(unauthorized, [], 401);
          expectErrorB(forbidden, [], 403);
        }
      }
    });

    it('answers the same 403 for an existing and a made-up foreign account (no account enumeration)', async () => {
      const existing = await service.raw('GET', '/v1/checks', undefined, {
        ...bearer(service.apiKey),
        'x-service-account': second.accountId,
      });
      const madeUp = await service.raw('GET', '/v1/checks', undefined, {
        ...bearer(service.apiKey),
        'x-service-account': randomUUID(),
      });
      expect(existing.status).toBe(403);
      expect(madeUp.body).toEqual(existing.body);
    });

    it('lets a second account use its own key, seeing none of the first account', async () => {
      const locations = await asSecond('GET', '/v1/private-locations');
      expect(locations.status).toBe(200);
      expect(locations.body).toEqual([]);
      const checks = await asSecond('GET', '/v1/checks');
      expect(checks.status).toBe(200);
      expect(checks.body).toEqual([]);
    });

    it("answers 404 to another account's private location, check, session and result, never the data", async () => {
      const reads = [
        `/v1/private-locations/${owned.location.id}`,
        `/v1/checks/${owned.checkId}`,
        `/v1/check-sessions/${owned.sessionId}`,
        `/v1/check-sessions/${owned.sessionId}/results/${owned.resultId}`,
      ];
      for (const path of reads) {
        const answer = await asSecond('GET', path);
        expectErrorA(answer, 404, 'Not Found');
        const text = JSON.stringify(answer.body);
        expect(text).not.toContain(owned.location.slugName);
        expect(text).not.toContain(owned.checkId);
      }
      // The session route takes the account from the key when the header is absent: still not found.
      expectErrorA(
        await service.raw('GET', `/v1/check-sessions/${owned.sessionId}`, undefined, bearer(second.apiKey)),
        404,
        'Not Found',
      );
    });

    it("cannot trigger, key or remove keys of another account's resources", async () => {
      expectErrorB(await asSecond('POST', '/v2/check-sessions/trigger', { target: { checkId: [owned.checkId] } }), [], 404);
      expectErrorB(await asSecond('POST', `/v1/private-locations/${owned.location.id}/keys`), [], 404);
      const removal = await asSecond('DELETE', `/v1/private-locations/${owned.location.id}/keys/${owned.location.keyId}`);
      expectErrorB(removal, ['keyId'], 404);
      // The key still works for the owner's agent.
      const agent = new ManualAgent(service, owned.location.rawKey);
      expect((await agent.hello()).status).toBe(200);
    });

    it("cannot point a new check at another account's private location slug", async () => {
      const answer = await asSecond('POST', '/v1/checks/url', urlCheckBody([owned.location.slugName]));
      expectErrorB(answer, ['privateLocations']);
    });

    it('lets two accounts use the same private location slug independently', async () => {
      const created = await asSecond('POST', '/v1/private-locations', {
        name: 'Same slug',
        slugName: owned.location.slugName,
      });
      expect(created.status).toBe(201);
      expect(created.body.id).not.toBe(owned.location.id);
      const mine = await service.api('GET', `/v1/private-locations/${owned.location.id}`);
      expect(mine.status).toBe(200);
      expect(mine.body.name).toBe(owned.location.slugName);
    });
  });

  describe('agent API', () => {
    const hello = (headers: Record<string, string>) =>
      service.raw('POST', '/v1/agent/hello', new ManualAgent(service, 'unused').helloBody(), headers);

    it('answers 401 shape A without an Authorization header', async () => {
      expectErrorA(await hello({}), 401, 'Unauthorized');
      expectErrorA(
        await service.raw('POST', '/v1/agent/jobs/claim', { agentId: randomUUID(), max: 1, waitSeconds: 0 }),
        401,
        'Unauthorized',
      );
    });

    it('refuses a user API key with 401 shape A, with or without the account header', async () => {
      expectErrorA(await hello(bearer(service.apiKey)), 401, 'Unauthorized');
      expectErrorA(await hello({ ...bearer(service.apiKey), 'x-service-account': service.accountId }), 401, 'Unauthorized');
    });

    it('refuses an unknown pl_ key with 401 shape A on every agent call', async () => {
      const stranger = new ManualAgent(service, `pl_${'x'.repeat(40)}`);
      expectErrorA(await stranger.hello(), 401, 'Unauthorized');
      expectErrorA(await stranger.claim(), 401, 'Unauthorized');
      expectErrorA(await stranger.extend(owned.jobId), 401, 'Unauthorized');
      expectErrorA(await stranger.release(owned.jobId), 401, 'Unauthorized');
      expectErrorA(await stranger.call('POST', `/v1/agent/jobs/${owned.jobId}/result`, {}), 401, 'Unauthorized');
    });

    it('refuses a removed private location key on its next call, while the other key keeps working', async () => {
      const location = await service.privateLocation();
      const spare = await service.api('POST', `/v1/private-locations/${location.id}/keys`);
      expect(spare.status).toBe(201);
      const agent = new ManualAgent(service, location.rawKey);
      expect((await agent.hello()).status).toBe(200);
      expect((await agent.claim()).status).toBe(200);

      const removal = await service.api('DELETE', `/v1/private-locations/${location.id}/keys/${location.keyId}`);
      expect(removal.status).toBe(204);
      expect(removal.body).toBeUndefined();

      expectErrorA(await agent.claim(), 401, 'Unauthorized');
      expectErrorA(await agent.hello(), 401, 'Unauthorized');
      const rotated = new ManualAgent(service, spare.body.rawKey, agent.agentId);
      expect((await rotated.hello()).status).toBe(200);
      expect((await rotated.claim()).status).toBe(200);

      const listed = await service.api('GET', `/v1/private-locations/${location.id}`);
      expect(listed.body.keys.map((key: { id: string }) => key.id)).toEqual([spare.body.id]);
      // Removing it again: not found.
      const again = await service.api('DELETE', `/v1/private-locations/${location.id}/keys/${location.keyId}`);
      expectErrorB(again, ['keyId'], 404);
    });

    it("keeps an agent of one private location away from another location's jobs", async () => {
      const other = await service.privateLocation();
      const intruder = await new ManualAgent(service, other.rawKey).connect();
      const check = await createIdleUrlCheck(service, [owned.location.slugName]);
      await triggerCheck(service, check.id);
      // Nothing of the first location is offered to the second location's agent.
      const claimed = await intruder.claim();
      expect(claimed.status).toBe(200);
      expect(claimed.body.jobs).toEqual([]);

      const owner = await new ManualAgent(service, owned.location.rawKey).connect();
      const job = await owner.claimOne();
      expectErrorA(await intruder.report(job), 404, 'Not Found');
      expectErrorA(await intruder.extend(job.jobId), 409, 'Conflict');
      expectErrorA(await intruder.release(job.jobId), 409, 'Conflict');
      const upload = await intruder.service.raw('PUT', `/v1/agent/jobs/${job.jobId}/artifacts/log.txt?agentId=${intruder.agentId}`, undefined, {
        ...bearer(other.rawKey),
        'content-type': 'text/plain',
      });
      expectErrorA(upload, 404, 'Not Found');
      // The owner is unaffected.
      expect((await owner.report(job)).body).toEqual({ recorded: true });
    });
  });
});
