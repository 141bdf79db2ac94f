/**
 * The service's /metrics: the demand at each private location (jobs queued
 * and leased, by lane, and how long the oldest has waited) and its connected
 * agents, which an autoscaler can read with no agent running at all.
 */
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { createIdleUrlCheck, expectErrorA, ManualAgent, triggerCheck } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function scrape(service: TestService, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(`${service.url}/metrics`, { headers });
  return { status: response.status, text: await response.text() };
}

/** The value of one series, by its exact label set in the order prom-client prints them. */
function valueOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe.each(DB_KINDS)('service metrics (%s)', (kind) => {
  it('counts jobs queued and leased per location and lane, the oldest wait, and connected agents', async () => {
    const service = await startTestService(kind);
    cleanup.push(() => service.close());
    const location = await service.privateLocation();
    const labels = `private_location_id="${location.id}",private_location="${location.slugName}"`;

    const idle = await scrape(service);
    expect(idle.status).toBe(200);
    expect(valueOf(idle.text, `outpost_service_agents_connected{${labels}}`)).toBe(0);
    expect(idle.text).not.toContain(`outpost_service_jobs{${labels}`);

    const first = await createIdleUrlCheck(service, [location.slugName]);
    const second = await createIdleUrlCheck(service, [location.slugName]);
    await triggerCheck(service, first.id);
    await triggerCheck(service, second.id);
    const queued = await scrape(service);
    expect(valueOf(queued.text, `outpost_service_jobs{${labels},lane="uptime",state="queued"}`)).toBe(2);
    expect(valueOf(queued.text, `outpost_service_oldest_queued_job_age_seconds{${labels},lane="uptime"}`)).toBeGreaterThanOrEqual(0);

    const agent = await new ManualAgent(service, location.rawKey).connect();
    await agent.claimOne();
    const running = await scrape(service);
    expect(valueOf(running.text, `outpost_service_jobs{${labels},lane="uptime",state="queued"}`)).toBe(1);
    expect(valueOf(running.text, `outpost_service_jobs{${labels},lane="uptime",state="leased"}`)).toBe(1);
    expect(valueOf(running.text, `outpost_service_agents_connected{${labels}}`)).toBe(1);
    expect(running.text).toMatch(/outpost_service_build_info\{version="[^"]+",node="v[\d.]+"\} 1/);

    const checked = spawnSync('promtool', ['check', 'metrics'], { input: running.text, encoding: 'utf8' });
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.status).toBe(0);
  });
});

describe('service metrics behind METRICS_TOKEN', () => {
  it('answers only a scraper with the token, and stays out of the API document', async () => {
    const token = 'scrape-token-0123456789';
    const service = await startTestService('pglite', { env: { METRICS_TOKEN: token } });
    cleanup.push(() => service.close());
    expectErrorA(await service.raw('GET', '/metrics'), 401, 'Unauthorized');
    expectErrorA(await service.raw('GET', '/metrics', undefined, { authorization: 'Bearer scrape-token-wrong-56789' }), 401, 'Unauthorized');
    const answer = await scrape(service, { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('# TYPE outpost_service_jobs gauge');
    const document = await service.api('GET', '/openapi.json');
    expect(Object.keys(document.body.paths)).not.toContain('/metrics');
  });
});
