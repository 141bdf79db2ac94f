import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorA, expectErrorANaming } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

interface Sample {
  location: string;
  startedAt: Date;
  responseTime: number;
  statusCode: number;
  failed: boolean;
  attempt: number;
  timings: { wait: number; dns: number; tcp: number; firstByte: number; download: number };
}

// Values computed here, independently of the service's SQL.
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const position = p * (sorted.length - 1);
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (position - lower);
};
const stddev = (xs: number[]) => {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((total, x) => total + (x - m) ** 2, 0) / (xs.length - 1));
};
const availability = (samples: Sample[]) => (100 * samples.filter((s) => !s.failed).length) / samples.length;

/** A deterministic spread of results over six hours, two locations, some failures and retries. */
function makeSamples(from: Date): Sample[] {
  const samples: Sample[] = [];
  for (let i = 0; i < 36; i += 1) {
    const location = i % 3 === 0 ? 'branch' : 'office';
    const responseTime = 20 + ((i * 37) % 101) + (i % 7) * 0.25;
    const failed = i % 5 === 0;
    samples.push({
      location,
      startedAt: new Date(from.getTime() + i * 10 * 60_000 + 1000),
      responseTime,
      statusCode: failed ? 500 : 200,
      failed,
      attempt: i % 9 === 0 ? 2 : 1,
      timings: {
        wait: 0.5 + (i % 4) * 0.1,
        dns: 1 + (i % 3),
        tcp: 2 + (i % 5) * 0.5,
        firstByte: responseTime / 2,
        download: responseTime / 4,
      },
    });
  }
  return samples;
}

