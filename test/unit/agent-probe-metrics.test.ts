/**
 * The agent's per-check series (AGENT_METRICS_PER_CHECK): blackbox_exporter's
 * names filled from results, and bounded by age and count.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { AgentMetrics, certificateExpiry } from '../../src/agent/metrics.js';
import type { Job, Result } from '../../src/protocol/agent-api.js';

const HOUR = 3_600_000;

function job(checkId: string, overrides: Partial<Job> = {}): Pick<Job, 'checkId' | 'name' | 'checkType' | 'runLocation'> {
  return { checkId, name: `check ${checkId}`, checkType: 'URL', runLocation: 'berlin', ...overrides };
}

function result(overrides: Partial<Result> = {}): Result {
  return {
    agentId: '00000000-0000-4000-8000-000000000000',
    jobId: 'job',
    checkId: 'c',
    checkType: 'URL',
    runLocation: 'berlin',
    startedAt: new Date().toISOString(),
    stoppedAt: new Date().toISOString(),
    responseTime: 250,
    hasErrors: false,
    hasFailures: false,
    isDegraded: false,
    aborted: false,
    isCancelled: false,
    error: null,
    timings: { dns: 10, tcp: 20, tls: 30, firstByte: 150, download: 40, total: 250 },
    statusCode: 200,
    assertions: [],
    details: {},
    logs: [],
    artifacts: [],
    ...overrides,
  };
}

/** Series lines of `family` (exactly that name) in the text. */
function series(text: string, family: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${family}{`) || line.startsWith(`${family} `));
}

describe('per-check series of the agent', () => {
  it('are not there unless switched on', async () => {
    const metrics = new AgentMetrics();
    metrics.recordResult(job('a'), result());
    const text = await metrics.registry.metrics();
    expect(text).not.toMatch(/^# TYPE probe_/m);
    // Process metrics as stock dashboards name them.
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(text).toContain('# TYPE nodejs_eventloop_lag_p99_seconds gauge');
    expect(text).not.toContain('outpost_process_');
  });

  it("fill blackbox_exporter's series from a URL result, with the certificate's expiry when the result has it", async () => {
    const metrics = new AgentMetrics({ perCheck: true });
    metrics.recordResult(job('a'), result({ details: { tls: { validTo: '2031-01-02T03:04:05Z' } } }));
    const text = await metrics.registry.metrics();
    const labels = 'check_id="a",check_name="check a",check_type="URL",location="berlin"';
    expect(text).toContain(`probe_success{${labels}} 1`);
    expect(text).toContain(`probe_duration_seconds{${labels}} 0.25`);
    expect(text).toContain(`probe_http_status_code{${labels}} 200`);
    expect(text).toContain(`probe_dns_lookup_time_seconds{${labels}} 0.01`);
    for (const [phase, seconds] of [['resolve', 0.01], ['connect', 0.02], ['tls', 0.03], ['processing', 0.15], ['transfer', 0.04]] as const) {
      expect(text).toContain(`probe_http_duration_seconds{${labels},phase="${phase}"} ${seconds}`);
    }
    expect(text).toContain(`probe_ssl_earliest_cert_expiry{${labels}} ${Date.parse('2031-01-02T03:04:05Z') / 1000}`);
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(checked.stdout + checked.stderr).toBe('');
  });

  it('say what a failed run left: no response, no certificate; and give non-HTTP checks no HTTP series', async () => {
    const metrics = new AgentMetrics({ perCheck: true });
    metrics.recordResult(job('a'), result({ details: { tls: { validTo: '2031-01-02T03:04:05Z' } } }));
    metrics.recordResult(job('a'), result({ hasErrors: true, statusCode: null, timings: null, details: {} }));
    metrics.recordResult(job('t', { checkType: 'TCP' }), result({ checkType: 'TCP', statusCode: undefined }));
    metrics.recordResult(job('m', { checkType: 'MULTI_STEP' }), result({ checkType: 'MULTI_STEP', timings: undefined, statusCode: undefined }));
    const text = await metrics.registry.metrics();
    expect(series(text, 'probe_success')).toEqual([
      'probe_success{check_id="a",check_name="check a",check_type="URL",location="berlin"} 0',
      'probe_success{check_id="t",check_name="check t",check_type="TCP",location="berlin"} 1',
      'probe_success{check_id="m",check_name="check m",check_type="MULTI_STEP",location="berlin"} 1',
    ]);
    expect(series(text, 'probe_http_status_code')).toEqual(['probe_http_status_code{check_id="a",check_name="check a",check_type="URL",location="berlin"} 0']);
    expect(series(text, 'probe_http_duration_seconds').every((line) => line.includes('check_id="a"') && line.endsWith(' 0'))).toBe(true);
    expect(series(text, 'probe_ssl_earliest_cert_expiry')).toEqual([]);
    expect(series(text, 'probe_dns_lookup_time_seconds').map((line) => /check_id="(\w)"/.exec(line)![1])).toEqual(['t']);
  });

  it("drop a check's series when it has not run here for the TTL, the least recently run beyond the cap, and a renamed check's old name", async () => {
    let now = 0;
    const metrics = new AgentMetrics({ perCheck: true, perCheckTtlMs: 2 * HOUR, perCheckMaxPairs: 2, now: () => now });
    metrics.recordResult(job('a'), result());
    now = HOUR;
    metrics.recordResult(job('b'), result());
    metrics.recordResult(job('b', { runLocation: 'paris' }), result());
    // Three pairs, room for two: a, the least recently run, goes.
    const ids = async () => series(await metrics.registry.metrics(), 'probe_success').map((line) => /check_id="(\w)".*location="(\w+)"/.exec(line)!.slice(1).join('@'));
    expect(await ids()).toEqual(['b@berlin', 'b@paris']);
    now = 2.5 * HOUR;
    metrics.recordResult(job('b', { name: 'renamed' }), result());
    const text = await metrics.registry.metrics();
    expect(text).not.toContain('check_name="check b",check_type="URL",location="berlin"');
    expect(series(text, 'probe_http_duration_seconds')).toHaveLength(10);
    // Scraped past the TTL of b@paris (last run at 1 h): only the renamed pair is left.
    now = 3.5 * HOUR;
    const later = await metrics.registry.metrics();
    expect(series(later, 'probe_success')).toEqual(['probe_success{check_id="b",check_name="renamed",check_type="URL",location="berlin"} 1']);
    expect(series(later, 'probe_http_duration_seconds')).toHaveLength(5);
  });

  it('read a certificate expiry given as a date, seconds or milliseconds, and nothing else', () => {
    expect(certificateExpiry({ tls: { validTo: 'Jan  2 03:04:05 2031 GMT' } })).toBe(Date.parse('2031-01-02T03:04:05Z') / 1000);
    expect(certificateExpiry({ tls: { validTo: 1_924_999_999 } })).toBe(1_924_999_999);
    expect(certificateExpiry({ tls: { validTo: 1_924_999_999_500 } })).toBe(1_924_999_999);
    expect(certificateExpiry({ tls: { validTo: 'soon' } })).toBeUndefined();
    expect(certificateExpiry({ tls: null })).toBeUndefined();
    expect(certificateExpiry({})).toBeUndefined();
  });
});
