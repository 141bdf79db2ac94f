import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeCatalog } from '../../src/runtimes/catalog.js';
import { createSecondAccount, expectErrorA } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const FIELDS = ['dependencies', 'description', 'multiStepSupport', 'name', 'nodeJsVersion', 'runtimeEndOfLife', 'stage'];

describe.each(DB_KINDS)('runtimes API (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind);
  });
  afterAll(async () => service?.close());

  it('lists every runtime record, newest first, with exactly the public fields', async () => {
    const answer = await service.api('GET', '/v1/runtimes');
    expect(answer.status).toBe(200);
    expect(answer.body.map((runtime: { name: string }) => runtime.name)).toEqual(runtimeCatalog().map((runtime) => runtime.name));
    for (const runtime of answer.body) expect(Object.keys(runtime).sort(), runtime.name).toEqual(FIELDS);
    expect(answer.body[0]).toEqual({
      name: '2026.04',
      multiStepSupport: true,
      nodeJsVersion: '24.13.1',
      dependencies: {
        '@playwright/test': '1.58.2',
        axios: '1.13.5',
        mysql2: expect.stringMatching(/^\d+\.\d+\.\d+$/),
        winston: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      },
      stage: 'CURRENT',
      runtimeEndOfLife: '2028-04-30',
      description: expect.stringContaining('Node.js 24.13.1'),
    });
    const removed = answer.body.find((runtime: { name: string }) => runtime.name === '2022.10');
    expect(removed).toMatchObject({ stage: 'REMOVED', dependencies: {}, multiStepSupport: false });
  });

  it('reads one runtime by id, the same as in the list', async () => {
    const list = await service.api('GET', '/v1/runtimes');
    for (const id of ['2025.04', '2023.09']) {
      const one = await service.api('GET', `/v1/runtimes/${id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(list.body.find((runtime: { name: string }) => runtime.name === id));
    }
    const stable = await service.api('GET', '/v1/runtimes/2025.04');
    expect(stable.body.dependencies).toMatchObject({ '@playwright/test': '1.51.1', axios: '0.28.0' });
  });

  it('answers 404 shape A to an id that is no runtime', async () => {
    for (const id of ['nope', '2026.4', '2099.01', '%2E%2E']) {
      const answer = await service.api('GET', `/v1/runtimes/${id}`);
      expectErrorA(answer, 404, 'Not Found');
    }
    const answer = await service.api('GET', '/v1/runtimes/nope');
    expect(answer.body.message).toBe('Runtime "nope" not found');
  });

  it('needs the user API credentials like every other user call', async () => {
    for (const path of ['/v1/runtimes', '/v1/runtimes/2026.04', '/v1/runtimes/nope']) {
      expectErrorA(await service.raw('GET', path), 401, 'Unauthorized');
      expectErrorA(await service.raw('GET', path, undefined, { authorization: `Bearer ${service.apiKey}` }), 401, 'Unauthorized');
      expectErrorA(
        await service.raw('GET', path, undefined, { authorization: 'Bearer wrong-key', 'x-service-account': service.accountId }),
        401,
        'Unauthorized',
      );
    }
    const other = await createSecondAccount(service);
    expectErrorA(
      await service.raw('GET', '/v1/runtimes', undefined, { authorization: `Bearer ${other.apiKey}`, 'x-service-account': service.accountId }),
      403,
      'Forbidden',
    );
    const own = await service.raw('GET', '/v1/runtimes', undefined, {
      authorization: `Bearer ${other.apiKey}`,
      'x-service-account': other.accountId,
    });
    expect(own.status).toBe(200);
  });

  it('is described in /openapi.json, under the account credentials', async () => {
    const document = (await service.raw('GET', '/openapi.json')).body;
    const list = document.paths['/v1/runtimes'].get;
    const one = document.paths['/v1/runtimes/{id}'].get;
    expect(list.tags).toEqual(['Runtimes']);
    // 429: every user route is rate-limited.
    expect(Object.keys(list.responses).sort()).toEqual(['200', '429']);
    expect(Object.keys(one.responses).sort()).toEqual(['200', '404', '429']);
    expect(one.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })]);
    expect(document.security).toEqual([{ apiKey: [], account: [] }]);
    const schema = list.responses['200'].content['application/json'].schema;
    expect(schema.items).toEqual({ $ref: '#/components/schemas/Runtime' });
    expect(Object.keys(document.components.schemas.Runtime.properties).sort()).toEqual(FIELDS);
  });
});
