/**
 * Metrics people can graph: a real service and a real agent run two checks,
 * one passing and one failing, and both /metrics show them per check and
 * location (the service's from its database and its own counters, the
 * agent's under blackbox_exporter's names), with the HTTP, scheduler,
 * readiness and process series beside them; promtool accepts both.
 * Then the service's bound, METRICS_PER_CHECK_LIMIT (METRICS_PER_CHECK=false:
 * test/unit/service-metrics.test.ts), and the same SQL on PostgreSQL.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceMetrics } from '../../src/service/service-metrics.js';
import { ManualAgent, urlCheckBody } from '../support/agent-protocol.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { runToFinal } from '../support/sessions.js';
import { startTestService, type TestService } from '../support/service.js';
import { startTarget, type Target } from '../support/target.js';

async function scrape(service: TestService): Promise<string> {
  const response = await fetch(`${service.url}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

/** The value of the one series of `family` whose labels include every one given; undefined when none. */
function valueOf(text: string, family: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([name, value]) => `${name}="${value}"`);
  const lines = text
    .split('\n')
    .filter((line) => line.startsWith(`${family}{`) || line.startsWith(`${family} `))
    .filter((line) => wanted.every((pair) => line.includes(pair)));
  if (lines.length > 1) throw new Error(`${lines.length} series of ${family} match ${wanted.join(',')}`);
  return lines[0] === undefined ? undefined : Number(lines[0].slice(lines[0].lastIndexOf(' ') + 1));
}

function expectPromtoolAccepts(text: string): void {
  const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  expect(checked.stdout + checked.stderr).toBe('');
  expect(checked.status).toBe(0);
}

