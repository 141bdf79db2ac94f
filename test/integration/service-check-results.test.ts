/**
 * The results API on both databases: check results (pages and cursor, every
 * filter), one result with its artifacts' signed links, the links
 * themselves, a check's sessions, and check statuses. One service per
 * database; results come from a hand-driven agent (what a real run leaves)
 * and, for volume and exact times, straight from SQL.
 */
import { randomUUID } from 'node:crypto';
import type { Job } from '../../src/protocol/agent-api.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactLinks } from '../../src/service/artifact-links.js';
import { Secret } from '../../src/config/secret.js';
import { sharedSecret } from '../../src/service/store/service-secrets.js';
import {
  asNewAccount,
  createIdleUrlCheck,
  expectErrorA,
  expectErrorANaming,
  ManualAgent,
  type AccountCall,
} from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const DAY = 86_400_000;
const T0 = new Date(Date.UTC(2026, 2, 1, 0, 0, 0));
const minutes = (n: number) => new Date(T0.getTime() + n * 60_000);
const unix = (date: Date) => String(date.getTime() / 1000);
const ZIP_BYTES = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(64, 7)]);
const PNG_BYTES = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(32, 1)]);

interface Inserted {
  id: string;
  sessionId: string;
}

describe.each(DB_KINDS)('results API (%s)', (kind) => {
  let service: TestService;
  let office: Awaited<ReturnType<TestService['privateLocation']>>;
  let branch: Awaited<ReturnType<TestService['privateLocation']>>;
  let other: { call: AccountCall };
  /** Driven through the agent protocol. */
  let live: { id: string };
  /** Filled from SQL: 24 runs a minute apart, a time-out, an attempt. */
  let bulk: { id: string };
  let bulkIds: string[];
  let timedOutId: string;
  let attemptId: string;
  let neverRun: { id: string };
  let firstRun: { sessionId: string; officeResult: string; branchResult: string };
  const tlsValidTo = new Date(Date.now() + 40 * DAY + 3_600_000);

  /** A session, a job and one result, as a finished run leaves them. */
  async function insertResult(
    checkId: string,
    fields: {
      location: string;
      ranAt: Date;
      started?: boolean;
      failed?: boolean;
      errored?: boolean;
      responseTime?: number | null;
      resultType?: string;
      sessionId?: string;
      status?: string;
      error?: { code: string; message: string } | null;
    },
  ): Promise<Inserted> {
    const db = service.service.db;
    const sessionId = fields.sessionId ?? randomUUID();
    const started = fields.started ?? true;
    if (!fields.sessionId) {
      await db.query(
        `INSERT INTO check_sessions (id, account_id, check_id, check_type, name, status, run_source, run_locations, started_at, stopped_at)
         VALUES ($1, $2, $3, 'URL', 'bulk', $4, 'SCHEDULER', $5, $6, $6)`,
        [sessionId, service.accountId, checkId, fields.status ?? (fields.failed ? 'FAILED' : 'PASSED'), JSON.stringify([fields.location]), fields.ranAt],
      );
    }
    const jobId = randomUUID();
    const locationId = fields.location === 'office' ? office.id : branch.id;
    await db.query(
      `INSERT INTO jobs (id, session_id, account_id, check_id, private_location_id, run_location, check_type, state, timeout_seconds, payload)
       VALUES ($1, $2, $3, $4, $5, $6, 'URL', 'done', 10, '{}')`,
      [jobId, sessionId, service.accountId, checkId, locationId, fields.location],
    );
    const id = randomUUID();
    await db.query(
      `INSERT INTO check_results (id, session_id, job_id, account_id, check_id, check_type, name, run_location, result_type,
          has_errors, has_failures, is_degraded, aborted, is_cancelled, timed_out, response_time, status_code, error,
          started_at, stopped_at, created_at)
       VALUES ($1, $2, $3, $4, $5, 'URL', 'bulk', $6, $7, $8, $9, false, false, false, $10, $11, $12, $13, $14, $15, $15)`,
      [
        id, sessionId, jobId, service.accountId, checkId, fields.location, fields.resultType ?? 'FINAL',
        fields.errored ?? false, fields.failed ?? false, !started, fields.responseTime === undefined ? 100 : fields.responseTime,
        started ? 200 : null, fields.error === undefined ? null : JSON.stringify(fields.error), started ? fields.ranAt : null, fields.ranAt,
      ],
    );
    return { id, sessionId };
  }

  async function upload(agent: ManualAgent, job: Job, name: string, contentType: string, bytes: Buffer): Promise<void> {
    const answer = await fetch(`${service.url}/v1/agent/jobs/${job.jobId}/artifacts/${name}?agentId=${agent.agentId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${agent.key}`, 'content-type': contentType },
      body: bytes,
    });
    expect(answer.status).toBe(201);
  }

  /** One run of `live` at both locations, each answered as told. */
  async function runLive(
    agents: { office: ManualAgent; branch: ManualAgent },
    runSource: string,
    answer: (location: 'office' | 'branch', job: Job, agent: ManualAgent) => Promise<Record<string, unknown>>,
  ): Promise<{ sessionId: string; resultIds: Record<string, string> }> {
    const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [live.id] }, runSource });
    expect(triggered.status).toBe(201);
    const sessionId: string = triggered.body.sessions[0].checkSessionId;
    for (const location of ['office', 'branch'] as const) {
      const agent = agents[location];
      const job = await agent.claimOne();
      expect(job.checkId).toBe(live.id);
      expect((await agent.report(job, await answer(location, job, agent))).status).toBe(200);
    }
    const session = (await service.api('GET', `/v1/check-sessions/${sessionId}`)).body;
    return {
      sessionId,
      resultIds: Object.fromEntries(session.results.map((r: any) => [r.runLocation, r.checkResultId])),
    };
  }

  let agents: { office: ManualAgent; branch: ManualAgent };

  beforeAll(async () => {
    service = await startTestService(kind);
    office = await service.privateLocation('office');
    branch = await service.privateLocation('branch');
    other = await asNewAccount(service);
    live = await createIdleUrlCheck(service, ['office', 'branch'], { name: 'live' });
    bulk = await createIdleUrlCheck(service, ['office'], { name: 'bulk' });
    neverRun = await createIdleUrlCheck(service, ['office'], { name: 'never run' });

    bulkIds = [];
    for (let i = 0; i < 24; i += 1) {
      const inserted = await insertResult(bulk.id, {
        location: i % 2 === 0 ? 'office' : 'branch',
        ranAt: minutes(i),
        failed: i % 4 === 0,
        responseTime: 100 + i * 10,
      });
      bulkIds.push(inserted.id);
      if (i === 10) {
        // A failed attempt before the final result of the same run; its error makes its time no run's.
        attemptId = (await insertResult(bulk.id, {
          location: 'branch', ranAt: new Date(minutes(10).getTime() + 30_000), failed: true, errored: true,
          responseTime: 9999, resultType: 'ATTEMPT', sessionId: inserted.sessionId,
        })).id;
      }
    }
    // No agent ran it: no start, no time; listed by when the service recorded it.
    timedOutId = (await insertResult(bulk.id, {
      location: 'office', ranAt: minutes(30), started: false, errored: true, responseTime: null, status: 'TIMED_OUT',
      error: { code: 'TIMED_OUT', message: 'No agent picked the job up' },
    })).id;

    agents = {
      office: await new ManualAgent(service, office.rawKey).connect(),
      branch: await new ManualAgent(service, branch.rawKey).connect(),
    };
    const run = await runLive(agents, 'TRIGGER_API', async (location, job, agent) => {
      if (location === 'branch') {
        return { hasFailures: true, responseTime: 6000, error: { code: 'MAX_RESPONSE_TIME', message: 'over 5000 ms' } };
      }
      await upload(agent, job, 'trace.zip', 'application/octet-stream', ZIP_BYTES);
      await upload(agent, job, 'screenshot.png', 'image/png', PNG_BYTES);
      return {
        details: {
          redirects: 0,
          tls: { subject: 'CN=live.test', issuer: 'CN=Test CA', validFrom: T0.toISOString(), validTo: tlsValidTo.toISOString(), daysRemaining: 40, fingerprint256: 'AB:CD' },
        },
        artifacts: [
          { name: 'trace.zip', contentType: 'application/zip', size: ZIP_BYTES.length, uploaded: true, error: null },
          { name: 'screenshot.png', contentType: 'image/png', size: PNG_BYTES.length, uploaded: true, error: null },
          { name: 'video.webm', contentType: 'video/webm', size: 0, uploaded: false, error: 'upload failed: 503' },
        ],
      };
    });
    firstRun = { sessionId: run.sessionId, officeResult: run.resultIds.office!, branchResult: run.resultIds.branch! };
  });
  afterAll(() => service?.close());

  const bulkNewestFirst = () => [timedOutId, ...[...bulkIds].reverse()];
  const ids = (records: { id: string }[]) => records.map((record) => record.id);

  describe('GET /v1/check-results/{checkId}', () => {
    it('pages through a check\'s results newest first by when they ran', async () => {
      const first = await service.api('GET', `/v1/check-results/${bulk.id}`);
      expect(first.status).toBe(200);
      expect(ids(first.body)).toEqual(bulkNewestFirst().slice(0, 10));
      const third = await service.api('GET', `/v1/check-results/${bulk.id}?page=3&limit=10`);
      expect(ids(third.body)).toEqual(bulkNewestFirst().slice(20));
      const all = await service.api('GET', `/v1/check-results/${bulk.id}?limit=100`);
      expect(ids(all.body)).toEqual(bulkNewestFirst());
      expect(all.body[0]).toMatchObject({
        id: timedOutId, checkId: bulk.id, resultType: 'FINAL', hasErrors: true, hasFailures: false,
        startedAt: null, created_at: minutes(30).toISOString(), responseTime: null, error: { code: 'TIMED_OUT' },
      });
      expect(all.body.at(-1)).toMatchObject({
        runLocation: 'office', hasFailures: true, responseTime: 100, statusCode: 200, attempts: 1,
        startedAt: minutes(0).toISOString(), checkResultLink: `${service.url.replace('127.0.0.1', 'localhost')}/v1/check-results/${bulk.id}/${bulkIds[0]}`,
      });
    });

    it('filters by time (unix seconds or ISO), location, failures, check type and result type', async () => {
      const list = async (query: string) => ids((await service.api('GET', `/v1/check-results/${bulk.id}?limit=100&${query}`)).body);
      expect(await list(`from=${unix(minutes(5))}&to=${unix(minutes(10))}`)).toEqual([9, 8, 7, 6, 5].map((i) => bulkIds[i]));
      expect(await list(`from=${minutes(20).toISOString()}`)).toEqual([timedOutId, ...[23, 22, 21, 20].map((i) => bulkIds[i])]);
      expect(await list(`to=${minutes(2).getTime()}`)).toEqual([bulkIds[1], bulkIds[0]]);
      expect(await list('location=office')).toEqual([timedOutId, ...bulkIds.filter((_, i) => i % 2 === 0).reverse()]);
      expect(await list('hasFailures=true')).toEqual(bulkIds.filter((_, i) => i % 4 === 0).reverse());
      expect(await list('hasFailures=false')).toHaveLength(25 - 6);
      expect(await list('checkType=TCP')).toEqual([]);
      expect(await list('checkType=URL')).toHaveLength(25);
      expect(await list('resultType=ATTEMPT')).toEqual([attemptId]);
      expect(await list('resultType=ALL')).toHaveLength(26);
      expect(await list('location=nowhere')).toEqual([]);
    });
  });

  describe('GET /v2/check-results/{checkId}', () => {
    it('walks every result with nextId, then answers nextId null', async () => {
      const seen: string[] = [];
      let nextId: string | null = null;
      const lengths: number[] = [];
      do {
        const query: string = nextId ? `&nextId=${nextId}` : '';
        const answer = await service.api('GET', `/v2/check-results/${bulk.id}?limit=10${query}`);
        expect(answer.status).toBe(200);
        expect(answer.body.length).toBe(answer.body.entries.length);
        lengths.push(answer.body.length);
        seen.push(...ids(answer.body.entries));
        nextId = answer.body.nextId;
      } while (nextId);
      expect(lengths).toEqual([10, 10, 5]);
      expect(seen).toEqual(bulkNewestFirst());
    });

    it('keeps the filters along the cursor, and new results do not shift the pages', async () => {
      const failures = bulkIds.filter((_, i) => i % 4 === 0).reverse();
      const first = await service.api('GET', `/v2/check-results/${bulk.id}?hasFailures=true&limit=4`);
      expect(ids(first.body.entries)).toEqual(failures.slice(0, 4));
      expect(first.body.nextId).toBe(failures[4]);
      const second = await service.api('GET', `/v2/check-results/${bulk.id}?hasFailures=true&limit=4&nextId=${first.body.nextId}`);
      expect(ids(second.body.entries)).toEqual(failures.slice(4));
      expect(second.body.nextId).toBeNull();

      const moving = await createIdleUrlCheck(service, ['office'], { name: 'moving' });
      const older = [];
      for (let i = 0; i < 5; i += 1) older.push((await insertResult(moving.id, { location: 'office', ranAt: minutes(i) })).id);
      const page1 = await service.api('GET', `/v2/check-results/${moving.id}?limit=2`);
      await insertResult(moving.id, { location: 'office', ranAt: minutes(60) });
      const page2 = await service.api('GET', `/v2/check-results/${moving.id}?limit=2&nextId=${page1.body.nextId}`);
      expect(ids(page2.body.entries)).toEqual([older[2], older[1]]);
    });
  });

  describe('bad input', () => {
    it('answers 400 in shape A naming the parameter', async () => {
      for (const version of ['v1', 'v2']) {
        const base = `/${version}/check-results/${bulk.id}`;
        expectErrorANaming(await service.api('GET', `${base}?from=soon`), ['from']);
        expectErrorANaming(await service.api('GET', `${base}?to=later`), ['to']);
        expectErrorANaming(await service.api('GET', `${base}?from=${unix(minutes(5))}&to=${unix(minutes(1))}`), ['from']);
        expectErrorANaming(await service.api('GET', `${base}?limit=0`), ['limit']);
        expectErrorANaming(await service.api('GET', `${base}?limit=101`), ['limit']);
        expectErrorANaming(await service.api('GET', `${base}?hasFailures=maybe`), ['hasFailures']);
        expectErrorANaming(await service.api('GET', `${base}?resultType=SOME`), ['resultType']);
        expectErrorANaming(await service.api('GET', `${base}?checkType=HTTP`), ['checkType']);
        expectErrorANaming(await service.api('GET', `/${version}/check-results/not-a-uuid`), ['checkId']);
      }
      expectErrorANaming(await service.api('GET', `/v1/check-results/${bulk.id}?page=0`), ['page']);
      expectErrorANaming(await service.api('GET', `/v2/check-results/${bulk.id}?nextId=bogus`), ['nextId']);
      // A cursor must be one of this check's results.
      expectErrorANaming(await service.api('GET', `/v2/check-results/${bulk.id}?nextId=${randomUUID()}`), ['nextId']);
      expectErrorANaming(await service.api('GET', `/v2/check-results/${bulk.id}?nextId=${firstRun.officeResult}`), ['nextId']);
    });

    it("answers 404 in shape A for unknown checks and results, and for another account's", async () => {
      for (const path of [
        `/v1/check-results/${randomUUID()}`,
        `/v2/check-results/${randomUUID()}`,
        `/v1/check-results/${bulk.id}/${randomUUID()}`,
        // A result exists, but not under this check.
        `/v1/check-results/${bulk.id}/${firstRun.officeResult}`,
        `/v1/check-statuses/${randomUUID()}`,
        `/v1/check-sessions?checkId=${randomUUID()}`,
      ]) {
        expectErrorA(await service.api('GET', path), 404, 'Not Found');
      }
      for (const path of [
        `/v1/check-results/${live.id}`,
        `/v2/check-results/${live.id}`,
        `/v1/check-results/${live.id}/${firstRun.officeResult}`,
        `/v1/check-statuses/${live.id}`,
        `/v1/check-sessions?checkId=${live.id}`,
      ]) {
        const answer = await other.call('GET', path);
        expectErrorA(answer, 404, 'Not Found');
        expect(JSON.stringify(answer.body)).not.toContain('live');
      }
      expect((await other.call('GET', '/v1/check-statuses')).body).toEqual([]);
    });
  });

  describe('one result and its artifacts', () => {
    it('gives everything the run reported, with a signed link per uploaded artifact', async () => {
      const answer = await service.api('GET', `/v1/check-results/${live.id}/${firstRun.officeResult}`);
      expect(answer.status).toBe(200);
      const record = answer.body;
      expect(record).toMatchObject({
        id: firstRun.officeResult,
        checkId: live.id,
        checkSessionId: firstRun.sessionId,
        checkType: 'URL',
        runLocation: 'office',
        hasFailures: false,
        overMaxResponseTime: false,
        timings: { dns: 1, tcp: 2, tls: null, firstByte: 30, download: 9, total: 42 },
        assertions: [expect.objectContaining({ source: 'STATUS_CODE', passed: true })],
        details: { tls: { validTo: tlsValidTo.toISOString(), daysRemaining: 40 } },
        logs: [expect.objectContaining({ message: 'GET answered 200' })],
      });
      const [trace, screenshot, video] = record.artifacts;
      expect(trace).toMatchObject({ name: 'trace.zip', uploaded: true, id: expect.any(String) });
      expect(trace.link).toMatch(/\/v1\/artifacts\/[0-9a-f-]{36}\?expires=\d+&signature=[\w-]{43}$/);
      expect(trace.link).not.toContain(service.apiKey);
      expect(Date.parse(trace.linkExpiresAt) - Date.now()).toBeGreaterThan(14 * 60_000);
      expect(trace.traceViewerUrl).toBe(`https://trace.playwright.dev/?trace=${encodeURIComponent(trace.link)}`);
      expect(screenshot).toMatchObject({ name: 'screenshot.png', link: expect.any(String), traceViewerUrl: null });
      expect(video).toEqual({
        name: 'video.webm', contentType: 'video/webm', size: 0, uploaded: false, error: 'upload failed: 503',
        id: null, link: null, linkExpiresAt: null, traceViewerUrl: null,
      });

      const failing = (await service.api('GET', `/v1/check-results/${live.id}/${firstRun.branchResult}`)).body;
      expect(failing).toMatchObject({ hasFailures: true, overMaxResponseTime: true, responseTime: 6000, artifacts: [] });
      // The session's own result route gives the same links.
      const inSession = await service.api('GET', `/v1/check-sessions/${firstRun.sessionId}/results/${firstRun.officeResult}`);
      expect(inSession.body.artifacts.map((a: any) => a.link)).toEqual(record.artifacts.map((a: any) => a.link));
    });

    it('streams an artifact through its link without a key, a trace as a zip anyone may fetch', async () => {
      const { artifacts } = (await service.api('GET', `/v1/check-results/${live.id}/${firstRun.officeResult}`)).body;
      const trace = await fetch(artifacts[0].link);
      expect(trace.status).toBe(200);
      expect(Buffer.from(await trace.arrayBuffer())).toEqual(ZIP_BYTES);
      expect(trace.headers.get('content-type')).toBe('application/zip');
      expect(trace.headers.get('content-length')).toBe(String(ZIP_BYTES.length));
      expect(trace.headers.get('content-disposition')).toBe('attachment; filename="trace.zip"');
      expect(trace.headers.get('access-control-allow-origin')).toBe('*');
      expect(trace.headers.get('x-content-type-options')).toBe('nosniff');
      const screenshot = await fetch(artifacts[1].link, { headers: { origin: 'https://trace.playwright.dev' } });
      expect(Buffer.from(await screenshot.arrayBuffer())).toEqual(PNG_BYTES);
      expect(screenshot.headers.get('content-type')).toBe('image/png');
      expect(screenshot.headers.get('content-disposition')).toBe('inline; filename="screenshot.png"');
    });

    it('answers 403 in shape A to a bad, borrowed or expired signature, and 404 to a signed link to nothing', async () => {
      const { artifacts } = (await service.api('GET', `/v1/check-results/${live.id}/${firstRun.officeResult}`)).body;
      const link = new URL(artifacts[0].link);
      const path = (url: URL) => url.pathname + url.search;
      const tampered = new URL(link);
      tampered.searchParams.set('signature', `${link.searchParams.get('signature')!.slice(0, -2)}AA`);
      const later = new URL(link);
      later.searchParams.set('expires', String(Number(link.searchParams.get('expires')) + 60));
      // The screenshot's signature does not open the trace.
      const borrowed = new URL(link);
      borrowed.searchParams.set('signature', new URL(artifacts[1].link).searchParams.get('signature')!);
      const unsigned = new URL(link);
      unsigned.search = '';
      for (const url of [tampered, later, borrowed, unsigned]) {
        const answer = await service.raw('GET', path(url));
        expectErrorA(answer, 403, 'Forbidden');
        expect(answer.body.message).toMatch(/not valid/);
      }
      // Links signed with the service's own key (kept in the database, shared by every instance).
      const key = await sharedSecret(service.service.db, 'artifact-links', 'a candidate that loses to the stored key');
      expect(key).not.toBe('a candidate that loses to the stored key');
      const links = new ArtifactLinks(new Secret(key), 900);
      const base = service.service.url;
      const expired = new URL(links.link(base, artifacts[0].id, new Date(Date.now() - 3600_000)).url);
      const answer = await service.raw('GET', path(expired));
      expectErrorA(answer, 403, 'Forbidden');
      expect(answer.body.message).toMatch(/expired/);
      expectErrorA(await service.raw('GET', path(new URL(links.link(base, randomUUID()).url))), 404, 'Not Found');
      expect((await fetch(links.link(base, artifacts[0].id).url)).status).toBe(200);
    });
  });

  describe('GET /v1/check-sessions?checkId=', () => {
    it("lists a check's sessions newest first, with their results, page by page", async () => {
      const answer = await service.api('GET', `/v1/check-sessions?checkId=${bulk.id}&limit=3`);
      expect(answer.status).toBe(200);
      expect(answer.body.map((s: any) => s.startedAt)).toEqual([minutes(30), minutes(23), minutes(22)].map((d) => d.toISOString()));
      expect(answer.body[0]).toMatchObject({ checkId: bulk.id, status: 'TIMED_OUT', results: [{ checkResultId: timedOutId }] });
      const withAttempt = await service.api('GET', `/v1/check-sessions?checkId=${bulk.id}&limit=1&page=${2 + 23 - 10}`);
      expect(withAttempt.body[0].results.map((r: any) => r.checkResultId).sort()).toEqual([bulkIds[10], attemptId].sort());
      const live1 = (await service.api('GET', `/v1/check-sessions?checkId=${live.id}`)).body;
      expect(live1[0]).toMatchObject({ checkSessionId: firstRun.sessionId, status: 'FAILED', runSource: 'TRIGGER_API' });
      expect(live1[0].results).toHaveLength(2);
      expect((await service.api('GET', `/v1/check-sessions?checkId=${neverRun.id}`)).body).toEqual([]);
    });

    it('answers 400 in shape A for a missing or bad checkId and bad paging', async () => {
      expectErrorANaming(await service.api('GET', '/v1/check-sessions'), ['checkId']);
      expectErrorANaming(await service.api('GET', '/v1/check-sessions?checkId=nope'), ['checkId']);
      expectErrorANaming(await service.api('GET', `/v1/check-sessions?checkId=${bulk.id}&limit=500`), ['limit']);
    });
  });

  describe('GET /v1/check-statuses', () => {
    it('computes every check\'s status from its results, and nulls for one that never ran', async () => {
      const answer = await service.api('GET', '/v1/check-statuses');
      expect(answer.status).toBe(200);
      const byId = Object.fromEntries(answer.body.map((status: any) => [status.checkId, status]));
      expect(byId[bulk.id]).toEqual({
        name: 'bulk', checkId: bulk.id, hasFailures: false, hasErrors: true, isDegraded: false,
        // The errored attempt's 9999 ms is no run's time.
        longestRun: 330, shortestRun: 100, lastRunLocation: 'office', lastCheckRunId: timedOutId,
        sslDaysRemaining: null, created_at: expect.any(String), updated_at: minutes(30).toISOString(),
      });
      expect(byId[live.id]).toMatchObject({
        hasFailures: true, hasErrors: false, lastRunLocation: 'branch', lastCheckRunId: firstRun.branchResult,
        longestRun: 6000, shortestRun: 42, sslDaysRemaining: 40,
      });
      expect(byId[neverRun.id]).toEqual({
        name: 'never run', checkId: neverRun.id, hasFailures: false, hasErrors: false, isDegraded: false,
        longestRun: null, shortestRun: null, lastRunLocation: null, lastCheckRunId: null, sslDaysRemaining: null,
        created_at: expect.any(String), updated_at: null,
      });
      const one = await service.api('GET', `/v1/check-statuses/${bulk.id}`);
      expect(one.body).toEqual(byId[bulk.id]);
    });

    it('follows the latest finished run, passing over test runs and cancelled sessions', async () => {
      const status = async () => (await service.api('GET', `/v1/check-statuses/${live.id}`)).body;
      const passed = await runLive(agents, 'TRIGGER_API', async () => ({ responseTime: 30 }));
      const afterPass = await status();
      expect(afterPass).toMatchObject({ hasFailures: false, hasErrors: false, lastCheckRunId: passed.resultIds.branch, shortestRun: 30 });

      await runLive(agents, 'TEST_NO_RECORD', async () => ({ hasFailures: true, error: { code: 'HTTP_STATUS', message: '500' } }));
      const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [live.id] } });
      await agents.office.claimOne();
      expect((await service.api('POST', `/v1/check-sessions/${triggered.body.sessions[0].checkSessionId}/cancel`)).status).toBe(200);
      expect(await status()).toEqual(afterPass);
    });
  });
});
