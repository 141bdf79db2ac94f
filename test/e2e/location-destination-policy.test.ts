import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { startTestService, type TestService } from '../support/service.js';

const FINAL = new Set(['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT']);

/** A location's destination policy through the whole path: API, job, agent, probe thread, result. */
describe('a private location that may not reach loopback', () => {
  let service: TestService;
  let agent: TestAgent;
  let target: Server;
  let hits = 0;
  let location: Awaited<ReturnType<TestService['privateLocation']>>;

  beforeAll(async () => {
    target = createServer((_request, response) => {
      hits += 1;
      response.writeHead(200).end('ok');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    service = await startTestService('pglite');
    location = await service.privateLocation();
    const denied = await service.api('PUT', `/v1/private-locations/${location.id}/destination-policy`, {
      denied: ['127.0.0.0/8', '::1'],
    });
    expect(denied.status).toBe(200);
    agent = await startTestAgent({ apiKey: location.rawKey, apiUrl: service.url });
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000);
  });

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    target?.closeAllConnections();
    await new Promise((resolve) => target?.close(resolve));
  });

  async function runCheck(checkId: string) {
    const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [checkId] } });
    const id = triggered.body.sessions[0].checkSessionId;
    const session = await eventually(async () => {
      const read = await service.api('GET', `/v1/check-sessions/${id}`);
      return FINAL.has(read.body.status) ? read.body : undefined;
    }, 20_000, 'a final session');
    return (await service.api('GET', new URL(session.results[0].checkResultLink).pathname)).body;
  }

  it('fails a URL check at a loopback target with DESTINATION_DENIED, and passes once the location allows it', async () => {
    const port = (target.address() as AddressInfo).port;
    const check = await service.api('POST', '/v1/checks/url', {
      name: 'Loopback health',
      activated: false,
      privateLocations: [location.slugName],
      request: { url: `http://localhost:${port}/health` },
    });
    expect(check.status, JSON.stringify(check.body)).toBe(201);

    const denied = await runCheck(check.body.id);
    expect(JSON.stringify(denied)).toContain('DESTINATION_DENIED');
    expect(denied).toMatchObject({ hasErrors: true });
    expect(hits).toBe(0);

    const opened = await service.api('PUT', `/v1/private-locations/${location.id}/destination-policy`, {
      allowed: ['127.0.0.1', '::1'],
      denied: ['127.0.0.0/8'],
    });
    expect(opened.status).toBe(200);
    const allowed = await runCheck(check.body.id);
    expect(allowed).toMatchObject({ hasErrors: false, hasFailures: false });
    expect(hits).toBe(1);
  });
});
