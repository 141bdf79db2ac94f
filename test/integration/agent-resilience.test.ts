import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../../src/service/config.js';
import { startService } from '../../src/service/service.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { startRedisServer } from '../support/redis-server.js';
import { startTestService, type TestService } from '../support/service.js';
import { closedPort, respond, startTarget, type Target } from '../support/target.js';
import { runToFinal } from '../support/sessions.js';

const KEY = `pl_${'a'.repeat(40)}`;
const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function agentFor(config: Parameters<typeof startTestAgent>[0]): Promise<TestAgent> {
  const agent = await startTestAgent(config);
  cleanup.push(() => agent.stop());
  return agent;
}

const logText = (agent: TestAgent) => agent.logs.join('');
const readinessOf = async (agent: TestAgent) => (await agent.health('/-/readiness')).body?.status as string;

describe('agent health endpoints', () => {
  it('answers liveness and /health at once, and readiness 503 until connected', async () => {
    const port = await closedPort();
    const agent = await agentFor({ apiKey: KEY, apiUrl: `http://127.0.0.1:${port}` });
    expect((await agent.health('/-/liveness')).status).toBe(200);
    const health = await agent.health('/health');
    expect(health.status).toBe(200);
    expect(health.body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect((await agent.health('/-/readiness')).status).toBe(503);
    const metrics = await agent.health('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('outpost_build_info{version=');
    expect((await agent.health('/nope')).status).toBe(404);
  });
});

describe('agent whose health port is taken', () => {
  it('stops at start with one line naming the port', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as AddressInfo).port;
    await expect(startTestAgent({ apiKey: KEY, apiUrl: 'http://127.0.0.1:9', healthPort: port })).rejects.toMatchObject({
      code: 'PORT_IN_USE',
      message: `AGENT_HEALTH_PORT ${port} is already in use on 127.0.0.1; choose another AGENT_HEALTH_PORT`,
    });
  });
});

describe('agent against a service that is not there', () => {
  it('stays up, not ready, says where it failed, and becomes ready when the service appears', async () => {
    const port = await closedPort();
    const agent = await agentFor({ apiKey: KEY, apiUrl: `http://127.0.0.1:${port}` });
    await eventually(async () => ((await readinessOf(agent)) === 'service-unreachable' ? true : undefined), 10_000);
    expect(logText(agent)).toContain(`Cannot reach the service at http://127.0.0.1:${port}`);

    // The service comes up on that very port, with a location whose key the agent already holds.
    const config = loadServiceConfig({
      PORT: String(port),
      HOST: '127.0.0.1',
      BOOTSTRAP_ACCOUNT_ID: '5d1c6d7e-0c4e-4e57-9d55-3f0c8f5f1a01',
      BOOTSTRAP_API_KEY: 'bootstrap-key-0123456789',
      LOG_LEVEL: 'ERROR',
    });
    const service = await startService(config);
    cleanup.push(() => service.close());
    const [account] = await service.db.query<{ id: string }>('SELECT id FROM accounts');
    const { createPrivateLocation } = await import('../../src/service/store/private-locations.js');
    const { hashKey, maskKey } = await import('../../src/service/keys.js');
    const locationId = await createPrivateLocation(service.db, account!.id, { name: 'Late', slugName: 'late' });
    await service.db.query(
      'INSERT INTO private_location_keys (id, private_location_id, key_hash, masked_key) VALUES (gen_random_uuid(), $1, $2, $3)',
      [locationId, hashKey(KEY), maskKey(KEY)],
    );
    await eventually(async () => ((await readinessOf(agent)) === 'ready' ? true : undefined), 40_000, 'ready after recovery');
    expect(logText(agent)).toContain('connected to the service as an agent of private location \\"Late\\"');
  }, 60_000);
});

describe('agent with a refused key', () => {
  let service: TestService;
  afterEach(async () => service?.close());

  it('turns not-ready with a plain explanation, never logs the key, and keeps retrying', async () => {
    service = await startTestService('pglite');
    const agent = await agentFor({ apiKey: KEY, apiUrl: service.url });
    await eventually(async () => ((await readinessOf(agent)) === 'key-refused' ? true : undefined), 10_000);
    const readiness = await agent.health('/-/readiness');
    expect(readiness.status).toBe(503);
    expect(readiness.body.detail).toContain('refused the private location key');
    expect(logText(agent)).toContain('Check API_KEY');
    expect(logText(agent)).not.toContain(KEY);
    expect(logText(agent)).not.toContain(KEY.slice(3, 20));
  });

  it('is refused on its next call once its key is removed, and says so', async () => {
    service = await startTestService('pglite', { maxWaitSeconds: 1 });
    const location = await service.privateLocation();
    const agent = await agentFor({ apiKey: location.rawKey, apiUrl: service.url });
    await eventually(async () => ((await readinessOf(agent)) === 'ready' ? true : undefined), 10_000);
    const removed = await service.api('DELETE', `/v1/private-locations/${location.id}/keys/${location.keyId}`);
    expect(removed.status).toBe(204);
    await eventually(async () => ((await readinessOf(agent)) === 'key-refused' ? true : undefined), 35_000, 'refusal');
    expect(logText(agent)).not.toContain(location.rawKey);
  }, 45_000);
});

describe('agent with Redis down at start', () => {

  it('stays up and not ready, names Redis in its log, and goes on once Redis answers', async () => {
    const service = await startTestService('pglite');
    cleanup.push(() => service.close());
    const location = await service.privateLocation();
    const port = await closedPort();
    const healthPort = await closedPort();
    const agentPromise = agentFor({
      apiKey: location.rawKey,
      apiUrl: service.url,
      redisUrl: `redis://127.0.0.1:${port}`,
      healthPort,
    });
    // The agent is not up yet, but its health server is, and says why.
    const waiting = await eventually(async () => {
      const response = await fetch(`http://127.0.0.1:${healthPort}/-/readiness`).catch(() => undefined);
      const body = response && ((await response.json()) as { status: string; detail: string });
      return body?.status === 'redis-unavailable' ? { status: response!.status, body } : undefined;
    }, 10_000, 'redis-unavailable');
    expect(waiting.status).toBe(503);
    expect(waiting.body.detail).toContain(`Redis at 127.0.0.1:${port} is not reachable (ECONNREFUSED)`);

    const redis = await startRedisServer(port);
    // Stop the agent before its Redis goes away: cleanup runs in reverse.
    cleanup.unshift(() => redis.stop());
    const agent = await agentPromise;
    expect(logText(agent)).toContain(`Redis at 127.0.0.1:${port} is not reachable (ECONNREFUSED)`);
    await eventually(async () => ((await readinessOf(agent)) === 'ready' ? true : undefined), 15_000, 'ready');
  }, 30_000);
});

describe('agent whose Redis restarts', () => {
  it('is not ready while Redis is away, says so once, keeps running uptime checks, and runs jobs again once it is back', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    cleanup.push(() => {
      process.off('warning', onWarning);
    });
    const target = await startTarget({ '/ok': respond(200, 'fine') });
    cleanup.push(() => target.close());
    const service = await startTestService('pglite');
    cleanup.push(() => service.close());
    const location = await service.privateLocation();
    const port = await closedPort();
    let redis = await startRedisServer(port);
    const agent = await agentFor({ apiKey: location.rawKey, apiUrl: service.url, redisUrl: `redis://127.0.0.1:${port}` });
    cleanup.unshift(() => redis.stop());
    await eventually(async () => ((await readinessOf(agent)) === 'ready' ? true : undefined), 10_000, 'ready');

    await redis.stop();
    const down = await eventually(async () => {
      const answer = await agent.health('/-/readiness');
      return answer.body?.status === 'redis-unavailable' ? answer : undefined;
    }, 5000, 'redis-unavailable');
    expect(down.status).toBe(503);
    expect(down.body.detail).toContain(`Redis at 127.0.0.1:${port} is not reachable`);
    expect(down.body.detail).toContain('no script jobs are claimed until it is back; uptime probes go on');
    // Uptime jobs wait in the agent's memory, not in Redis: monitoring goes on through the outage.
    const during = await service.api('POST', '/v1/checks/url', {
      name: 'while Redis is away',
      activated: false,
      privateLocations: [location.slugName],
      request: { url: `${target.url}/ok` },
    });
    const { session: duringSession } = await runToFinal(service, during.body.id, 15_000);
    expect(duringSession.status).toBe('PASSED');
    expect((await agent.health('/-/readiness')).body.status).toBe('redis-unavailable');
    // A while away: reconnect attempts are counted, not logged one by one.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    redis = await startRedisServer(port);
    const back = Date.now();
    await eventually(async () => ((await readinessOf(agent)) === 'ready' ? true : undefined), 10_000, 'ready again');
    expect(Date.now() - back).toBeLessThan(10_000);

    const created = await service.api('POST', '/v1/checks/url', {
      name: 'after the restart',
      activated: false,
      privateLocations: [location.slugName],
      request: { url: `${target.url}/ok` },
    });
    const { session } = await runToFinal(service, created.body.id, 15_000);
    expect(session.status).toBe('PASSED');
    const log = logText(agent);
    expect(log.match(/is unreachable/g)).toHaveLength(1);
    expect(log).toContain(`Redis at 127.0.0.1:${port} is reachable again`);
    expect(warnings.filter((warning) => warning.includes('MaxListenersExceeded'))).toEqual([]);
  }, 45_000);
});

