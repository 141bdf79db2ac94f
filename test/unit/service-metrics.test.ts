/**
 * The service's /metrics without a running service: the opt-out, what a
 * scrape answers while the database is away, and how results are classed.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../../src/service/config.js';
import type { Database, Queryable } from '../../src/service/db/database.js';
import { ServiceMetrics, statusOf } from '../../src/service/service-metrics.js';

const flags = { has_errors: false, has_failures: false, is_degraded: false, is_cancelled: false, timed_out: false };

describe('service metrics', () => {
  it('give per-check series to 1000 check/location pairs by default; METRICS_PER_CHECK=false gives none', () => {
    expect(loadServiceConfig({}).metricsPerCheckLimit).toBe(1000);
    expect(loadServiceConfig({ METRICS_PER_CHECK_LIMIT: '50' }).metricsPerCheckLimit).toBe(50);
    expect(loadServiceConfig({ METRICS_PER_CHECK: 'false', METRICS_PER_CHECK_LIMIT: '50' }).metricsPerCheckLimit).toBe(0);
    expect(() => loadServiceConfig({ METRICS_PER_CHECK_LIMIT: '0' })).toThrow(/METRICS_PER_CHECK_LIMIT/);

    const names = (perCheckLimit: number) =>
      new ServiceMetrics({ db: { query: () => Promise.resolve([]) }, perCheckLimit }).registry.getMetricsAsArray().map((metric) => metric.name);
    expect(names(1000)).toEqual(expect.arrayContaining(['outpost_check_status', 'outpost_check_results_total', 'outpost_check_response_time_seconds']));
    expect(names(0).filter((name) => name.startsWith('outpost_check_') || name === 'outpost_service_check_metrics_omitted')).toEqual([]);
  });

  it('still answer while the database is away: database_up 0, and no series read from it', async () => {
    let queried = 0;
    const db = {
      query: () => {
        queried++;
        return Promise.reject(new Error('unreachable'));
      },
      check: () => Promise.resolve({ reachable: false, error: 'ECONNREFUSED', ms: 2000 }),
    } as unknown as Database;
    const text = await new ServiceMetrics({ db }).registry.metrics();
    expect(queried).toBe(0);
    expect(text).toMatch(/^outpost_service_database_up 0$/m);
    expect(text).not.toMatch(/^outpost_(service_jobs|service_agents_connected|check_status)\{/m);
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(checked.stdout + checked.stderr).toBe('');
  });

  it('read the database once per scrape, whatever the number of metrics that need it', async () => {
    let queried = 0;
    const db: Queryable = {
      query: <Row>() => {
        queried++;
        return Promise.resolve([] as Row[]);
      },
    };
    const metrics = new ServiceMetrics({ db });
    await metrics.registry.metrics();
    // SELECT 1, agents, jobs, latest results and the pair count.
    expect(queried).toBe(5);
  });

  it('class each result as passed, degraded, failed, timed_out or cancelled', () => {
    expect(statusOf(flags)).toBe('passed');
    expect(statusOf({ ...flags, is_degraded: true })).toBe('degraded');
    expect(statusOf({ ...flags, is_degraded: true, has_failures: true })).toBe('failed');
    expect(statusOf({ ...flags, has_errors: true })).toBe('failed');
    expect(statusOf({ ...flags, has_errors: true, timed_out: true })).toBe('timed_out');
    expect(statusOf({ ...flags, is_cancelled: true })).toBe('cancelled');
  });
});
