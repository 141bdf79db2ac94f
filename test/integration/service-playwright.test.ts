import { createHash, randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CODE_BUNDLE_BYTES } from '../../src/protocol/playwright-settings.js';
import type { ApiAnswer } from '../support/service.js';
import {
  createSecondAccount,
  expectErrorA,
  expectErrorB,
  ManualAgent,
  triggerCheck,
} from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

/** Not a real tar: the service only stores, hashes and checks that it is gzip. */
const BUNDLE = gzipSync(Buffer.from('a Playwright project, as far as the service cares'));
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.each(DB_KINDS)('Playwright check suites (%s)', (kind) => {
  let service: TestService;
  let bundleId: string;

  beforeAll(async () => {
    service = await startTestService(kind);
    bundleId = (await upload(BUNDLE)).body.id;
  });
  afterAll(() => service?.close());

  async function upload(bytes: Buffer, headers: Record<string, string> = auth()): Promise<ApiAnswer> {
    const response = await fetch(`${service.url}/v1/code-bundles`, {
      method: 'POST',
      headers: { 'content-type': 'application/gzip', ...headers },
      body: bytes,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  }
  const bundleFiles = async () => (await readdir(join(service.artifactsDir, 'code-bundles', service.accountId))).sort();
  const auth = () => ({ authorization: `Bearer ${service.apiKey}`, 'x-service-account': service.accountId });

  const create = (extra: Record<string, unknown> = {}) =>
    service.api('POST', '/v1/checks/playwright', { name: 'Checkout suite', codeBundleId: bundleId, ...extra });

  async function download(key: string, id: string): Promise<{ status: number; bytes: Buffer; headers: Headers }> {
    const response = await fetch(`${service.url}/v1/agent/code-bundles/${id}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()), headers: response.headers };
  }

  describe('code bundles', () => {
    it('stores an upload and answers its id, SHA-256 and size', async () => {
      const answer = await upload(BUNDLE);
      expect(answer.status).toBe(201);
      expect(answer.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), sha256: sha256(BUNDLE), size: BUNDLE.length });
    });

    it('refuses a body that is not gzip, naming it', async () => {
      expectErrorB(await upload(Buffer.from('plain text, no archive')), ['body']);
      expectErrorB(await upload(Buffer.alloc(0)), ['body']);
    });

    it('answers 413 for a bundle over 50 MiB, declared or streamed, and keeps nothing of it', async () => {
      const before = await bundleFiles();
      // Declared: answered before the body is read.
      const declared = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(`${service.url}/v1/code-bundles`, {
          method: 'POST',
          headers: { ...auth(), 'content-type': 'application/gzip', 'content-length': String(MAX_CODE_BUNDLE_BYTES + 1) },
        });
        request.on('response', (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on('error', reject);
        request.write(BUNDLE);
      });
      expect(declared).toBe(413);
      // Streamed without a length: cut off once it passes the limit. The service answers and closes
      // while the client is still sending, so the client may see the reset before the answer.
      const chunk = Buffer.alloc(1024 * 1024, 1);
      chunk.set(BUNDLE.subarray(0, 2));
      async function* body() {
        for (let sent = 0; sent <= MAX_CODE_BUNDLE_BYTES; sent += chunk.length) yield chunk;
      }
      const streamed = await fetch(`${service.url}/v1/code-bundles`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/gzip' },
        body: Readable.toWeb(Readable.from(body())) as ReadableStream,
        duplex: 'half',
      }).then((response) => response.status, () => 'reset');
      expect([413, 'reset']).toContain(streamed);
      expect(await bundleFiles()).toEqual(before);
    }, 60_000);

    it('answers 401 without a key and 403 for another account', async () => {
      // An upload is a write: shape B.
      expectErrorB(await upload(BUNDLE, { 'x-service-account': service.accountId }), [], 401);
      const other = await createSecondAccount(service);
      expectErrorB(await upload(BUNDLE, { ...auth(), 'x-service-account': other.accountId }), [], 403);
    });

    it('serves the bytes to an agent of the account, with their SHA-256', async () => {
      const location = await service.privateLocation();
      const answer = await download(location.rawKey, bundleId);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('application/gzip');
      expect(answer.headers.get('x-content-sha256')).toBe(sha256(BUNDLE));
      expect(answer.bytes.equals(BUNDLE)).toBe(true);
    });

    it('answers 404 for an unknown bundle and for another account\'s, 401 without a location key', async () => {
      const location = await service.privateLocation();
      expectErrorA(await service.raw('GET', `/v1/agent/code-bundles/${randomUUID()}`, undefined, { authorization: `Bearer ${location.rawKey}` }), 404, 'Not Found');
      const other = await createSecondAccount(service);
      const theirs = { authorization: `Bearer ${other.apiKey}`, 'x-service-account': other.accountId };
      const theirLocation = await service.raw('POST', '/v1/private-locations', { name: 'theirs', slugName: 'theirs' }, theirs);
      const theirKey = await service.raw('POST', `/v1/private-locations/${theirLocation.body.id}/keys`, undefined, theirs);
      expectErrorA(
        await service.raw('GET', `/v1/agent/code-bundles/${bundleId}`, undefined, { authorization: `Bearer ${theirKey.body.rawKey}` }),
        404,
        'Not Found',
      );
      expectErrorA(await service.raw('GET', `/v1/agent/code-bundles/${bundleId}`), 401, 'Unauthorized');
      // A user key is not a location key.
      expectErrorA(await service.raw('GET', `/v1/agent/code-bundles/${bundleId}`, undefined, auth()), 401, 'Unauthorized');
    });
  });

  describe('create', () => {
    it('answers 201 with every default filled in and the bundle\'s hash, and reads back the same', async () => {
      const created = await create();
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        checkType: 'PLAYWRIGHT',
        name: 'Checkout suite',
        codeBundleId: bundleId,
        codeBundleSha256: sha256(BUNDLE),
        codeBundleSize: BUNDLE.length,
        engine: 'NODE_24',
        installCommand: 'npm ci',
        testCommand: 'npx playwright test',
        pwProjects: [],
        pwTags: [],
        activated: true,
        muted: false,
        shouldFail: false,
        locations: [],
        tags: [],
        alertSettings: null,
        useGlobalAlertSettings: true,
        groupId: null,
        groupOrder: null,
        alertChannelSubscriptions: [],
        retryStrategy: null,
        triggerIncident: null,
        runParallel: false,
        description: null,
        environmentVariables: [],
        frequency: 10,
        privateLocations: [],
        alertChannels: { email: [], webhook: [], slack: [], sms: [] },
        created_at: expect.any(String),
        updated_at: null,
      });
      expect((await service.api('GET', `/v1/checks/${created.body.id}`)).body).toEqual(created.body);
    });

    it('stores every engine and filter as sent; null lists are empty', async () => {
      for (const engine of ['NODE_22', 'NODE_24', 'NODE_26', 'BUN_1_3']) {
        const created = await create({ engine, installCommand: 'bun install', testCommand: 'bunx playwright test', pwProjects: ['chromium'], pwTags: ['@smoke', '@api'] });
        expect(created.status).toBe(201);
        expect(created.body).toMatchObject({ engine, installCommand: 'bun install', testCommand: 'bunx playwright test', pwProjects: ['chromium'], pwTags: ['@smoke', '@api'] });
      }
      const nulls = await create({ pwProjects: null, pwTags: null, environmentVariables: null, privateLocations: null });
      expect(nulls.body).toMatchObject({ pwProjects: [], pwTags: [], environmentVariables: [], privateLocations: [] });
    });
  });

  describe('validation', () => {
    const cases: [string, Record<string, unknown>, string[]][] = [
      ['no name', { name: undefined }, ['name']],
      ['no codeBundleId', { codeBundleId: undefined }, ['codeBundleId']],
      ['a codeBundleId that is not a uuid', { codeBundleId: 'bundle-1' }, ['codeBundleId']],
      ['an unknown engine', { engine: 'DENO_2' }, ['engine']],
      ['an empty installCommand', { installCommand: '' }, ['installCommand']],
      ['a blank testCommand', { testCommand: '   ' }, ['testCommand']],
      ['a command over 1024 characters', { testCommand: 'x'.repeat(1025) }, ['testCommand']],
      ['a repeated project', { pwProjects: ['chromium', 'chromium'] }, ['pwProjects']],
      ['a blank project', { pwProjects: ['  '] }, ['pwProjects.0']],
      ['a tag without @', { pwTags: ['@ok', 'smoke'] }, ['pwTags.1']],
      ['a tag with a space', { pwTags: ['@a b'] }, ['pwTags.0']],
      ['51 tags', { pwTags: Array.from({ length: 51 }, (_, index) => `@t${index}`) }, ['pwTags']],
      ['a reserved variable', { environmentVariables: [{ key: 'SERVICE', value: 'x' }] }, ['environmentVariables.0.key']],
      ['a repeated variable', { environmentVariables: [{ key: 'A', value: '1' }, { key: 'A', value: '2' }] }, ['environmentVariables.1.key']],
      ['an unknown private location', { privateLocations: ['nowhere'] }, ['privateLocations']],
      ['a frequency that is not allowed', { frequency: 7 }, ['frequency']],
    ];
    it.each(cases)('refuses %s, naming the field', async (_why, extra, fields) => {
      const body: Record<string, unknown> = { name: 'Suite', codeBundleId: bundleId, ...extra };
      for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
      expectErrorB(await service.api('POST', '/v1/checks/playwright', body), fields);
    });

    it('refuses a bundle that does not exist, and another account\'s', async () => {
      expectErrorB(await create({ codeBundleId: randomUUID() }), ['codeBundleId']);
      const other = await createSecondAccount(service);
      const response = await fetch(`${service.url}/v1/code-bundles`, {
        method: 'POST',
        headers: { authorization: `Bearer ${other.apiKey}`, 'x-service-account': other.accountId, 'content-type': 'application/gzip' },
        body: BUNDLE,
      });
      const theirs = (await response.json()) as { id: string };
      expectErrorB(await create({ codeBundleId: theirs.id }), ['codeBundleId']);
    });
  });

  describe('update', () => {
    it('changes only the fields sent, checks a new bundle, and takes its hash', async () => {
      const created = await create({ activated: false, pwTags: ['@smoke'] });
      const updated = await service.api('PUT', `/v1/checks/playwright/${created.body.id}`, { engine: 'NODE_22' });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ engine: 'NODE_22', pwTags: ['@smoke'], codeBundleSha256: sha256(BUNDLE) });
      expectErrorB(await service.api('PUT', `/v1/checks/playwright/${created.body.id}`, { codeBundleId: randomUUID() }), ['codeBundleId']);
      const other = gzipSync(Buffer.from('version 2'));
      const second = await upload(other);
      const moved = await service.api('PUT', `/v1/checks/playwright/${created.body.id}`, { codeBundleId: second.body.id });
      expect(moved.body).toMatchObject({ codeBundleId: second.body.id, codeBundleSha256: sha256(other), codeBundleSize: other.length });
      expectErrorB(await service.api('PUT', `/v1/checks/playwright/${created.body.id}`, { pwTags: ['nope'] }), ['pwTags.0']);
      expectErrorB(await service.api('PUT', `/v1/checks/multistep/${created.body.id}`, { name: 'x' }), [], 404);
    });
  });

  describe('jobs', () => {
    it('hands a run to an agent that declared PLAYWRIGHT: the bundle reference, engine, commands, filters, 30 minutes', async () => {
      const location = await service.privateLocation();
      const uptimeOnly = await new ManualAgent(service, location.rawKey).connect({ checkTypes: ['URL', 'MULTI_STEP'], runtimes: ['2026.04'] });
      const suiteAgent = await new ManualAgent(service, location.rawKey).connect({ checkTypes: ['URL', 'PLAYWRIGHT'], runtimes: [] });
      const created = await create({
        activated: false,
        privateLocations: [location.slugName],
        engine: 'NODE_26',
        pwProjects: ['chromium'],
        pwTags: ['@smoke'],
        environmentVariables: [{ key: 'TOKEN', value: 'hunter22', secret: true }],
      });
      const session = await triggerCheck(service, created.body.id);
      expect((await uptimeOnly.claim(0)).body.jobs).toEqual([]);
      const job = await suiteAgent.claimOne();
      expect(job).toMatchObject({
        checkSessionId: session.checkSessionId,
        checkType: 'PLAYWRIGHT',
        timeoutSeconds: 1800,
        runtimeId: null,
        environmentVariables: [{ key: 'TOKEN', value: 'hunter22', secret: true }],
        settings: {
          bundle: { id: bundleId, url: `/v1/agent/code-bundles/${bundleId}`, sha256: sha256(BUNDLE), size: BUNDLE.length },
          engine: 'NODE_26',
          installCommand: 'npm ci',
          testCommand: 'npx playwright test',
          pwProjects: ['chromium'],
          pwTags: ['@smoke'],
          shouldFail: false,
        },
      });
      // The job's own bundle URL is what the agent downloads.
      const bytes = await download(location.rawKey, (job.settings.bundle as { id: string }).id);
      expect(bytes.bytes.equals(BUNDLE)).toBe(true);
    });
  });

  describe('cancel', () => {
    async function running() {
      const location = await service.privateLocation();
      const agent = await new ManualAgent(service, location.rawKey).connect({ checkTypes: ['PLAYWRIGHT'], runtimes: [] });
      const created = await create({ activated: false, privateLocations: [location.slugName] });
      return { agent, checkId: created.body.id as string };
    }

    it('cancels a running suite: CANCELLED, the agent\'s lease extension refused, its late result a conflict', async () => {
      const { agent, checkId } = await running();
      const session = await triggerCheck(service, checkId);
      const job = await agent.claimOne();
      expect((await agent.extend(job.jobId)).status).toBe(200);
      const cancelled = await service.api('POST', `/v1/check-sessions/${session.checkSessionId}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ status: 'CANCELLED', stoppedAt: expect.any(String) });
      expect(cancelled.body.results).toEqual([expect.objectContaining({ isCancelled: true, aborted: true, hasErrors: false })]);
      const detail = await service.api('GET', new URL(cancelled.body.results[0].checkResultLink).pathname);
      expect(detail.body.error).toEqual({ code: 'CANCELLED', message: 'Cancelled while an agent was running it' });
      // The heartbeat tells the agent the job is gone, and that a user cancelled it.
      expect((await agent.heartbeat([job.jobId])).body).toMatchObject({ lost: [job.jobId], cancelled: [job.jobId] });
      expectErrorA(await agent.extend(job.jobId), 409, 'Conflict');
      expectErrorA(await agent.report(job), 409, 'Conflict');
      // Again: answered as it is.
      const again = await service.api('POST', `/v1/check-sessions/${session.checkSessionId}/cancel`);
      expect(again.body).toEqual(cancelled.body);
    });

    it('cancels a queued run before any agent takes it', async () => {
      const { agent, checkId } = await running();
      const session = await triggerCheck(service, checkId);
      const cancelled = await service.api('POST', `/v1/check-sessions/${session.checkSessionId}/cancel`);
      expect(cancelled.body.status).toBe('CANCELLED');
      expect((await agent.claim(0)).body.jobs).toEqual([]);
      const detail = await service.api('GET', new URL(cancelled.body.results[0].checkResultLink).pathname);
      expect(detail.body.error).toEqual({ code: 'CANCELLED', message: 'Cancelled before any agent took it' });
    });

    it('says a claimed run that had not started was cancelled before it started', async () => {
      const { agent, checkId } = await running();
      const session = await triggerCheck(service, checkId);
      const job = await agent.claimOne();
      const cancelled = await service.api('POST', `/v1/check-sessions/${session.checkSessionId}/cancel`);
      const detail = await service.api('GET', new URL(cancelled.body.results[0].checkResultLink).pathname);
      expect(detail.body.error).toEqual({ code: 'CANCELLED', message: 'Cancelled after an agent took it, before it started' });
      expect((await agent.heartbeat([], [job.jobId])).body).toMatchObject({ lost: [job.jobId], cancelled: [job.jobId] });
    });

    it('answers 404 for an unknown session and for another account\'s', async () => {
      const { checkId } = await running();
      const session = await triggerCheck(service, checkId);
      expectErrorB(await service.api('POST', `/v1/check-sessions/${randomUUID()}/cancel`), [], 404);
      const other = await createSecondAccount(service);
      const theirs = { authorization: `Bearer ${other.apiKey}`, 'x-service-account': other.accountId };
      expectErrorB(await service.raw('POST', `/v1/check-sessions/${session.checkSessionId}/cancel`, undefined, theirs), [], 404);
      expect((await service.api('GET', `/v1/check-sessions/${session.checkSessionId}`)).body.status).toBe('STARTED');
    });
  });

  it('describes the routes in /openapi.json', async () => {
    const document = (await service.raw('GET', '/openapi.json')).body;
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/v1/code-bundles', '/v1/agent/code-bundles/{id}', '/v1/checks/playwright', '/v1/checks/playwright/{id}']),
    );
    expect(document.paths['/v1/checks/playwright'].post.requestBody.content['application/json'].schema.properties.engine.enum).toEqual([
      'NODE_22',
      'NODE_24',
      'NODE_26',
      'BUN_1_3',
    ]);
  });
});