describe('agent against a service that answers nonsense', () => {
  let fake: Server;
  afterEach(() => new Promise<void>((resolve) => (fake ? fake.close(() => resolve()) : resolve())));

  it('logs the malformed claim answer, stays ready, and keeps polling with backoff', async () => {
    let claims = 0;
    fake = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        response.setHeader('content-type', 'application/json');
        if (request.url === '/v1/agent/hello') {
          response.end(
            JSON.stringify({
              privateLocation: { id: 'x', slugName: 'fake', name: 'Fake' },
              leaseSeconds: 300,
              maxWaitSeconds: 0,
            }),
          );
        } else if (request.url === '/v1/agent/jobs/claim') {
          claims += 1;
          response.end(claims % 2 ? JSON.stringify({ jobs: [{ jobId: 42 }] }) : 'not json at all');
        } else {
          response.statusCode = 404;
          response.end('{}');
        }
      });
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const port = (fake.address() as AddressInfo).port;
    const agent = await agentFor({ apiKey: KEY, apiUrl: `http://127.0.0.1:${port}` });
    await eventually(() => (claims >= 3 ? true : undefined), 15_000, 'three claims');
    const log = logText(agent);
    expect(log).toContain('unexpected body');
    expect(log).toContain('body that is not JSON');
    expect(agent.readiness.state).toBe('ready');
    // Backoff, not a spin: three claims take at least the first two delays.
    expect(claims).toBeLessThan(20);
  }, 30_000);
});

