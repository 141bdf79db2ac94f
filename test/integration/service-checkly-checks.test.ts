/**
 * The routes and fields the checkly CLI's checks and assets commands read:
 * check list filters with Content-Range, trigger by matchTags, the
 * completion long poll, error groups, batch analytics, a result's retry
 * sequence and its asset manifest. Runs come from a hand-driven agent, as a
 * real agent would report them.
 */
import { randomUUID } from 'node:crypto';
import type { Job } from '../../src/protocol/agent-api.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createIdleUrlCheck,
  expectErrorA,
  expectErrorANaming,
  expectErrorB,
  ManualAgent,
} from '../support/agent-protocol.js';
import { startTestService, type TestService } from '../support/service.js';

const PNG_BYTES = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(32, 1)]);
const ZIP_BYTES = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(64, 7)]);
const FAILURE = { code: 'HTTP_FAILURE', message: 'GET http://127.0.0.1:9/health answered 503 Service Unavailable' };

describe('checkly CLI routes for checks', () => {
  let service: TestService;
  let location: Awaited<ReturnType<TestService['privateLocation']>>;
  let agent: ManualAgent;

  beforeAll(async () => {
    service = await startTestService('pglite');
    location = await service.privateLocation();
    agent = await new ManualAgent(service, location.rawKey).connect();
  }, 30_000);

  afterAll(async () => {
    await service?.close();
  });

  /** Triggers the check and reports its one job as told; the session id and the result. */
  async function runOnce(checkId: string, answer: Record<string, unknown> = {}, upload?: (job: Job) => Promise<void>) {
    const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [checkId] } });
    expect(triggered.status).toBe(201);
    const sessionId: string = triggered.body.sessions[0].checkSessionId;
    const job = await agent.claimOne();
    expect(job.checkId).toBe(checkId);
    if (upload) await upload(job);
    expect((await agent.report(job, answer)).status).toBe(200);
    const session = (await service.api('GET', `/v1/check-sessions/${sessionId}`)).body;
    return { sessionId, resultId: session.results[0].checkResultId as string };
  }

  const failed = { hasFailures: true, hasErrors: false, error: FAILURE, statusCode: 503 };

  describe('GET /v1/checks filters', () => {
    const tag = `t${randomUUID().slice(0, 8)}`;
    let ok: { id: string };
    let bad: { id: string };
    let idle: { id: string };

    beforeAll(async () => {
      ok = await createIdleUrlCheck(service, [location.slugName], { name: `${tag} Alpha 100%`, tags: [tag, 'alpha'] });
      bad = await createIdleUrlCheck(service, [location.slugName], { name: `${tag} Beta`, tags: [tag, 'beta'] });
      idle = await createIdleUrlCheck(service, [location.slugName], { name: `${tag} Gamma`, tags: [tag] });
      await runOnce(ok.id);
      await runOnce(bad.id, failed);
    });

    const listed = async (query: string) => {
      const answer = await service.api('GET', `/v1/checks?${query}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return { ids: (answer.body as { id: string }[]).map((check) => check.id), range: answer.headers.get('content-range') };
    };

    it('pages with a Content-Range giving the total over all pages', async () => {
      expect(await listed(`tag=${tag}&limit=2`)).toEqual({ ids: [ok.id, bad.id], range: '0-1/3' });
      expect(await listed(`tag=${tag}&limit=2&page=2`)).toEqual({ ids: [idle.id], range: '2-2/3' });
      expect(await listed(`tag=${tag}&limit=2&page=3`)).toEqual({ ids: [], range: '*/3' });
    });

    it('takes tags repeated, comma-separated or as tag[] (how axios writes a list), matching any of them', async () => {
      expect((await listed(`tag=${tag}&tag=alpha`)).range).toBe('0-2/3');
      expect((await listed(`tag[]=alpha&tag[]=beta&search=${tag}`)).ids).toEqual([ok.id, bad.id]);
      expect((await listed(`tag=alpha,beta&search=${tag}`)).ids).toEqual([ok.id, bad.id]);
    });

    it('searches names in any case, as text (a % is a percent sign)', async () => {
      expect((await listed(`search=${tag.toUpperCase()}%20beta`)).ids).toEqual([bad.id]);
      expect((await listed(`search=100%25&tag=${tag}`)).ids).toEqual([ok.id]);
      expect((await listed(`search=%25&tag=${tag}`)).ids).toEqual([ok.id]);
    });

    it('filters by check type and by the status of the latest run; a check that never ran has none', async () => {
      expect((await listed(`tag=${tag}&checkType=URL`)).ids).toEqual([ok.id, bad.id, idle.id]);
      expect((await listed(`tag=${tag}&checkType=API`)).range).toBe('*/0');
      expect(await listed(`tag=${tag}&status=passing`)).toEqual({ ids: [ok.id], range: '0-0/1' });
      expect((await listed(`tag=${tag}&status=failing`)).ids).toEqual([bad.id]);
      expect((await listed(`tag=${tag}&status=degraded`)).ids).toEqual([]);
    });

    it('answers 400 shape A naming a bad filter', async () => {
      expectErrorANaming(await service.api('GET', '/v1/checks?status=broken'), ['status']);
      expectErrorANaming(await service.api('GET', '/v1/checks?checkType=FTP'), ['checkType']);
    });
  });

  describe('POST /v2/check-sessions/trigger with matchTags', () => {
    it('starts the activated checks carrying every tag of any one list; refreshCache is accepted', async () => {
      const own = await service.privateLocation();
      const tag = `m${randomUUID().slice(0, 8)}`;
      const both = await createIdleUrlCheck(service, [own.slugName], { tags: [tag, 'prod', 'eu'], activated: true, frequency: 1440 });
      const one = await createIdleUrlCheck(service, [own.slugName], { tags: [tag, 'eu'], activated: true, frequency: 1440 });
      await createIdleUrlCheck(service, [own.slugName], { tags: [tag, 'prod', 'eu'] });
      const answer = await service.api('POST', '/v2/check-sessions/trigger', { target: { matchTags: [[tag, 'prod', 'eu']] }, refreshCache: true });
      expect(answer.status).toBe(201);
      expect(answer.body.sessions.map((session: { checkId: string }) => session.checkId)).toEqual([both.id]);

      const either = await service.api('POST', '/v2/check-sessions/trigger', { target: { matchTags: [[tag, 'prod'], [tag, 'eu']] } });
      expect(either.body.sessions.map((session: { checkId: string }) => session.checkId).sort()).toEqual([both.id, one.id].sort());
    });

    it('answers 404 when no activated check matches, and 400 to an empty tag list', async () => {
      expectErrorB(await service.api('POST', '/v2/check-sessions/trigger', { target: { matchTags: [[`none-${randomUUID()}`]] } }), [], 404);
      expectErrorB(await service.api('POST', '/v2/check-sessions/trigger', { target: { matchTags: [[]] } }), ['target.matchTags.0']);
    });

    it('says how to name checks to a caller that names none, in the checkly error shape when asked that way', async () => {
      const answer = await service.raw('POST', '/v2/check-sessions/trigger', { refreshCache: false }, {
        authorization: `Bearer ${service.apiKey}`,
        'x-checkly-account': service.accountId,
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ statusCode: 400, error: 'Bad Request', attributes: { target: expect.any(String) } });
      expect(answer.body.message).toContain('checks run --check-id');
    });
  });

  describe('GET /v2/check-sessions/{id}/completion', () => {
    it('answers 408 while the session runs, and the completed session once it ends', async () => {
      const check = await createIdleUrlCheck(service, [location.slugName]);
      const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.id] } });
      const sessionId: string = triggered.body.sessions[0].checkSessionId;

      const started = Date.now();
      expectErrorA(await service.api('GET', `/v2/check-sessions/${sessionId}/completion?maxWaitSeconds=1`), 408, 'Request Timeout');
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);

      const waiting = service.api('GET', `/v2/check-sessions/${sessionId}/completion?maxWaitSeconds=20`);
      const job = await agent.claimOne();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await agent.report(job, failed)).status).toBe(200);
      const completed = await waiting;
      expect(completed.status).toBe(200);
      expect(completed.body).toMatchObject({
        checkSessionId: sessionId,
        checkId: check.id,
        status: 'FAILED',
        stoppedAt: expect.any(String),
        results: [expect.objectContaining({ resultType: 'FINAL', hasFailures: true, runLocation: location.slugName })],
      });
      expect(Date.now() - started).toBeLessThan(15_000);

      const again = await service.api('GET', `/v2/check-sessions/${sessionId}/completion?maxWaitSeconds=0`);
      expect(again.body.status).toBe('FAILED');
    }, 30_000);

    it('answers 404 to an unknown session and 400 to a wait longer than a minute', async () => {
      expectErrorA(await service.api('GET', `/v2/check-sessions/${randomUUID()}/completion`), 404, 'Not Found');
      expectErrorANaming(await service.api('GET', `/v2/check-sessions/${randomUUID()}/completion?maxWaitSeconds=61`), ['maxWaitSeconds']);
    });
  });

  describe('error groups, batch analytics, results and assets', () => {
    let passing: { id: string };
    let failing: { id: string };
    let passedRun: { sessionId: string; resultId: string };

    beforeAll(async () => {
      passing = await createIdleUrlCheck(service, [location.slugName]);
      failing = await createIdleUrlCheck(service, [location.slugName]);
      passedRun = await runOnce(passing.id, {
        artifacts: [
          { name: 'screenshot.png', contentType: 'image/png', size: PNG_BYTES.length, uploaded: true, error: null },
          { name: 'trace.zip', contentType: 'application/zip', size: ZIP_BYTES.length, uploaded: true, error: null },
          { name: 'video.webm', contentType: 'video/webm', size: 10, uploaded: false, error: 'too large' },
        ],
      }, async (job) => {
        for (const [name, type, bytes] of [['screenshot.png', 'image/png', PNG_BYTES], ['trace.zip', 'application/zip', ZIP_BYTES]] as const) {
          const put = await fetch(`${service.url}/v1/agent/jobs/${job.jobId}/artifacts/${name}?agentId=${agent.agentId}`, {
            method: 'PUT',
            headers: { authorization: `Bearer ${location.rawKey}`, 'content-type': type },
            body: bytes,
          });
          expect(put.status).toBe(201);
        }
      });
      await runOnce(failing.id, failed);
      await runOnce(failing.id, failed);
    });

    it("lists a check's error groups in the CLI's fields, with the ids of the check's own error-group route", async () => {
      const answer = await service.api('GET', `/v1/error-groups/checks/${failing.id}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual([
        {
          id: expect.stringMatching(/^[0-9a-f]{24}$/),
          checkId: failing.id,
          errorHash: expect.stringContaining('HTTP_FAILURE: '),
          rawErrorMessage: FAILURE.message,
          cleanedErrorMessage: FAILURE.message,
          firstSeen: expect.any(String),
          lastSeen: expect.any(String),
          archivedUntilNextEvent: false,
          code: 'HTTP_FAILURE',
          count: 2,
          locations: [location.slugName],
        },
      ]);
      const own = await service.api('GET', `/v1/checks/${failing.id}/error-groups`);
      expect(own.body.map((group: { id: string }) => group.id)).toEqual([answer.body[0].id]);

      const one = await service.api('GET', `/v1/error-groups/${answer.body[0].id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(answer.body[0]);

      expect((await service.api('GET', `/v1/error-groups/checks/${passing.id}`)).body).toEqual([]);
      expectErrorA(await service.api('GET', `/v1/error-groups/checks/${randomUUID()}`), 404, 'Not Found');
      expectErrorA(await service.api('GET', `/v1/error-groups/${'0'.repeat(24)}`), 404, 'Not Found');
      expectErrorANaming(await service.api('GET', '/v1/error-groups/not-a-group'), ['errorGroupId']);
    });

    it('answers the headline numbers of many checks, leaving out checks of no one', async () => {
      const answer = await service.api('POST', '/v1/analytics/checks?quickRange=last24Hours', {
        checkIds: [passing.id, failing.id, randomUUID()],
      });
      expect(answer.status).toBe(200);
      const byId = new Map((answer.body as { checkId: string }[]).map((entry) => [entry.checkId, entry]));
      expect(byId.size).toBe(2);
      expect(byId.get(passing.id)).toMatchObject({
        checkType: 'URL',
        availability: 100,
        responseTime_avg: 42,
        responseTime_p95: 42,
        latency_avg: null,
        packetLoss_avg: null,
        hopCount_avg: null,
      });
      expect(byId.get(failing.id)).toMatchObject({ availability: 0 });

      expectErrorB(await service.api('POST', '/v1/analytics/checks', { checkIds: [] }), ['checkIds']);
      expectErrorB(await service.api('POST', '/v1/analytics/checks?quickRange=forever', { checkIds: [passing.id] }), ['quickRange']);
    });

    it('gives each result the retry sequence it belongs to', async () => {
      const page = await service.api('GET', `/v2/check-results/${passing.id}?fields=id,startedAt`);
      expect(page.status).toBe(200);
      expect(page.body.entries[0]).toMatchObject({ id: passedRun.resultId, sequenceId: `${passedRun.sessionId}:${location.slugName}` });
      expect((await service.api('GET', `/v1/check-results/${passing.id}/${passedRun.resultId}`)).body.sequenceId).toBe(
        `${passedRun.sessionId}:${location.slugName}`,
      );
    });

    it("lists a result's uploaded artifacts as assets with working links, by type and by name", async () => {
      const path = `/v1/check-results/${passing.id}/${passedRun.resultId}/assets`;
      const all = await service.api('GET', path);
      expect(all.status).toBe(200);
      expect(all.body).toEqual({
        assets: [
          { type: 'screenshot', name: 'screenshot.png', url: expect.any(String), contentType: 'image/png', source: 'artifact', size: PNG_BYTES.length },
          { type: 'trace', name: 'trace.zip', url: expect.any(String), contentType: 'application/zip', source: 'artifact', size: ZIP_BYTES.length },
        ],
        truncated: false,
        entriesReturned: 2,
        entriesTotal: 2,
      });
      const downloaded = await fetch(all.body.assets[0].url);
      expect(downloaded.status).toBe(200);
      expect(Buffer.from(await downloaded.arrayBuffer())).toEqual(PNG_BYTES);

      expect((await service.api('GET', `${path}?type=trace`)).body.assets.map((asset: { name: string }) => asset.name)).toEqual(['trace.zip']);
      expect((await service.api('GET', `${path}?name=SCREENSHOT.PNG`)).body.entriesReturned).toBe(1);
      expectErrorANaming(await service.api('GET', `${path}?type=hologram`), ['type']);
      expectErrorA(await service.api('GET', `/v1/check-results/${passing.id}/${randomUUID()}/assets`), 404, 'Not Found');
    });

    it('answers DNS and ICMP monitor analytics where the CLI looks for them, with the metrics it asks for', async () => {
      const dns = await service.api('POST', '/v1/checks/dns', {
        name: 'dns', activated: false, privateLocations: [location.slugName], request: { query: 'example.test' },
      });
      const icmp = await service.api('POST', '/v1/checks/icmp', {
        name: 'icmp', activated: false, privateLocations: [location.slugName], request: { hostname: 'router.test' },
      });
      expect([dns.status, icmp.status]).toEqual([201, 201]);
      await runOnce(dns.body.id, { responseTime: 12, timings: null, statusCode: null, assertions: [] });
      await runOnce(icmp.body.id, {
        responseTime: 30, timings: null, statusCode: null, assertions: [], details: { latency: { avg: 7, min: 5, max: 9 }, packetLoss: 0 },
      });

      const dnsStats = await service.api('GET', `/v1/analytics/dns/${dns.body.id}?metrics=availability,total_avg,total_p95&quickRange=last24Hours`);
      expect(dnsStats.status).toBe(200);
      expect(dnsStats.body.series[0].data[0]).toMatchObject({ availability: 100, total_avg: 12, total_p95: 12 });
      const icmpStats = await service.api('GET', `/v1/analytics/icmp/${icmp.body.id}?metrics=availability,packetLoss_avg,latencyAvg_avg,latencyAvg_p95`);
      expect(icmpStats.status).toBe(200);
      expect(icmpStats.body.series[0].data[0]).toMatchObject({ availability: 100, packetLoss_avg: 0, latencyAvg_avg: 7, latencyAvg_p95: 7 });

      const batch = await service.api('POST', '/v1/analytics/checks', { checkIds: [dns.body.id, icmp.body.id] });
      const byId = new Map((batch.body as { checkId: string }[]).map((entry) => [entry.checkId, entry]));
      expect(byId.get(dns.body.id)).toMatchObject({ responseTime_avg: 12, latency_avg: null });
      expect(byId.get(icmp.body.id)).toMatchObject({ responseTime_avg: null, latency_avg: 7, packetLoss_avg: 0 });

      expectErrorA(await service.api('GET', `/v1/analytics/icmp/${passing.id}?metrics=availability`), 404, 'Not Found');
    });
  });
});