describe('per-check metrics of a real service and agent', () => {
  let service: TestService;
  let target: Target;
  let agent: TestAgent;
  let location: Awaited<ReturnType<TestService['privateLocation']>>;
  let up: { id: string; name: string };
  let down: { id: string; name: string };
  let serviceText: string;
  let agentText: string;

  beforeAll(async () => {
    target = await startTarget({
      '/ok': (_request, response) => response.writeHead(200).end('ok'),
      '/broken': (_request, response) => response.writeHead(500).end('broken'),
    });
    service = await startTestService('pglite');
    location = await service.privateLocation();
    agent = await startTestAgent({ apiKey: location.rawKey, apiUrl: service.url, mode: 'uptime', metricsPerCheck: true });
    const create = async (name: string, path: string) => {
      const answer = await service.api('POST', '/v1/checks/url', {
        name,
        activated: true,
        privateLocations: [location.slugName],
        request: { url: `${target.url}${path}` },
      });
      expect(answer.status).toBe(201);
      return { id: answer.body.id as string, name };
    };
    // Activated: the scheduler runs each at once (and then every 10 minutes).
    up = await create('shop home', '/ok');
    down = await create('shop "api"', '/broken');
    serviceText = await eventually(async () => {
      const text = await scrape(service);
      const counted = [up, down].every((check) => valueOf(text, 'outpost_check_status', { check_id: check.id }) !== undefined);
      return counted && valueOf(text, 'outpost_check_results_total', { check_id: down.id }) ? text : undefined;
    }, 20_000, 'both checks in the service metrics');
    agentText = (await agent.health('/metrics')).text;
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await target?.close();
  });

  it('serves each check\'s status, results and response time at the service, which promtool accepts', () => {
    expectPromtoolAccepts(serviceText);
    const at = (check: { id: string }) => ({ check_id: check.id, location: location.slugName, check_type: 'URL' });
    expect(valueOf(serviceText, 'outpost_check_status', { ...at(up), check_name: 'shop home' })).toBe(1);
    expect(valueOf(serviceText, 'outpost_check_status', { ...at(down), check_name: 'shop \\"api\\"' })).toBe(0);
    expect(valueOf(serviceText, 'outpost_check_degraded', at(up))).toBe(0);
    expect(valueOf(serviceText, 'outpost_check_last_result_timestamp_seconds', at(up))).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(valueOf(serviceText, 'outpost_check_results_total', { ...at(up), status: 'passed' })).toBe(1);
    expect(valueOf(serviceText, 'outpost_check_results_total', { ...at(down), status: 'failed' })).toBe(1);
    expect(valueOf(serviceText, 'outpost_check_response_time_seconds_count', at(up))).toBe(1);
    expect(valueOf(serviceText, 'outpost_check_response_time_seconds_bucket', { ...at(up), le: '+Inf' })).toBe(1);
    expect(valueOf(serviceText, 'outpost_service_check_metrics_omitted')).toBe(0);
  });

  it('counts HTTP requests by route template, and the scheduler, database and process at the service', async () => {
    await fetch(`${service.url}/v1/checks/${up.id}/nowhere`);
    const text = await scrape(service);
    expect(valueOf(text, 'outpost_service_http_requests_total', { method: 'POST', route: '/v1/agent/hello', status_code: '200' })).toBeGreaterThan(0);
    expect(valueOf(text, 'outpost_service_http_request_duration_seconds_count', { method: 'POST', route: '/v1/agent/jobs/claim', status_code: '200' })).toBeGreaterThan(0);
    expect(valueOf(text, 'outpost_service_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    // Templates, never the ids of the URLs asked for.
    expect(text).not.toMatch(/route="[^"]*[0-9a-f]{8}-[0-9a-f]{4}/);
    expect(valueOf(text, 'outpost_service_scheduler_ticks_total', { outcome: 'ok' })).toBeGreaterThan(0);
    expect(valueOf(text, 'outpost_service_scheduler_tick_duration_seconds_count')).toBeGreaterThan(0);
    expect(valueOf(text, 'outpost_service_scheduled_runs_total')).toBe(2);
    expect(valueOf(text, 'outpost_service_lease_sweeps_total')).toBeGreaterThan(0);
    expect(valueOf(text, 'outpost_service_last_lease_sweep_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(valueOf(text, 'outpost_service_expired_leases')).toBeUndefined();
    expect(valueOf(text, 'outpost_service_database_up')).toBe(1);
    expect(valueOf(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE nodejs_heap_size_used_bytes gauge');
    expect(text).not.toContain('outpost_service_process_');
  });

  it("serves the agent's per-check series under blackbox_exporter's names, which promtool accepts", () => {
    expectPromtoolAccepts(agentText);
    const at = (check: { id: string; name: string }) => ({ check_id: check.id, check_name: check.name.replaceAll('"', '\\"'), check_type: 'URL', location: location.slugName });
    expect(valueOf(agentText, 'probe_success', at(up))).toBe(1);
    expect(valueOf(agentText, 'probe_success', at(down))).toBe(0);
    expect(valueOf(agentText, 'probe_http_status_code', at(up))).toBe(200);
    expect(valueOf(agentText, 'probe_http_status_code', at(down))).toBe(500);
    expect(valueOf(agentText, 'probe_duration_seconds', at(up))).toBeGreaterThan(0);
    for (const phase of ['resolve', 'connect', 'tls', 'processing', 'transfer']) {
      expect(valueOf(agentText, 'probe_http_duration_seconds', { ...at(up), phase }), phase).toBeGreaterThanOrEqual(0);
    }
    expect(valueOf(agentText, 'probe_http_duration_seconds', { ...at(up), phase: 'connect' })).toBeGreaterThan(0);
    expect(valueOf(agentText, 'probe_dns_lookup_time_seconds', at(up))).toBeGreaterThanOrEqual(0);
    // Plain HTTP: no certificate, so no expiry.
    expect(agentText).not.toMatch(/^probe_ssl_earliest_cert_expiry\{/m);
    expect(valueOf(agentText, 'outpost_ready')).toBe(1);
    expect(valueOf(agentText, 'outpost_readiness_state', { state: 'ready' })).toBe(1);
    expect(valueOf(agentText, 'outpost_readiness_state', { state: 'starting' })).toBe(0);
    expect(valueOf(agentText, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(agentText).not.toContain('outpost_process_');
  });

  it('gives series to METRICS_PER_CHECK_LIMIT pairs, the oldest checks first, and says how many it left out', async () => {
    // A second set of metrics on the same database and events, as a service with METRICS_PER_CHECK_LIMIT=1 has.
    const limited = new ServiceMetrics({ db: service.service.db, events: service.service.events, perCheckLimit: 1 });
    // Counted from now on: a result of each check, the second beyond the limit.
    await runToFinal(service, down.id, 15_000);
    await runToFinal(service, up.id, 15_000);
    const text = await eventually(async () => {
      const scraped = await limited.registry.metrics();
      return valueOf(scraped, 'outpost_check_results_total', { check_id: up.id }) === 1 ? scraped : undefined;
    }, 5000, 'the first check counted');
    expectPromtoolAccepts(text);
    expect(valueOf(text, 'outpost_check_status', { check_id: up.id })).toBe(1);
    expect(valueOf(text, 'outpost_check_response_time_seconds_count', { check_id: up.id })).toBe(1);
    expect(text).not.toContain(down.id);
    expect(valueOf(text, 'outpost_service_check_metrics_omitted')).toBe(1);

    // A deleted check's series go, here and in the service's own; the next check moves up into the limit.
    expect((await service.api('DELETE', `/v1/checks/${up.id}`)).status).toBeLessThan(300);
    const after = await limited.registry.metrics();
    expect(after).not.toContain(up.id);
    expect(valueOf(after, 'outpost_check_status', { check_id: down.id })).toBe(0);
    expect(valueOf(after, 'outpost_service_check_metrics_omitted')).toBe(0);
    expect(await scrape(service)).not.toContain(up.id);
  });
});

describe('per-check metrics on PostgreSQL', () => {
  it('reads the latest result of each check and location, and counts results, as on PGlite', async () => {
    const service = await startTestService('postgres');
    try {
      const location = await service.privateLocation();
      const created = await service.api('POST', '/v1/checks/url', urlCheckBody([location.slugName], { name: 'pg', activated: true }));
      expect(created.status).toBe(201);
      const agent = await new ManualAgent(service, location.rawKey).connect();
      expect((await agent.report(await agent.claimOne(), { isDegraded: true, responseTime: 500 })).status).toBe(200);
      const text = await eventually(async () => {
        const scraped = await scrape(service);
        return valueOf(scraped, 'outpost_check_results_total', { check_id: created.body.id }) ? scraped : undefined;
      }, 5000, 'the result counted');
      const at = { check_id: created.body.id, check_name: 'pg', check_type: 'URL', location: location.slugName };
      expect(valueOf(text, 'outpost_check_status', at)).toBe(1);
      expect(valueOf(text, 'outpost_check_degraded', at)).toBe(1);
      expect(valueOf(text, 'outpost_check_results_total', { ...at, status: 'degraded' })).toBe(1);
      expect(valueOf(text, 'outpost_check_response_time_seconds_sum', at)).toBe(0.5);
      expectPromtoolAccepts(text);
    } finally {
      await service.close();
    }
  });
});