describe('agent shutdown', () => {
  let target: Target;
  afterEach(async () => target?.close());

  it('turns not-ready at once, lets the running job finish and report, and releases the ones not started', async () => {
    target = await startTarget({ '/slow': respond(200, 'slow', 1500) });
    const service = await startTestService('pglite');
    cleanup.push(() => service.close());
    const location = await service.privateLocation();
    const agent = await startTestAgent({
      apiKey: location.rawKey,
      apiUrl: service.url,
      uptimeConcurrency: 1,
      shutdownGraceMs: 10_000,
    });
    await eventually(async () => ((await readinessOf(agent)) === 'ready' ? true : undefined), 10_000);
    const ids: string[] = [];
    for (const name of ['first', 'second']) {
      const created = await service.api('POST', '/v1/checks/url', {
        name,
        activated: false,
        privateLocations: [location.slugName],
        request: { url: `${target.url}/slow` },
      });
      ids.push(created.body.id);
    }
    const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: ids } });
    const [first, second] = triggered.body.sessions.map((session: any) => session.checkSessionId);
    await eventually(() => (target.hits.get('/slow') ? true : undefined), 10_000, 'first job running');

    const stopping = agent.stop();
    expect((await agent.health('/-/readiness')).status).toBe(503);
    await stopping;

    const done = await service.api('GET', `/v1/check-sessions/${first}`);
    expect(done.body.status).toBe('PASSED');
    const waiting = await service.api('GET', `/v1/check-sessions/${second}`);
    expect(waiting.body.status).toMatch(/STARTED|PROGRESS/);
    const [job] = await service.service.db.query<{ state: string; agent_id: string | null }>(
      'SELECT state, agent_id FROM jobs WHERE session_id = $1',
      [second],
    );
    expect(job).toEqual({ state: 'queued', agent_id: null });
    expect(target.hits.get('/slow')).toBe(1);
    // Closing its own Redis connection is no outage.
    expect(logText(agent)).not.toContain('is unreachable');
  }, 30_000);

  it('ends within its grace period when the service stops answering', async () => {
    const held: ServerResponse[] = [];
    const hung = createServer((request, response) => {
      request.resume();
      if (request.url === '/v1/agent/hello') {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ privateLocation: { id: 'x', slugName: 'hung', name: 'Hung' }, leaseSeconds: 30, maxWaitSeconds: 20 }));
      } else held.push(response);
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    cleanup.push(async () => {
      hung.closeAllConnections();
      await new Promise((resolve) => hung.close(resolve));
    });
    const agent = await startTestAgent({
      apiKey: KEY,
      apiUrl: `http://127.0.0.1:${(hung.address() as AddressInfo).port}`,
      shutdownGraceMs: 2000,
    });
    await eventually(() => (held.length > 0 ? true : undefined), 10_000, 'a claim held open');
    const started = Date.now();
    await agent.stop();
    expect(Date.now() - started).toBeLessThan(2000 + 5000);
  }, 30_000);

  it('releases a job still running when the grace period ends', async () => {
    target = await startTarget({ '/hang': respond(200, 'late', 8000) });
    const service = await startTestService('pglite');
    cleanup.push(() => service.close());
    const location = await service.privateLocation();
    const agent = await startTestAgent({ apiKey: location.rawKey, apiUrl: service.url, shutdownGraceMs: 300 });
    await eventually(async () => ((await readinessOf(agent)) === 'ready' ? true : undefined), 10_000);
    const created = await service.api('POST', '/v1/checks/url', {
      name: 'hang',
      activated: false,
      privateLocations: [location.slugName],
      request: { url: `${target.url}/hang` },
      maxResponseTime: 20_000,
      degradedResponseTime: 10_000,
    });
    const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [created.body.id] } });
    const sessionId = triggered.body.sessions[0].checkSessionId;
    await eventually(() => (target.hits.get('/hang') ? true : undefined), 10_000, 'job running');
    const started = Date.now();
    await agent.stop();
    expect(Date.now() - started).toBeLessThan(5000);
    const [job] = await service.service.db.query<{ state: string }>('SELECT state FROM jobs WHERE session_id = $1', [
      sessionId,
    ]);
    expect(job!.state).toBe('queued');
  }, 30_000);
});
