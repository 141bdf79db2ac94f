import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../support/databases.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { startTestService, type TestService } from '../support/service.js';
import { startRedisServer, type TestRedis } from '../support/redis-server.js';
import { respond, startTarget, type Target } from '../support/target.js';

const FINAL = new Set(['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED']);

/**
 * The whole path with real parts: the service on PGlite and on PostgreSQL, an
 * agent with BullMQ on an embedded redis-server (and on the machine's Redis),
 * and a loopback site. Sessions are read back through the public API.
 */
describe.each([
  { kind: DB_KINDS[0]!, redis: 'embedded' },
  { kind: DB_KINDS[1]!, redis: 'external' },
] as const)('URL monitors end to end on $kind with $redis Redis', ({ kind, redis }) => {
  let service: TestService;
  let agent: TestAgent;
  let target: Target;
  let slug: string;
  let locationKey: string;
  let externalRedis: TestRedis | undefined;

  beforeAll(async () => {
    target = await startTarget({
      '/ok': respond(200, 'fine'),
      '/error': respond(500, 'boom'),
      '/slow': respond(200, 'slow', 400),
    });
    service = await startTestService(kind);
    if (redis === 'external') externalRedis = await startRedisServer();
    const location = await service.privateLocation();
    slug = location.slugName;
    locationKey = location.rawKey;
    agent = await startTestAgent({
      apiKey: location.rawKey,
      apiUrl: service.url,
      redisUrl: externalRedis?.url,
    });
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');
  });

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await target?.close();
    await externalRedis?.stop();
  });

  async function runCheck(body: Record<string, unknown>) {
    const created = await service.api('POST', '/v1/checks/url', {
      activated: false,
      privateLocations: [slug],
      frequency: 1,
      ...body,
    });
    expect(created.status).toBe(201);
    const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [created.body.id] } });
    expect(triggered.status).toBe(201);
    const [session] = triggered.body.sessions;
    expect(['STARTED', 'PROGRESS']).toContain(session.status);
    expect(session.runSource).toBe('TRIGGER_API');
    return eventually(async () => {
      const read = await service.api('GET', `/v1/check-sessions/${session.checkSessionId}`);
      return FINAL.has(read.body.status) ? read.body : undefined;
    }, 20_000, 'a final session');
  }

  it('records a PASSED session with one FINAL result and real timings for a healthy page', async () => {
    const session = await runCheck({
      name: 'healthy',
      request: { url: `${target.url}/ok`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    });
    expect(session.status).toBe('PASSED');
    expect(session.runLocations).toEqual([slug]);
    expect(session.stoppedAt).not.toBeNull();
    expect(session.timeElapsed).toBeGreaterThanOrEqual(0);
    expect(session.results).toHaveLength(1);
    const [result] = session.results;
    expect(result).toMatchObject({
      checkType: 'URL',
      runLocation: slug,
      resultType: 'FINAL',
      hasErrors: false,
      hasFailures: false,
      isDegraded: false,
      aborted: false,
      isCancelled: false,
      name: 'healthy',
      statusCode: 200,
    });
    expect(result.responseTime).toBeGreaterThan(0);
    for (const phase of ['dns', 'tcp', 'firstByte', 'download', 'total']) {
      expect(typeof result.timings[phase]).toBe('number');
    }
    expect(result.timings.tls).toBeNull();
    const detail = await service.api('GET', new URL(result.checkResultLink).pathname);
    expect(detail.status).toBe(200);
    expect(detail.body.assertions).toEqual([
      { source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '200', actual: 200, passed: true },
    ]);
  });

  it('records a FAILED session for a target that answers 500', async () => {
    const session = await runCheck({
      name: 'broken',
      request: { url: `${target.url}/error`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    });
    expect(session.status).toBe('FAILED');
    expect(session.results[0]).toMatchObject({ hasFailures: true, statusCode: 500, isDegraded: false });
  });

  it('records a DEGRADED session for a target slower than degradedResponseTime', async () => {
    const session = await runCheck({
      name: 'slow',
      request: { url: `${target.url}/slow` },
      degradedResponseTime: 200,
      maxResponseTime: 5000,
    });
    expect(session.status).toBe('DEGRADED');
    expect(session.results[0]).toMatchObject({ hasFailures: false, isDegraded: true, statusCode: 200 });
    // The target's 400 ms timer counts from its event loop's cached clock: a few ms of slack.
    expect(session.results[0].responseTime).toBeGreaterThanOrEqual(395);
  });

  it('records a FAILED session with the connection error when nothing listens', async () => {
    const session = await runCheck({ name: 'refused', request: { url: 'http://127.0.0.1:9/' } });
    expect(session.status).toBe('FAILED');
    expect(session.results[0]).toMatchObject({ hasErrors: true, statusCode: null });
    expect(session.results[0].error.code).toBe('CONNECTION_FAILED');
  });

  it('shows the agent on its private location and counts its work in /metrics', async () => {
    const locations = await service.api('GET', '/v1/private-locations');
    const mine = locations.body.find((location: any) => location.slugName === slug);
    expect(mine.agentCount).toBe(1);
    expect(mine.runningAgents[0].agentId).toBe(agent.agentId);
    expect(mine.lastSeen).not.toBeNull();
    const metrics = await agent.health('/metrics');
    expect(metrics.text).toMatch(/outpost_jobs_finished_total\{check_type="URL",status="passed"\} [1-9]/);
    expect(metrics.text).toMatch(/outpost_jobs_finished_total\{check_type="URL",status="failed"\} [1-9]/);
  });

  it('never writes a key to a log line, on either side', () => {
    const lines = [...agent.logs, ...service.logs].join('');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines).not.toContain(locationKey);
    expect(lines).not.toContain(service.apiKey);
  });

  it('runs an activated check on its schedule without a trigger', async () => {
    const created = await service.api('POST', '/v1/checks/url', {
      name: 'scheduled',
      privateLocations: [slug],
      frequency: 1,
      request: { url: `${target.url}/ok` },
    });
    const session = await eventually(async () => {
      const rows = await service.service.db.query<{ id: string; status: string; run_source: string }>(
        'SELECT id, status, run_source FROM check_sessions WHERE check_id = $1',
        [created.body.id],
      );
      return rows.find((row) => row.status === 'PASSED');
    }, 15_000, 'a scheduled session');
    expect(session.run_source).toBe('SCHEDULER');
  });
});