describe.each(DB_KINDS)('URL monitor analytics (%s)', (kind) => {
  let service: TestService;
  let checkId: string;
  let samples: Sample[];
  const from = new Date(Date.UTC(2026, 10, 2, 0, 0, 0));
  const to = new Date(from.getTime() + 6 * 3600_000);

  beforeAll(async () => {
    service = await startTestService(kind);
    const office = await service.privateLocation('office');
    await service.privateLocation('branch');
    const created = await service.api('POST', '/v1/checks/url', {
      name: 'analytics target',
      activated: false,
      tags: ['team-a'],
      privateLocations: [office.slugName],
      request: { url: 'https://intranet.test/' },
    });
    checkId = created.body.id;
    samples = makeSamples(from);
    const db = service.service.db;
    const [location] = await db.query<{ id: string }>('SELECT id FROM private_locations WHERE slug_name = $1', ['office']);
    // Results are written as an agent's report would leave them; this tests the SQL, not the protocol.
    for (const sample of samples) {
      const sessionId = randomUUID();
      const jobId = randomUUID();
      await db.query(
        `INSERT INTO check_sessions (id, account_id, check_id, check_type, name, status, run_source, run_locations, started_at, stopped_at)
         VALUES ($1, $2, $3, 'URL', 'analytics target', $4, 'SCHEDULER', $5, $6, $6)`,
        [sessionId, service.accountId, checkId, sample.failed ? 'FAILED' : 'PASSED', JSON.stringify([sample.location]), sample.startedAt],
      );
      await db.query(
        `INSERT INTO jobs (id, session_id, account_id, check_id, private_location_id, run_location, check_type, state,
                           attempt, timeout_seconds, payload)
         VALUES ($1, $2, $3, $4, $5, $6, 'URL', 'done', $7, 10, '{}')`,
        [jobId, sessionId, service.accountId, checkId, location!.id, sample.location, sample.attempt],
      );
      await db.query(
        `INSERT INTO check_results (id, session_id, job_id, account_id, check_id, check_type, name, run_location,
            has_errors, has_failures, is_degraded, aborted, is_cancelled, response_time, status_code, timings,
            attempt, started_at, stopped_at)
         VALUES ($1, $2, $3, $4, $5, 'URL', 'analytics target', $6, false, $7, false, false, false, $8, $9, $10, $11, $12, $12)`,
        [
          randomUUID(),
          sessionId,
          jobId,
          service.accountId,
          checkId,
          sample.location,
          sample.failed,
          sample.responseTime,
          sample.statusCode,
          JSON.stringify({ ...sample.timings, tls: null, total: sample.responseTime }),
          sample.attempt,
          sample.startedAt,
        ],
      );
    }
  });
  afterAll(() => service?.close());

  interface StoredSample {
    failed: boolean;
    responseTime: number;
    statusCode?: number;
    retries?: number;
    resultType?: 'FINAL' | 'ATTEMPT';
    timings?: Record<string, number | null>;
    details?: Record<string, unknown>;
  }

  /** Results written as an agent's report would leave them, ten minutes apart from `from`, at the office. */
  async function storeResults(checkId: string, type: string, samples: readonly StoredSample[]): Promise<void> {
    const db = service.service.db;
    const [location] = await db.query<{ id: string }>('SELECT id FROM private_locations WHERE slug_name = $1', ['office']);
    for (const [i, sample] of samples.entries()) {
      const sessionId = randomUUID();
      const jobId = randomUUID();
      const startedAt = new Date(from.getTime() + i * 10 * 60_000);
      await db.query(
        `INSERT INTO check_sessions (id, account_id, check_id, check_type, name, status, run_source, run_locations, started_at)
         VALUES ($1, $2, $3, $4, 'x', 'PASSED', 'SCHEDULER', '["office"]', $5)`,
        [sessionId, service.accountId, checkId, type, startedAt],
      );
      await db.query(
        `INSERT INTO jobs (id, session_id, account_id, check_id, private_location_id, run_location, check_type, state, timeout_seconds, payload)
         VALUES ($1, $2, $3, $4, $5, 'office', $6, 'done', 10, '{}')`,
        [jobId, sessionId, service.accountId, checkId, location!.id, type],
      );
      await db.query(
        `INSERT INTO check_results (id, session_id, job_id, account_id, check_id, check_type, name, run_location,
            has_errors, has_failures, is_degraded, aborted, is_cancelled, response_time, status_code, timings, details,
            retries, result_type, started_at, stopped_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'x', 'office', false, $7, false, false, false, $8, $9, $10, $11, $12, $13, $14, $14)`,
        [randomUUID(), sessionId, jobId, service.accountId, checkId, type, sample.failed, sample.responseTime,
          sample.statusCode ?? null, sample.timings ? JSON.stringify(sample.timings) : null, JSON.stringify(sample.details ?? {}),
          sample.retries ?? 0, sample.resultType ?? 'FINAL', startedAt],
      );
    }
  }

  const analytics = (query: string) =>
    service.api('GET', `/v1/analytics/url-monitors/${checkId}?from=${from.getTime() / 1000}&to=${to.getTime() / 1000}&${query}`);

  it('computes every aggregate of responseTime over the window, as the test computes it', async () => {
    const suffixes = ['avg', 'max', 'min', 'median', 'p50', 'p90', 'p95', 'p99', 'stddev', 'sum'];
    const answer = await analytics(`metrics=${suffixes.map((s) => `responseTime_${s}`).join(',')},responseTime,availability,retries`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      checkId,
      name: 'analytics target',
      checkType: 'URL',
      activated: false,
      muted: false,
      frequency: 10,
      tags: ['team-a'],
      from: from.toISOString(),
      to: to.toISOString(),
      pagination: { page: 1, limit: 10 },
    });
    expect(answer.body.series).toHaveLength(1);
    const [point] = answer.body.series[0].data;
    const times = samples.map((s) => s.responseTime);
    const expected: Record<string, number> = {
      responseTime: mean(times),
      responseTime_avg: mean(times),
      responseTime_max: Math.max(...times),
      responseTime_min: Math.min(...times),
      responseTime_median: percentile(times, 0.5),
      responseTime_p50: percentile(times, 0.5),
      responseTime_p90: percentile(times, 0.9),
      responseTime_p95: percentile(times, 0.95),
      responseTime_p99: percentile(times, 0.99),
      responseTime_stddev: stddev(times),
      responseTime_sum: times.reduce((a, b) => a + b, 0),
      availability: availability(samples),
      retries: samples.filter((s) => s.attempt > 1).length,
    };
    for (const [name, value] of Object.entries(expected)) expect(point[name], name).toBeCloseTo(value, 6);
    expect(answer.body.metadata.responseTime_p90).toEqual({ label: 'Response time (p90)' });
    expect(answer.body.metadata.availability.label).toContain('Availability');
  });

  it('computes the timing phases from the stored timings', async () => {
    const answer = await analytics('metrics=wait_avg,dns_max,tcp_p95,firstByte_min,download_sum');
    const [point] = answer.body.series[0].data;
    expect(point.wait_avg).toBeCloseTo(mean(samples.map((s) => s.timings.wait)), 6);
    expect(point.dns_max).toBeCloseTo(Math.max(...samples.map((s) => s.timings.dns)), 6);
    expect(point.tcp_p95).toBeCloseTo(percentile(samples.map((s) => s.timings.tcp), 0.95), 6);
    expect(point.firstByte_min).toBeCloseTo(Math.min(...samples.map((s) => s.timings.firstByte)), 6);
    expect(point.download_sum).toBeCloseTo(samples.reduce((a, s) => a + s.timings.download, 0), 6);
  });

  it('buckets by aggregationInterval from the window start, and pages through the buckets', async () => {
    const answer = await analytics('metrics=responseTime_avg,availability&aggregationInterval=60&limit=4');
    const data = answer.body.series[0].data;
    expect(data).toHaveLength(4);
    for (const [index, point] of data.entries()) {
      const start = from.getTime() + index * 3600_000;
      const inBucket = samples.filter((s) => s.startedAt.getTime() >= start && s.startedAt.getTime() < start + 3600_000);
      expect(point.timestamp).toBe(new Date(start).toISOString());
      expect(point.responseTime_avg).toBeCloseTo(mean(inBucket.map((s) => s.responseTime)), 6);
      expect(point.availability).toBeCloseTo(availability(inBucket), 6);
    }
    const second = await analytics('metrics=responseTime_avg&aggregationInterval=60&limit=4&page=2');
    expect(second.body.series[0].data.map((p: any) => p.timestamp)).toEqual([
      new Date(from.getTime() + 4 * 3600_000).toISOString(),
      new Date(from.getTime() + 5 * 3600_000).toISOString(),
    ]);
    expect(second.body.pagination).toEqual({ page: 2, limit: 4 });
  });

  it('groups by run location and by status code', async () => {
    const byLocation = await analytics('metrics=responseTime_max,availability&groupBy=runLocation');
    const locations = Object.fromEntries(byLocation.body.series.map((s: any) => [s.runLocation, s.data[0]]));
    for (const location of ['office', 'branch']) {
      const mine = samples.filter((s) => s.location === location);
      expect(locations[location].responseTime_max).toBeCloseTo(Math.max(...mine.map((s) => s.responseTime)), 6);
      expect(locations[location].availability).toBeCloseTo(availability(mine), 6);
    }
    const byStatus = await analytics('metrics=responseTime_avg&groupBy=statusCode');
    const codes = Object.fromEntries(byStatus.body.series.map((s: any) => [s.statusCode, s.data[0]]));
    expect(Object.keys(codes).sort()).toEqual(['200', '500']);
    expect(codes[500].responseTime_avg).toBeCloseTo(mean(samples.filter((s) => s.failed).map((s) => s.responseTime)), 6);
  });

  it('filters by status', async () => {
    const failures = await analytics('metrics=availability,responseTime_min&filterByStatus=failure');
    expect(failures.body.series[0].data[0].availability).toBe(0);
    expect(failures.body.series[0].data[0].responseTime_min).toBeCloseTo(
      Math.min(...samples.filter((s) => s.failed).map((s) => s.responseTime)),
      6,
    );
    const both = await analytics('metrics=availability&filterByStatus=success,failure');
    expect(both.body.series[0].data[0].availability).toBeCloseTo(availability(samples), 6);
  });

  it('answers an empty series list for a window with no results, and uses quickRange by default', async () => {
    const answer = await service.api('GET', `/v1/analytics/url-monitors/${checkId}?metrics=availability`);
    expect(answer.status).toBe(200);
    expect(answer.body.series).toEqual([]);
    const span = Date.parse(answer.body.to) - Date.parse(answer.body.from);
    expect(span).toBe(86_400_000);
  });

  it('refuses bad queries naming the parameter, and other checks with 404', async () => {
    const base = `/v1/analytics/url-monitors/${checkId}`;
    expectErrorANaming(await service.api('GET', base), ['metrics']);
    expectErrorANaming(await service.api('GET', `${base}?metrics=responseTime_p42`), ['metrics']);
    expectErrorANaming(await service.api('GET', `${base}?metrics=availability&aggregationInterval=0`), ['aggregationInterval']);
    expectErrorANaming(await service.api('GET', `${base}?metrics=availability&aggregationInterval=43201`), ['aggregationInterval']);
    expectErrorANaming(await service.api('GET', `${base}?metrics=availability&quickRange=yesterday`), ['quickRange']);
    expectErrorANaming(await service.api('GET', `${base}?metrics=availability&groupBy=agent`), ['groupBy']);
    expectErrorANaming(await service.api('GET', `${base}?metrics=availability&filterByStatus=degraded`), ['filterByStatus']);
    expectErrorANaming(await service.api('GET', `${base}?metrics=availability&from=soon`), ['from']);
    expectErrorANaming(await service.api('GET', `${base}?metrics=availability&from=2000&to=1000`), ['from']);
    expectErrorANaming(await service.api('GET', `${base}?metrics=availability&limit=101`), ['limit']);
    expectErrorA(await service.api('GET', `/v1/analytics/url-monitors/${randomUUID()}?metrics=availability`), 404, 'Not Found');
    const tcp = await service.api('POST', '/v1/checks/tcp', { name: 't', request: { hostname: 'a.test', port: 1 } });
    expectErrorA(await service.api('GET', `/v1/analytics/url-monitors/${tcp.body.id}?metrics=availability`), 404, 'Not Found');
  });

  describe('TCP, DNS and ICMP monitors', () => {
    interface UptimeSample {
      failed: boolean;
      responseTime: number;
      timings?: Record<string, number | null>;
      details?: Record<string, unknown>;
    }
    const checks: Record<'TCP' | 'DNS' | 'ICMP', string> = { TCP: '', DNS: '', ICMP: '' };
    const uptime: Record<'TCP' | 'DNS' | 'ICMP', UptimeSample[]> = { TCP: [], DNS: [], ICMP: [] };

    beforeAll(async () => {
      const bodies = {
        TCP: ['/v1/checks/tcp', { request: { hostname: 'db.test', port: 5432 } }],
        DNS: ['/v1/checks/dns', { request: { query: 'example.test' } }],
        ICMP: ['/v1/checks/icmp', { request: { hostname: 'router.test' } }],
      } as const;
      for (const [type, [path, body]] of Object.entries(bodies) as [keyof typeof checks, (typeof bodies)[keyof typeof bodies]][]) {
        const created = await service.api('POST', path, { name: `${type} target`, activated: false, privateLocations: ['office'], ...body });
        expect(created.status).toBe(201);
        checks[type] = created.body.id;
      }
      for (let i = 0; i < 12; i += 1) {
        const failed = i % 6 === 0;
        // The data phase is null when nothing was sent or read: it must not count as 0.
        uptime.TCP.push({
          failed,
          responseTime: 10 + i * 3,
          timings: { dns: 1 + (i % 3), tcp: 2 + i, firstByte: i % 4 === 0 ? null : 4 + i, download: i % 4 === 0 ? null : 1, tls: null, total: 10 + i * 3 },
        });
        uptime.DNS.push({ failed, responseTime: 5 + i * 2 });
        const lost = i === 3;
        uptime.ICMP.push({
          failed: failed || lost,
          responseTime: lost ? 0 : 20 + i,
          details: { packetLoss: lost ? 100 : i % 2 === 0 ? 0 : 10, latency: lost ? { min: null, avg: null, max: null } : { min: 18 + i, avg: 20 + i, max: 25 + i } },
        });
      }
      for (const type of ['TCP', 'DNS', 'ICMP'] as const) await storeResults(checks[type], type, uptime[type]);
    });

    const point = async (path: string, id: string, metrics: string) => {
      const answer = await service.api('GET', `/v1/analytics/${path}/${id}?from=${from.toISOString()}&to=${to.toISOString()}&metrics=${metrics}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body.series[0].data[0] as Record<string, number>;
    };

    it('computes TCP total, dns, connection and data, named as the comparable product names them', async () => {
      const samples = uptime.TCP;
      const p = await point('tcp-checks', checks.TCP, 'total,total_p90,dns_max,connection_min,data_avg,data_sum,availability,retries');
      expect(p.total).toBeCloseTo(mean(samples.map((s) => s.responseTime)), 6);
      expect(p.total_p90).toBeCloseTo(percentile(samples.map((s) => s.responseTime), 0.9), 6);
      expect(p.dns_max).toBe(3);
      expect(p.connection_min).toBe(2);
      const data = samples.filter((s) => s.timings!.firstByte !== null).map((s) => s.timings!.firstByte! + s.timings!.download!);
      expect(p.data_avg).toBeCloseTo(mean(data), 6);
      expect(p.data_sum).toBeCloseTo(data.reduce((a, b) => a + b, 0), 6);
      expect(p.availability).toBeCloseTo(availability(samples as Sample[]), 6);
      expect(p.retries).toBe(0);
    });

    it('computes DNS response time and ICMP latency and packet loss, a run with no reply adding no latency', async () => {
      const dns = await point('dns-monitors', checks.DNS, 'responseTime,responseTime_max,availability');
      expect(dns.responseTime).toBeCloseTo(mean(uptime.DNS.map((s) => s.responseTime)), 6);
      expect(dns.responseTime_max).toBe(27);
      expect(dns.availability).toBeCloseTo(availability(uptime.DNS as Sample[]), 6);

      const icmp = await point('icmp-monitors', checks.ICMP, 'latency,latencyMin_min,latencyMax_max,packetLoss_max,packetLoss,availability');
      const replied = uptime.ICMP.filter((s) => (s.details!.latency as { avg: number | null }).avg !== null);
      expect(icmp.latency).toBeCloseTo(mean(replied.map((s) => s.responseTime)), 6);
      expect(icmp.latencyMin_min).toBe(18);
      expect(icmp.latencyMax_max).toBe(36);
      expect(icmp.packetLoss_max).toBe(100);
      expect(icmp.packetLoss).toBeCloseTo(mean(uptime.ICMP.map((s) => s.details!.packetLoss as number)), 6);
      expect(icmp.availability).toBeCloseTo(availability(uptime.ICMP as Sample[]), 6);
    });

    it("refuses another type's metrics, groupings and checks", async () => {
      const window = `from=${from.toISOString()}&to=${to.toISOString()}`;
      expectErrorANaming(await service.api('GET', `/v1/analytics/tcp-checks/${checks.TCP}?${window}&metrics=responseTime`), ['metrics']);
      expectErrorANaming(await service.api('GET', `/v1/analytics/icmp-monitors/${checks.ICMP}?${window}&metrics=dns`), ['metrics']);
      expectErrorANaming(await service.api('GET', `/v1/analytics/dns-monitors/${checks.DNS}?${window}&metrics=availability&groupBy=statusCode`), ['groupBy']);
      const byLocation = await service.api('GET', `/v1/analytics/dns-monitors/${checks.DNS}?${window}&metrics=availability&groupBy=runLocation`);
      expect(byLocation.body.series).toEqual([{ runLocation: 'office', data: [expect.objectContaining({ availability: expect.any(Number) })] }]);
      expectErrorA(await service.api('GET', `/v1/analytics/tcp-checks/${checks.DNS}?metrics=availability`), 404, 'Not Found');
      expectErrorA(await service.api('GET', `/v1/analytics/icmp-monitors/${checkId}?metrics=availability`), 404, 'Not Found');
      expectErrorA(await service.api('GET', `/v1/analytics/dns-monitors/${randomUUID()}?metrics=availability`), 404, 'Not Found');
    });
  });
  describe('API and browser checks', () => {
    interface ScriptSample {
      failed: boolean;
      responseTime: number;
      statusCode?: number;
      retries?: number;
      timings?: Record<string, number | null>;
      details?: Record<string, unknown>;
      resultType?: 'FINAL' | 'ATTEMPT';
    }
    const checks = { API: '', BROWSER: '' };
    const stored: Record<keyof typeof checks, ScriptSample[]> = { API: [], BROWSER: [] };
    const vitals = (i: number) => ({ url: `https://shop.test/${i}`, lcpMs: 100 + i * 10, cls: i / 100, fcpMs: 50 + i, ttfbMs: 5 + i, domContentLoadedMs: 60, loadMs: 90 });

    beforeAll(async () => {
      const api = await service.api('POST', '/v1/checks/api', {
        name: 'API target', activated: false, privateLocations: ['office'], request: { method: 'GET', url: 'https://api.test/items' },
      });
      expect(api.status, JSON.stringify(api.body)).toBe(201);
      checks.API = api.body.id;
      const browser = await service.api('POST', '/v1/checks/browser', {
        name: 'browser target', activated: false, privateLocations: ['office'],
        script: "import { test } from '@playwright/test';\ntest('home', async ({ page }) => { await page.goto('https://shop.test/'); });\n",
      });
      expect(browser.status, JSON.stringify(browser.body)).toBe(201);
      checks.BROWSER = browser.body.id;
      for (let i = 0; i < 10; i += 1) {
        const failed = i % 5 === 0;
        stored.API.push({
          failed, responseTime: 30 + i * 4, statusCode: failed ? 503 : 200, retries: i === 4 ? 1 : 0,
          timings: { wait: 0.5, dns: 1 + (i % 2), tcp: 2, firstByte: 20 + i, download: 3, tls: null, total: 30 + i * 4 },
        });
        stored.BROWSER.push({
          failed, responseTime: 2000 + i * 100,
          details: {
            // Two pages on even runs, one on odd ones, none on the first: a vital averages the pages a run measured.
            webVitals: i === 0 ? [] : i % 2 === 0 ? [vitals(i), vitals(i + 1)] : [vitals(i)],
            consoleErrors: [
              ...(i % 3 === 0 ? [{ source: 'console', text: 'boom' }] : []),
              ...(i === 7 ? [{ source: 'pageerror', text: 'TypeError' }, { source: 'pageerror', text: 'again' }] : []),
            ],
            failedRequests: i % 4 === 0 ? [{ url: 'https://shop.test/x', method: 'GET', status: 404 }] : [],
          },
        });
      }
      // An attempt a retry followed: left out of every figure but retries.
      stored.API.push({ failed: true, responseTime: 9999, statusCode: 500, resultType: 'ATTEMPT' });
      stored.BROWSER.push({ failed: true, responseTime: 99999, resultType: 'ATTEMPT', details: { webVitals: [vitals(99)], consoleErrors: 'not a list' } });
      for (const type of ['API', 'BROWSER'] as const) await storeResults(checks[type], type, stored[type]);
    });

    const final = (type: keyof typeof checks) => stored[type].filter((s) => (s.resultType ?? 'FINAL') === 'FINAL');
    const point = async (path: string, id: string, metrics: string, extra = '') => {
      const answer = await service.api('GET', `/v1/analytics/${path}/${id}?from=${from.toISOString()}&to=${to.toISOString()}&metrics=${metrics}${extra}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body;
    };

    it('computes API check response time, phases, availability and retries from final results only', async () => {
      const samples = final('API');
      const body = await point('api-checks', checks.API, 'responseTime,responseTime_p95,dns_max,firstByte_avg,availability,retries');
      const p = body.series[0].data[0];
      expect(body.checkType).toBe('API');
      expect(p.responseTime).toBeCloseTo(mean(samples.map((s) => s.responseTime)), 6);
      expect(p.responseTime_p95).toBeCloseTo(percentile(samples.map((s) => s.responseTime), 0.95), 6);
      expect(p.dns_max).toBe(2);
      expect(p.firstByte_avg).toBeCloseTo(mean(samples.map((s) => s.timings!.firstByte!)), 6);
      expect(p.availability).toBeCloseTo(availability(samples as Sample[]), 6);
      expect(p.retries).toBe(1);
      const byStatus = await point('api-checks', checks.API, 'availability', '&groupBy=statusCode');
      expect(byStatus.series.map((series: { statusCode: number }) => series.statusCode).sort()).toEqual([200, 503]);
    });

    it('computes browser web vitals over the pages each run measured, and error counts per run', async () => {
      const samples = final('BROWSER');
      const p = (await point('browser-checks', checks.BROWSER, 'responseTime,LCP,LCP_max,FCP_min,TTFB,CLS_max,consoleErrors_sum,documentErrors_max,networkErrors_sum,availability')).series[0].data[0];
      type Vitals = ReturnType<typeof vitals>;
      const perRun = (field: keyof Vitals) =>
        samples
          .map((s) => s.details!.webVitals as Vitals[])
          .filter((pages) => pages.length > 0)
          .map((pages) => mean(pages.map((page) => page[field] as number)));
      expect(p.responseTime).toBeCloseTo(mean(samples.map((s) => s.responseTime)), 6);
      expect(p.LCP).toBeCloseTo(mean(perRun('lcpMs')), 6);
      expect(p.LCP_max).toBeCloseTo(Math.max(...perRun('lcpMs')), 6);
      expect(p.FCP_min).toBeCloseTo(Math.min(...perRun('fcpMs')), 6);
      expect(p.TTFB).toBeCloseTo(mean(perRun('ttfbMs')), 6);
      expect(p.CLS_max).toBeCloseTo(Math.max(...perRun('cls')), 6);
      expect(p.consoleErrors_sum).toBe(4);
      expect(p.documentErrors_max).toBe(2);
      expect(p.networkErrors_sum).toBe(3);
      expect(p.availability).toBeCloseTo(availability(samples as Sample[]), 6);
    });

    it('refuses what browser checks do not measure, and checks of another type', async () => {
      const window = `from=${from.toISOString()}&to=${to.toISOString()}`;
      expectErrorANaming(await service.api('GET', `/v1/analytics/browser-checks/${checks.BROWSER}?${window}&metrics=TBT`), ['metrics']);
      expectErrorANaming(await service.api('GET', `/v1/analytics/browser-checks/${checks.BROWSER}?${window}&metrics=LCP&groupBy=statusCode`), ['groupBy']);
      expectErrorA(await service.api('GET', `/v1/analytics/api-checks/${checks.BROWSER}?metrics=availability`), 404, 'Not Found');
      expectErrorA(await service.api('GET', `/v1/analytics/browser-checks/${checks.API}?metrics=availability`), 404, 'Not Found');
    });
  });
});
