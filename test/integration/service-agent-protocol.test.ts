import { randomUUID } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ARTIFACT_BYTES, MAX_ARTIFACT_NAME, type Job } from '../../src/protocol/agent-api.js';
import {
  createIdleUrlCheck,
  eventually,
  expectErrorA,
  expectErrorB,
  getSession,
  ManualAgent,
  resultFor,
  triggerCheck,
  urlCheckBody,
} from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const LEASE_SECONDS = 2;
const MAX_WAIT_SECONDS = 2;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

type Location = Awaited<ReturnType<TestService['privateLocation']>>;

interface UploadOutcome {
  status: number | undefined;
  body: any;
  /** Set when the connection failed before any answer came. */
  error: NodeJS.ErrnoException | undefined;
  sent: number;
}

/**
 * PUT with a declared Content-Length but no body at all: the answer must come
 * from the headers alone.
 */
function putDeclaringLength(url: string, key: string, length: number): Promise<UploadOutcome> {
  return new Promise((resolve) => {
    const req = request(url, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip', 'content-length': String(length) },
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ status: undefined, body: undefined, error: new Error('no answer within 5 s'), sent: 0 });
    }, 5000);
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: response.statusCode, body: parseJson(Buffer.concat(chunks)), error: undefined, sent: 0 });
      });
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      resolve({ status: undefined, body: undefined, error, sent: 0 });
    });
    req.flushHeaders();
  });
}

/** PUT a chunked body of zeros (no Content-Length) until the service answers or `total` bytes are sent. */
function putStreaming(url: string, key: string, total: number): Promise<UploadOutcome> {
  return new Promise((resolve) => {
    const chunk = Buffer.alloc(1024 * 1024);
    let sent = 0;
    let settled = false;
    const settle = (outcome: Omit<UploadOutcome, 'sent'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, sent });
    };
    const req = request(url, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream' },
    });
    const timer = setTimeout(() => {
      req.destroy();
      settle({ status: undefined, body: undefined, error: new Error('no answer within 15 s') });
    }, 15_000);
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (data: Buffer) => chunks.push(data));
      response.on('end', () => {
        settle({ status: response.statusCode, body: parseJson(Buffer.concat(chunks)), error: undefined });
        req.destroy();
      });
      response.on('error', (error) => settle({ status: response.statusCode, body: undefined, error }));
    });
    req.on('error', (error) => settle({ status: undefined, body: undefined, error }));
    const pump = () => {
      while (!settled && !req.destroyed && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!settled && !req.destroyed && sent >= total) req.end();
    };
    pump();
  });
}

function parseJson(buffer: Buffer): unknown {
  const text = buffer.toString('utf8');
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

describe.each(DB_KINDS)('agent protocol, driven by hand (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind, { leaseSeconds: LEASE_SECONDS, maxWaitSeconds: MAX_WAIT_SECONDS, tickMs: 100 });
  });
  afterAll(async () => service?.close());

  /** A fresh location with a connected agent, so no other test's jobs are in the way. */
  async function locationWithAgent(hello: Parameters<ManualAgent['connect']>[0] = {}) {
    const location = await service.privateLocation();
    const agent = await new ManualAgent(service, location.rawKey).connect(hello);
    return { location, agent };
  }

  /** A check at `locations`, triggered once; answers the session and the check. */
  async function triggered(locations: Location[]) {
    const check = await createIdleUrlCheck(service, locations.map((location) => location.slugName), {
      name: `Protocol ${randomUUID().slice(0, 8)}`,
    });
    const session = await triggerCheck(service, check.id);
    return { check, session };
  }

  const jobRow = async (jobId: string) =>
    (
      await service.service.db.query<{ state: string; attempt: number; agent_id: string | null }>(
        'SELECT state, attempt, agent_id FROM jobs WHERE id = $1',
        [jobId],
      )
    )[0];

  describe('hello', () => {
    it('answers the private location, the lease length and the longest wait', async () => {
      const location = await service.privateLocation();
      const answer = await new ManualAgent(service, location.rawKey).hello();
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        privateLocation: { id: location.id, slugName: location.slugName, name: location.slugName },
        leaseSeconds: LEASE_SECONDS,
        maxWaitSeconds: MAX_WAIT_SECONDS,
      });
    });

    it.each([
      ['an agentId that is not a uuid', (body: any) => (body.agentId = 'agent-1'), ['agentId']],
      ['a missing agentId', (body: any) => delete body.agentId, ['agentId']],
      ['an unknown mode', (body: any) => (body.mode = 'turbo'), ['mode']],
      ['an unknown check type', (body: any) => (body.checkTypes = ['URL', 'SMOKE_SIGNAL']), ['checkTypes.1']],
      ['a negative capacity', (body: any) => (body.capacity = { uptime: -1, script: 1 }), ['capacity.uptime']],
      ['a missing capacity', (body: any) => delete body.capacity, ['capacity']],
    ])('refuses a hello with %s: 400 shape B', async (_what, spoil, fields) => {
      const location = await service.privateLocation();
      const agent = new ManualAgent(service, location.rawKey);
      const body: any = agent.helloBody();
      spoil(body);
      expectErrorB(await agent.call('POST', '/v1/agent/hello', body), fields);
      const read = await service.api('GET', `/v1/private-locations/${location.id}`);
      expect(read.body.agentCount).toBe(0);
    });
  });

  it('refuses a hello that would move an agent registered at another private location: 409', async () => {
    const { agent } = await locationWithAgent();
    const other = await service.privateLocation();
    const impostor = new ManualAgent(service, other.rawKey, agent.agentId);
    expectErrorA(await impostor.hello(), 409, 'Conflict');
    // The registered agent keeps working where it is.
    expect((await agent.claim()).status).toBe(200);
  });

  describe('claiming jobs', () => {
    it('answers 409 shape A to a claim before hello', async () => {
      const location = await service.privateLocation();
      await triggered([location]);
      const stranger = new ManualAgent(service, location.rawKey);
      expectErrorA(await stranger.claim(), 409, 'Conflict');
      // Nothing was taken: an agent that did say hello gets the job.
      const agent = await new ManualAgent(service, location.rawKey).connect();
      expect((await agent.claim()).body.jobs).toHaveLength(1);
    });

    it('answers 409 to an agent that said hello at another private location', async () => {
      const { agent } = await locationWithAgent();
      const other = await service.privateLocation();
      const elsewhere = new ManualAgent(service, other.rawKey, agent.agentId);
      expectErrorA(await elsewhere.claim(), 409, 'Conflict');
    });

    it.each([
      ['max 0', { max: 0, waitSeconds: 0 }, ['max']],
      ['max 101', { max: 101, waitSeconds: 0 }, ['max']],
      ['waitSeconds 31', { max: 1, waitSeconds: 31 }, ['waitSeconds']],
      ['a string waitSeconds', { max: 1, waitSeconds: '1' }, ['waitSeconds']],
    ])('refuses a claim with %s: 400 shape B', async (_what, fields, names) => {
      const { agent } = await locationWithAgent();
      expectErrorB(await agent.call('POST', '/v1/agent/jobs/claim', { agentId: agent.agentId, ...fields }), names);
    });

    it('hands out only jobs of the check types declared in hello', async () => {
      const location = await service.privateLocation();
      const dnsOnly = await new ManualAgent(service, location.rawKey).connect({ checkTypes: ['DNS'], mode: 'uptime' });
      await triggered([location]);
      const answer = await dnsOnly.claim();
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ jobs: [] });
      // The job is still there for an agent that runs URL checks.
      const urlAgent = await new ManualAgent(service, location.rawKey).connect({ checkTypes: ['URL'] });
      expect((await urlAgent.claim()).body.jobs).toHaveLength(1);
    });

    it('follows the check types of the latest hello', async () => {
      const location = await service.privateLocation();
      const agent = await new ManualAgent(service, location.rawKey).connect({ checkTypes: ['DNS'] });
      await triggered([location]);
      expect((await agent.claim()).body.jobs).toEqual([]);
      await agent.connect({ checkTypes: ['DNS', 'URL'] });
      expect((await agent.claim()).body.jobs).toHaveLength(1);
    });

    it('hands out a job with every protocol field', async () => {
      const { location, agent } = await locationWithAgent();
      const { check, session } = await triggered([location]);
      const before = Date.now();
      const answer = await agent.claim();
      const after = Date.now();
      expect(answer.status).toBe(200);
      expect(answer.body.jobs).toHaveLength(1);
      const job = answer.body.jobs[0]!;
      expect(job).toEqual({
        jobId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        checkSessionId: session.checkSessionId,
        checkId: check.id,
        checkType: 'URL',
        name: check.name,
        runLocation: location.slugName,
        runSource: 'TRIGGER_API',
        attempt: 1,
        leaseExpiresAt: expect.stringMatching(ISO_DATE_TIME),
        timeoutSeconds: expect.any(Number),
        runtimeId: null,
        environmentVariables: [],
        settings: expect.objectContaining({
          request: expect.objectContaining({ url: 'http://127.0.0.1:9/health', method: 'GET', followRedirects: true }),
          degradedResponseTime: 3000,
          maxResponseTime: 5000,
        }),
      });
      expect(job.timeoutSeconds).toBeGreaterThanOrEqual(5);
      const expires = Date.parse(job.leaseExpiresAt);
      expect(expires).toBeGreaterThanOrEqual(before + LEASE_SECONDS * 1000 - 1000);
      expect(expires).toBeLessThanOrEqual(after + LEASE_SECONDS * 1000 + 1000);
      // Nothing of the account travels with a job.
      expect(JSON.stringify(job)).not.toContain(service.accountId);
    });

    it('hands a job to one agent only, and at most `max` jobs per claim', async () => {
      const { location, agent } = await locationWithAgent();
      const second = await new ManualAgent(service, location.rawKey).connect();
      for (let i = 0; i < 3; i++) await triggered([location]);
      const first = await agent.claim(0, 2);
      expect(first.body.jobs).toHaveLength(2);
      const rest = await second.claim(0, 10);
      expect(rest.body.jobs).toHaveLength(1);
      const ids = [...first.body.jobs, ...rest.body.jobs].map((job) => job.jobId);
      expect(new Set(ids).size).toBe(3);
      expect((await agent.claim()).body.jobs).toEqual([]);
    });

    it('holds a claim with nothing queued for waitSeconds, then answers {jobs: []}', async () => {
      const { agent } = await locationWithAgent();
      const started = Date.now();
      const answer = await agent.claim(1);
      const elapsed = Date.now() - started;
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ jobs: [] });
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(1900);
    });

    it('answers at once with waitSeconds 0', async () => {
      const { agent } = await locationWithAgent();
      const started = Date.now();
      expect((await agent.claim(0)).body).toEqual({ jobs: [] });
      expect(Date.now() - started).toBeLessThan(500);
    });

    it('holds a claim no longer than maxWaitSeconds even when asked for more', async () => {
      const { agent } = await locationWithAgent();
      const started = Date.now();
      const answer = await agent.claim(30);
      const elapsed = Date.now() - started;
      expect(answer.body).toEqual({ jobs: [] });
      expect(elapsed).toBeGreaterThanOrEqual(MAX_WAIT_SECONDS * 1000 - 100);
      expect(elapsed).toBeLessThan(MAX_WAIT_SECONDS * 1000 + 1500);
    });

    it('wakes a waiting claim as soon as a job is triggered, well before waitSeconds', async () => {
      const { location, agent } = await locationWithAgent();
      const started = Date.now();
      const waiting = agent.claim(2);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { session } = await triggered([location]);
      const triggeredAt = Date.now();
      const answer = await waiting;
      const answeredAt = Date.now();
      expect(answer.status).toBe(200);
      expect(answer.body.jobs.map((job) => job.checkSessionId)).toEqual([session.checkSessionId]);
      expect(answeredAt - started).toBeLessThan(1500);
      // Woken by the trigger itself, not by the once-a-second re-check.
      expect(answeredAt - triggeredAt).toBeLessThan(500);
    });

    it('claims nothing for a client that gave up waiting', async () => {
      const { location, agent } = await locationWithAgent();
      const abandon = new AbortController();
      const abandoned = fetch(`${service.url}/v1/agent/jobs/claim`, {
        method: 'POST',
        headers: { authorization: `Bearer ${location.rawKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agentId: agent.agentId, max: 10, waitSeconds: 2 }),
        signal: abandon.signal,
      }).catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 200));
      abandon.abort();
      expect(await abandoned).toBeInstanceOf(Error);
      await new Promise((resolve) => setTimeout(resolve, 100));

      const { session } = await triggered([location]);
      // Were the abandoned claim still waiting, it would have taken the job by now.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const [row] = await service.service.db.query<{ state: string; agent_id: string | null }>(
        'SELECT state, agent_id FROM jobs WHERE session_id = $1',
        [session.checkSessionId],
      );
      expect(row).toEqual({ state: 'queued', agent_id: null });
      const other = await new ManualAgent(service, location.rawKey).connect();
      expect((await other.claim(0)).body.jobs.map((job) => job.checkSessionId)).toEqual([session.checkSessionId]);
    });

    it('gives a job queued while two claims wait to exactly one of them', async () => {
      const { location, agent } = await locationWithAgent();
      const other = await new ManualAgent(service, location.rawKey).connect();
      const started = Date.now();
      const waiting = [agent.claim(1), other.claim(1)];
      await new Promise((resolve) => setTimeout(resolve, 200));
      await triggered([location]);
      const answers = await Promise.all(waiting);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
      expect(answers.map((answer) => answer.body.jobs.length).sort()).toEqual([0, 1]);
      // The empty one still waited out its time.
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    });

    it('moves the session from STARTED to PROGRESS once a job is claimed', async () => {
      const { location, agent } = await locationWithAgent();
      const { session } = await triggered([location]);
      expect((await getSession(service, session.checkSessionId)).status).toBe('STARTED');
      await agent.claimOne();
      const read = await getSession(service, session.checkSessionId);
      expect(read.status).toBe('PROGRESS');
      expect(read.results).toEqual([]);
      expect(read.stoppedAt).toBeNull();
    });
  });

  describe('result batches (POST /v1/agent/results)', () => {
    it('records several results in one call, each with its own outcome', async () => {
      const { location, agent } = await locationWithAgent();
      const first = await triggered([location]);
      const second = await triggered([location]);
      const { body } = await agent.claim(0, 10);
      expect(body.jobs).toHaveLength(2);
      const results = body.jobs.map((job) => resultFor(job, agent.agentId));
      const answer = await agent.call('POST', '/v1/agent/results', { results });
      expect(answer.status).toBe(200);
      expect(answer.body.outcomes).toEqual(results.map((r) => ({ jobId: r.jobId, outcome: 'recorded' })));
      for (const { session } of [first, second]) {
        const read = await service.api('GET', `/v1/check-sessions/${session.checkSessionId}`);
        expect(read.body.status).toBe('PASSED');
      }
      // The same batch again records nothing twice.
      const again = await agent.call('POST', '/v1/agent/results', { results });
      expect(again.body.outcomes.map((o: any) => o.outcome)).toEqual(['duplicate', 'duplicate']);
    });

    it('answers conflict for another agent\'s job and not-found for a job elsewhere, recording the rest', async () => {
      const { location, agent } = await locationWithAgent();
      const other = await new ManualAgent(service, location.rawKey).connect();
      await triggered([location]);
      const mine = await agent.claimOne();
      await triggered([location]);
      const theirs = await other.claimOne();
      const elsewhere = await locationWithAgent();
      await triggered([elsewhere.location]);
      const foreign = await elsewhere.agent.claimOne();
      const answer = await agent.call('POST', '/v1/agent/results', {
        results: [resultFor(mine, agent.agentId), resultFor(theirs, agent.agentId), resultFor(foreign, agent.agentId)],
      });
      expect(answer.body.outcomes.map((o: any) => o.outcome)).toEqual(['recorded', 'conflict', 'not-found']);
      expect(answer.body.outcomes[1].message).toContain('not leased to this agent');
    });

    it('refuses an empty batch or more than 100 results: 400 shape B', async () => {
      const { agent } = await locationWithAgent();
      expectErrorB(await agent.call('POST', '/v1/agent/results', { results: [] }), ['results']);
    });
  });

  describe('results', () => {
    it('records a passing result: 200 {recorded: true}, session PASSED with one FINAL result', async () => {
      const { location, agent } = await locationWithAgent();
      const { check, session } = await triggered([location]);
      const job = await agent.claimOne();
      const answer = await agent.report(job);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ recorded: true });

      const read = await getSession(service, session.checkSessionId);
      expect(read.status).toBe('PASSED');
      expect(read.stoppedAt).toMatch(ISO_DATE_TIME);
      expect(read.timeElapsed).toBeGreaterThanOrEqual(0);
      expect(read.results).toHaveLength(1);
      const result = read.results[0];
      expect(result).toMatchObject({
        checkResultId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        checkId: check.id,
        checkType: 'URL',
        runLocation: location.slugName,
        resultType: 'FINAL',
        hasErrors: false,
        hasFailures: false,
        isDegraded: false,
        aborted: false,
        isCancelled: false,
        name: check.name,
        responseTime: 42,
        statusCode: 200,
        timings: { dns: 1, tcp: 2, tls: null, firstByte: 30, download: 9, total: 42 },
        error: null,
        attempt: 1,
      });
      expect(result.checkResultLink).toMatch(
        new RegExp(`/v1/check-sessions/${session.checkSessionId}/results/${result.checkResultId}$`),
      );
    });

    it('answers the same result again with 200 {recorded: false} and keeps one result', async () => {
      const { location, agent } = await locationWithAgent();
      const { session } = await triggered([location]);
      const job = await agent.claimOne();
      const result = resultFor(job, agent.agentId);
      expect((await agent.call('POST', `/v1/agent/jobs/${job.jobId}/result`, result)).body).toEqual({ recorded: true });
      const again = await agent.call('POST', `/v1/agent/jobs/${job.jobId}/result`, result);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ recorded: false });
      expect((await getSession(service, session.checkSessionId)).results).toHaveLength(1);
    });

    it('records a failing result: session FAILED, hasFailures true', async () => {
      const { location, agent } = await locationWithAgent();
      const { session } = await triggered([location]);
      const job = await agent.claimOne();
      const answer = await agent.report(job, {
        hasFailures: true,
        statusCode: 500,
        assertions: [{ source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '200', actual: 500, passed: false }],
      });
      expect(answer.body).toEqual({ recorded: true });
      const read = await getSession(service, session.checkSessionId);
      expect(read.status).toBe('FAILED');
      expect(read.results).toHaveLength(1);
      expect(read.results[0]).toMatchObject({ hasFailures: true, hasErrors: false, statusCode: 500, resultType: 'FINAL' });
    });

    it('records an erroring result: session FAILED, hasErrors true, the error kept', async () => {
      const { location, agent } = await locationWithAgent();
      const { session } = await triggered([location]);
      const job = await agent.claimOne();
      const error = { code: 'CONNECTION_REFUSED', message: 'connect ECONNREFUSED 127.0.0.1:9' };
      await agent.report(job, { hasErrors: true, statusCode: null, timings: null, error });
      const read = await getSession(service, session.checkSessionId);
      expect(read.status).toBe('FAILED');
      expect(read.results[0]).toMatchObject({ hasErrors: true, hasFailures: false, statusCode: null, error });
    });

    it('records a degraded result: session DEGRADED, isDegraded true', async () => {
      const { location, agent } = await locationWithAgent();
      const { session } = await triggered([location]);
      const job = await agent.claimOne();
      await agent.report(job, { isDegraded: true, responseTime: 3500 });
      const read = await getSession(service, session.checkSessionId);
      expect(read.status).toBe('DEGRADED');
      expect(read.results[0]).toMatchObject({ isDegraded: true, hasFailures: false, hasErrors: false, responseTime: 3500 });
    });

    it('records a cancelled result: session CANCELLED', async () => {
      const { location, agent } = await locationWithAgent();
      const { session } = await triggered([location]);
      const job = await agent.claimOne();
      expect((await agent.report(job, { isCancelled: true, aborted: true })).body).toEqual({ recorded: true });
      const read = await getSession(service, session.checkSessionId);
      expect(read.status).toBe('CANCELLED');
      expect(read.results[0]).toMatchObject({ isCancelled: true, aborted: true });
    });

    it('treats an agentId in upper case as the same agent throughout, retries included', async () => {
      const location = await service.privateLocation();
      const agent = await new ManualAgent(service, location.rawKey, randomUUID().toUpperCase()).connect();
      const { session } = await triggered([location]);
      const job = await agent.claimOne();
      const result = resultFor(job, agent.agentId);
      expect((await agent.extend(job.jobId)).status).toBe(200);
      const first = await agent.call('POST', `/v1/agent/jobs/${job.jobId}/result`, result);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ recorded: true });
      // The agent did not hear the answer and sends the very same result again.
      const retry = await agent.call('POST', `/v1/agent/jobs/${job.jobId}/result`, result);
      expect(retry.status).toBe(200);
      expect(retry.body).toEqual({ recorded: false });
      expect((await getSession(service, session.checkSessionId)).status).toBe('PASSED');
    });

    it('serves the full detail of one result', async () => {
      const { location, agent } = await locationWithAgent();
      const { session } = await triggered([location]);
      const job = await agent.claimOne();
      const sent = resultFor(job, agent.agentId, {
        details: { redirects: 1 },
        artifacts: [{ name: 'trace.zip', contentType: 'application/zip', size: 10, uploaded: true, error: null }],
      });
      await agent.call('POST', `/v1/agent/jobs/${job.jobId}/result`, sent);
      const summary = (await getSession(service, session.checkSessionId)).results[0];
      const answer = await service.api('GET', `/v1/check-sessions/${session.checkSessionId}/results/${summary.checkResultId}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        checkResultId: summary.checkResultId,
        checkSessionId: session.checkSessionId,
        checkId: job.checkId,
        runLocation: location.slugName,
        resultType: 'FINAL',
        responseTime: 42,
        statusCode: 200,
        timings: sent.timings,
        assertions: sent.assertions,
        details: { redirects: 1 },
        logs: sent.logs,
        artifacts: sent.artifacts,
        startedAt: sent.startedAt,
        stoppedAt: sent.stoppedAt,
      });
      expectErrorA(
        await service.api('GET', `/v1/check-sessions/${session.checkSessionId}/results/${randomUUID()}`),
        404,
        'Not Found',
      );
    });

    it('refuses a result from another agent, before and after the job is done: 409 shape A', async () => {
      const { location, agent } = await locationWithAgent();
      const other = await new ManualAgent(service, location.rawKey).connect();
      await triggered([location]);
      const job = await agent.claimOne();
      // Not this agent's job.
      expectErrorA(await other.report(job), 409, 'Conflict');
      expect((await agent.report(job)).body).toEqual({ recorded: true });
      // Already completed by someone else.
      expectErrorA(await other.report(job, { hasFailures: true }), 409, 'Conflict');
    });

    it('refuses a result whose jobId differs from the path: 400 shape B', async () => {
      const { location, agent } = await locationWithAgent();
      await triggered([location]);
      const job = await agent.claimOne();
      const body = resultFor(job, agent.agentId, { jobId: randomUUID() });
      expectErrorB(await agent.call('POST', `/v1/agent/jobs/${job.jobId}/result`, body), ['jobId']);
      expect((await jobRow(job.jobId))!.state).toBe('leased');
    });

    it.each([
      ['a missing hasFailures', (body: any) => delete body.hasFailures, ['hasFailures']],
      ['a negative responseTime', (body: any) => (body.responseTime = -5), ['responseTime']],
      ['a startedAt that is not a date-time', (body: any) => (body.startedAt = 'yesterday'), ['startedAt']],
      ['an agentId that is not a uuid', (body: any) => (body.agentId = 'me'), ['agentId']],
    ])('refuses a result with %s: 400 shape B', async (_what, spoil, fields) => {
      const { location, agent } = await locationWithAgent();
      await triggered([location]);
      const job = await agent.claimOne();
      const body: any = resultFor(job, agent.agentId);
      spoil(body);
      expectErrorB(await agent.call('POST', `/v1/agent/jobs/${job.jobId}/result`, body), fields);
    });

    it('answers 404 shape A to a result for an unknown job', async () => {
      const { agent } = await locationWithAgent();
      const fake = { jobId: randomUUID(), checkId: randomUUID(), checkType: 'URL', runLocation: 'x' } as Job;
      expectErrorA(await agent.report(fake), 404, 'Not Found');
    });

    it('is PROGRESS_FAILED after one failed location of two, FAILED when both are in', async () => {
      const a = await locationWithAgent();
      const b = await locationWithAgent();
      const { session } = await triggered([a.location, b.location]);
      expect(session.runLocations.sort()).toEqual([a.location.slugName, b.location.slugName].sort());
      const jobA = await a.agent.claimOne();
      const jobB = await b.agent.claimOne();
      expect(jobA.runLocation).toBe(a.location.slugName);
      expect(jobB.runLocation).toBe(b.location.slugName);
      expect(jobA.checkSessionId).toBe(jobB.checkSessionId);

      await a.agent.report(jobA, { hasFailures: true });
      const during = await getSession(service, session.checkSessionId);
      expect(during.status).toBe('PROGRESS_FAILED');
      expect(during.stoppedAt).toBeNull();
      expect(during.results).toHaveLength(1);

      await b.agent.report(jobB);
      const done = await getSession(service, session.checkSessionId);
      expect(done.status).toBe('FAILED');
      expect(done.results.map((r: { runLocation: string }) => r.runLocation).sort()).toEqual(
        [a.location.slugName, b.location.slugName].sort(),
      );
      expect(done.stoppedAt).toMatch(ISO_DATE_TIME);
    });

    it('is PROGRESS_DEGRADED after one degraded location of two, DEGRADED when the other passes', async () => {
      const a = await locationWithAgent();
      const b = await locationWithAgent();
      const { session } = await triggered([a.location, b.location]);
      const jobA = await a.agent.claimOne();
      const jobB = await b.agent.claimOne();
      await a.agent.report(jobA, { isDegraded: true });
      expect((await getSession(service, session.checkSessionId)).status).toBe('PROGRESS_DEGRADED');
      await b.agent.report(jobB);
      expect((await getSession(service, session.checkSessionId)).status).toBe('DEGRADED');
    });

    it('is PROGRESS while one location of two passed, PASSED when both passed', async () => {
      const a = await locationWithAgent();
      const b = await locationWithAgent();
      const { session } = await triggered([a.location, b.location]);
      const jobA = await a.agent.claimOne();
      await a.agent.report(jobA);
      expect((await getSession(service, session.checkSessionId)).status).toBe('PROGRESS');
      const jobB = await b.agent.claimOne();
      await b.agent.report(jobB);
      expect((await getSession(service, session.checkSessionId)).status).toBe('PASSED');
    });
  });

  describe('leases', () => {
    it('extends a lease: 200 with a later leaseExpiresAt', async () => {
      const { location, agent } = await locationWithAgent();
      await triggered([location]);
      const job = await agent.claimOne();
      await new Promise((resolve) => setTimeout(resolve, 150));
      const answer = await agent.extend(job.jobId);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ leaseExpiresAt: expect.stringMatching(ISO_DATE_TIME) });
      expect(Date.parse(answer.body.leaseExpiresAt)).toBeGreaterThan(Date.parse(job.leaseExpiresAt));
      expect(Date.parse(answer.body.leaseExpiresAt)).toBeLessThanOrEqual(Date.now() + LEASE_SECONDS * 1000 + 1000);
    });

    it('refuses to extend the lease of another agent: 409 shape A', async () => {
      const { location, agent } = await locationWithAgent();
      const other = await new ManualAgent(service, location.rawKey).connect();
      await triggered([location]);
      const job = await agent.claimOne();
      expectErrorA(await other.extend(job.jobId), 409, 'Conflict');
      expectErrorA(await agent.extend(randomUUID()), 409, 'Conflict');
    });

    it('refuses to extend the lease of a completed job: 409', async () => {
      const { location, agent } = await locationWithAgent();
      await triggered([location]);
      const job = await agent.claimOne();
      await agent.report(job);
      expectErrorA(await agent.extend(job.jobId), 409, 'Conflict');
    });

    it('keeps an extended job leased past its first expiry', async () => {
      const { location, agent } = await locationWithAgent();
      await triggered([location]);
      const job = await agent.claimOne();
      for (let i = 0; i < 4; i++) {
        await new Promise((resolve) => setTimeout(resolve, 700));
        expect((await agent.extend(job.jobId)).status).toBe(200);
      }
      // 2.8 s after the claim of a 2 s lease: still this agent's first attempt.
      expect(await jobRow(job.jobId)).toMatchObject({ state: 'leased', attempt: 1, agent_id: agent.agentId });
      expect((await agent.report(job)).body).toEqual({ recorded: true });
    });

    it('releases a job: 204, and another agent claims it at once with the same attempt', async () => {
      const { location, agent } = await locationWithAgent();
      const other = await new ManualAgent(service, location.rawKey).connect();
      const { session } = await triggered([location]);
      const job = await agent.claimOne();
      const released = await agent.release(job.jobId, 'SIGTERM: stopping');
      expect(released.status).toBe(204);
      expect(released.body).toBeUndefined();
      const again = await other.claim(0);
      expect(again.body.jobs).toHaveLength(1);
      expect(again.body.jobs[0]).toMatchObject({ jobId: job.jobId, attempt: 1, checkSessionId: session.checkSessionId });
      // The releasing agent has no say over the job any more.
      expectErrorA(await agent.extend(job.jobId), 409, 'Conflict');
      expect((await other.report(again.body.jobs[0]!)).body).toEqual({ recorded: true });
      expect((await getSession(service, session.checkSessionId)).status).toBe('PASSED');
    });

    it('wakes a waiting claim when a job is released', async () => {
      const { location, agent } = await locationWithAgent();
      const other = await new ManualAgent(service, location.rawKey).connect();
      await triggered([location]);
      const job = await agent.claimOne();
      const waiting = other.claim(2);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const releasedAt = Date.now();
      expect((await agent.release(job.jobId)).status).toBe(204);
      const answer = await waiting;
      expect(answer.body.jobs.map((j) => j.jobId)).toEqual([job.jobId]);
      expect(Date.now() - releasedAt).toBeLessThan(500);
    });

    it('offers a released long-running job again instead of timing it out as never picked up', async () => {
      // A long job (a Playwright suite may run 30 minutes) claimed soon after its
      // scheduled time and released at shutdown many minutes later: it was picked up.
      const { location, agent } = await locationWithAgent();
      const { session } = await triggered([location]);
      const job = await agent.claimOne();
      await service.service.db.query(`UPDATE jobs SET scheduled_at = now() - interval '20 minutes' WHERE id = $1`, [
        job.jobId,
      ]);
      expect((await agent.extend(job.jobId)).status).toBe(200);
      expect((await agent.release(job.jobId, 'SIGTERM: grace period over')).status).toBe(204);
      await service.service.scheduler.tick();
      expect(await jobRow(job.jobId)).toMatchObject({ state: 'queued', attempt: 1 });
      expect((await getSession(service, session.checkSessionId)).results).toEqual([]);
      const next = await new ManualAgent(service, location.rawKey).connect();
      expect((await next.claim(0)).body.jobs.map((j) => j.jobId)).toEqual([job.jobId]);
    });

    it('refuses a release by an agent that does not hold the job: 409 shape A', async () => {
      const { location, agent } = await locationWithAgent();
      const other = await new ManualAgent(service, location.rawKey).connect();
      await triggered([location]);
      const job = await agent.claimOne();
      expectErrorA(await other.release(job.jobId), 409, 'Conflict');
      expect(await jobRow(job.jobId)).toMatchObject({ state: 'leased', agent_id: agent.agentId });
      expectErrorB(await agent.call('POST', `/v1/agent/jobs/${job.jobId}/release`, { agentId: agent.agentId }), ['reason']);
    });

    it('re-offers a job whose lease ran out before it started with the same attempt: none was spent', async () => {
      const { location, agent } = await locationWithAgent();
      const rescuer = await new ManualAgent(service, location.rawKey).connect();
      await triggered([location]);
      const first = await agent.claimOne();
      const again = await rescuer.claimOne((LEASE_SECONDS + 3) * 1000);
      expect(again).toMatchObject({ jobId: first.jobId, attempt: 1 });
      expectErrorA(await agent.extend(first.jobId), 409, 'Conflict');
    });

    it('re-offers a job whose lease ran out with attempt 2, then times the location out after the second expiry', async () => {
      const { location, agent } = await locationWithAgent();
      const rescuer = await new ManualAgent(service, location.rawKey).connect();
      const { session } = await triggered([location]);
      const first = await agent.claimOne();
      expect(first.attempt).toBe(1);
      // Extending the lease says the job runs: its expiry then spends the attempt.
      expect((await agent.extend(first.jobId)).status).toBe(200);

      const second = await rescuer.claimOne((LEASE_SECONDS + 3) * 1000);
      expect(second).toMatchObject({ jobId: first.jobId, attempt: 2, checkSessionId: session.checkSessionId });
      // The original agent lost the lease.
      expectErrorA(await agent.extend(first.jobId), 409, 'Conflict');
      expect((await getSession(service, session.checkSessionId)).status).toBe('PROGRESS');
      expect((await rescuer.extend(second.jobId)).status).toBe(200);

      // Nobody reports: after the second lease there is no third attempt.
      const timedOut = await eventually(
        async () => {
          const read = await getSession(service, session.checkSessionId);
          return read.status === 'PROGRESS' ? undefined : read;
        },
        (LEASE_SECONDS + 3) * 1000,
        'the session to complete',
      );
      expect(timedOut.status).toBe('TIMED_OUT');
      expect(timedOut.stoppedAt).toMatch(ISO_DATE_TIME);
      expect(timedOut.results).toHaveLength(1);
      expect(timedOut.results[0]).toMatchObject({
        runLocation: location.slugName,
        resultType: 'FINAL',
        hasErrors: true,
        hasFailures: false,
        isDegraded: false,
        error: { code: 'TIMED_OUT', message: expect.any(String) },
      });
      expect(await jobRow(first.jobId)).toMatchObject({ state: 'done' });
      // Neither agent may report any more: the job is complete.
      expectErrorA(await rescuer.report(second), 409, 'Conflict');
      expectErrorA(await rescuer.extend(first.jobId), 409, 'Conflict');
    });

    it("accepts the original agent's late result after the job was re-offered, and refuses the second agent's", async () => {
      const { location, agent } = await locationWithAgent();
      const rescuer = await new ManualAgent(service, location.rawKey).connect();
      const { session } = await triggered([location]);
      const first = await agent.claimOne();
      expect((await agent.extend(first.jobId)).status).toBe(200);
      const second = await rescuer.claimOne((LEASE_SECONDS + 3) * 1000);
      expect(second.attempt).toBe(2);

      expect((await agent.report(first)).body).toEqual({ recorded: true });
      expectErrorA(await rescuer.report(second, { hasFailures: true }), 409, 'Conflict');
      const read = await getSession(service, session.checkSessionId);
      expect(read.status).toBe('PASSED');
      expect(read.results).toHaveLength(1);
      expect(read.results[0]).toMatchObject({ hasFailures: false, hasErrors: false });
      expectErrorA(await rescuer.extend(second.jobId), 409, 'Conflict');
    });

    it('renews every lease named in one heartbeat, marks the running ones started, and names those no longer the agent\'s', async () => {
      const { location, agent } = await locationWithAgent();
      const other = await new ManualAgent(service, location.rawKey).connect();
      await triggered([location]);
      await triggered([location]);
      const running = await agent.claimOne();
      const waiting = await agent.claimOne();
      await triggered([location]);
      const someoneElses = await other.claimOne();
      const beat = await agent.heartbeat([running.jobId], [waiting.jobId, someoneElses.jobId]);
      expect(beat.status).toBe(200);
      expect(beat.body.lost).toEqual([someoneElses.jobId]);
      expect(Date.parse(beat.body.leaseExpiresAt)).toBeGreaterThan(Date.now());
      const started = await service.service.db.query<{ id: string; started: boolean }>(
        'SELECT id, started_at IS NOT NULL AS started FROM jobs WHERE id = ANY($1::uuid[])',
        [[running.jobId, waiting.jobId]],
      );
      expect(Object.fromEntries(started.map((row) => [row.id, row.started]))).toEqual({
        [running.jobId]: true,
        [waiting.jobId]: false,
      });
      // Heartbeats keep both past their first lease; the other agent's job stays the other agent's.
      await new Promise((resolve) => setTimeout(resolve, LEASE_SECONDS * 600));
      expect((await agent.heartbeat([running.jobId], [waiting.jobId])).body.lost).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, LEASE_SECONDS * 600));
      expect((await agent.heartbeat([running.jobId], [waiting.jobId])).body.lost).toEqual([]);
      expect(await jobRow(waiting.jobId)).toMatchObject({ state: 'leased', agent_id: agent.agentId, attempt: 1 });
      expectErrorB(await agent.call('POST', '/v1/agent/leases', { agentId: agent.agentId, running: ['x'], waiting: [] }), ['running.0']);
    });

    it('releases several jobs in one call, and only the caller\'s', async () => {
      const { location, agent } = await locationWithAgent();
      const other = await new ManualAgent(service, location.rawKey).connect();
      await triggered([location]);
      await triggered([location]);
      const mine = [await agent.claimOne(), await agent.claimOne()];
      await triggered([location]);
      const theirs = await other.claimOne();
      const answer = await agent.releaseMany([...mine.map((job) => job.jobId), theirs.jobId]);
      expect(answer.body).toEqual({ released: 2 });
      for (const job of mine) expect(await jobRow(job.jobId)).toMatchObject({ state: 'queued', agent_id: null, attempt: 1 });
      expect(await jobRow(theirs.jobId)).toMatchObject({ state: 'leased', agent_id: other.agentId });
    });

    it('on goodbye offers again every job of the agent but those it keeps, and refuses its claims until hello', async () => {
      const { location, agent } = await locationWithAgent();
      for (let i = 0; i < 3; i += 1) await triggered([location]);
      const [kept, second, third] = [await agent.claimOne(), await agent.claimOne(), await agent.claimOne()];
      const answer = await agent.goodbye([kept.jobId]);
      expect(answer.body).toEqual({ released: 2 });
      expect(await jobRow(kept.jobId)).toMatchObject({ state: 'leased', agent_id: agent.agentId });
      for (const job of [second, third]) expect(await jobRow(job.jobId)).toMatchObject({ state: 'queued', attempt: 1 });
      // Its running job is still its own to renew and report.
      expect((await agent.heartbeat([kept.jobId])).body.lost).toEqual([]);
      expectErrorA(await agent.claim(), 409, 'Conflict');
      expect((await agent.report(kept)).body).toEqual({ recorded: true });
      await agent.connect();
      expect((await agent.claim(0)).body.jobs.map((job) => job.jobId).sort()).toEqual([second.jobId, third.jobId].sort());
      expectErrorA(await new ManualAgent(service, location.rawKey).goodbye(), 409, 'Conflict');
    });

    it('releases what a claim leased when the claim\'s client left before the answer, and what a goodbye raced', async () => {
      const { location, agent } = await locationWithAgent();
      // Claims that went out and were given up at once, each raced by a goodbye: nothing may stay leased to the agent.
      for (let round = 0; round < 5; round += 1) {
        await triggered([location]);
        const controller = new AbortController();
        const claim = fetch(`${service.url}/v1/agent/jobs/claim`, {
          method: 'POST',
          headers: { authorization: `Bearer ${location.rawKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ agentId: agent.agentId, max: 10, waitSeconds: 1 }),
          signal: controller.signal,
        }).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, round * 3));
        controller.abort();
        await claim;
        expect((await agent.goodbye()).status).toBe(200);
        const leased = await service.service.db.query(
          "SELECT id FROM jobs WHERE agent_id = $1 AND state = 'leased'",
          [agent.agentId],
        );
        expect(leased).toEqual([]);
        await agent.connect();
      }
    });

    it('gives agents one lease length to renew after the service could not sweep', async () => {
      const { location, agent } = await locationWithAgent();
      await triggered([location]);
      const job = await agent.claimOne();
      const { sweepJobs } = await import('../../src/service/store/jobs.js');
      // In one transaction: the scheduler's own sweep must not see the lease expired in between.
      await service.service.db.transaction(async (tx) => {
        await tx.query("UPDATE jobs SET lease_expires_at = now() - interval '1 minute' WHERE id = $1", [job.jobId]);
        await sweepJobs(tx, { graceSeconds: LEASE_SECONDS });
      });
      expect(await jobRow(job.jobId)).toMatchObject({ state: 'leased', agent_id: agent.agentId });
      expect((await agent.heartbeat([job.jobId])).body.lost).toEqual([]);
    });

    it('times out a job no agent claimed within 6 minutes, naming the location', async () => {
      const location = await service.privateLocation();
      const { session } = await triggered([location]);
      await service.service.db.query(
        `UPDATE jobs SET scheduled_at = now() - interval '7 minutes' WHERE session_id = $1 AND state = 'queued'`,
        [session.checkSessionId],
      );
      await service.service.scheduler.tick();
      const read = await eventually(
        async () => {
          const current = await getSession(service, session.checkSessionId);
          return current.status === 'TIMED_OUT' ? current : undefined;
        },
        2000,
        'the unclaimed session to time out',
      );
      expect(read.stoppedAt).toMatch(ISO_DATE_TIME);
      expect(read.results).toHaveLength(1);
      expect(read.results[0]).toMatchObject({
        runLocation: location.slugName,
        resultType: 'FINAL',
        hasErrors: true,
        error: { code: 'TIMED_OUT', message: expect.stringContaining(location.slugName) },
      });
      // A late agent finds nothing to do.
      const agent = await new ManualAgent(service, location.rawKey).connect();
      expect((await agent.claim()).body.jobs).toEqual([]);
    });

    it('does not time out a queued job younger than 6 minutes', async () => {
      const location = await service.privateLocation();
      const { session } = await triggered([location]);
      await service.service.db.query(
        `UPDATE jobs SET scheduled_at = now() - interval '5 minutes' WHERE session_id = $1`,
        [session.checkSessionId],
      );
      await service.service.scheduler.tick();
      expect((await getSession(service, session.checkSessionId)).status).toBe('STARTED');
      const agent = await new ManualAgent(service, location.rawKey).connect();
      expect((await agent.claim()).body.jobs).toHaveLength(1);
    });
  });

  describe('sessions with a timed-out location', () => {
    /** Two locations; the first reports `flags`, the second's job is never claimed and expires. */
    async function oneReportsOneExpires(flags: Parameters<ManualAgent['report']>[1]) {
      const a = await locationWithAgent();
      const b = await service.privateLocation();
      const { session } = await triggered([a.location, b]);
      const job = await a.agent.claimOne();
      await a.agent.report(job, flags);
      await service.service.db.query(
        `UPDATE jobs SET scheduled_at = now() - interval '7 minutes' WHERE session_id = $1 AND state = 'queued'`,
        [session.checkSessionId],
      );
      await service.service.scheduler.tick();
      return eventually(
        async () => {
          const read = await getSession(service, session.checkSessionId);
          return read.results.length === 2 ? read : undefined;
        },
        2000,
        'both location results',
      );
    }

    it('is TIMED_OUT when one location passed and the other was never picked up', async () => {
      const read = await oneReportsOneExpires({});
      expect(read.status).toBe('TIMED_OUT');
    });

    it('is FAILED when one location failed and the other was never picked up: a failure beats a time-out', async () => {
      const read = await oneReportsOneExpires({ hasFailures: true });
      expect(read.status).toBe('FAILED');
    });

    it('is TIMED_OUT when one location was degraded and the other was never picked up', async () => {
      const read = await oneReportsOneExpires({ isDegraded: true });
      expect(read.status).toBe('TIMED_OUT');
    });
  });

  describe('artifacts', () => {
    /** A leased job at a fresh location, and a way to PUT bytes for it. */
    async function leasedJob() {
      const { location, agent } = await locationWithAgent();
      await triggered([location]);
      const job = await agent.claimOne();
      const put = (name: string, body: Uint8Array | string, contentType: string) =>
        fetch(`${service.url}/v1/agent/jobs/${job.jobId}/artifacts/${name}?agentId=${agent.agentId}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${location.rawKey}`, 'content-type': contentType },
          body,
        });
      return { location, agent, job, put };
    }

    const artifactRows = (jobId: string) =>
      service.service.db.query<{ name: string; content_type: string; size: number; path: string }>(
        'SELECT name, content_type, size, path FROM artifacts WHERE job_id = $1 ORDER BY name',
        [jobId],
      );

    it('stores an uploaded artifact: 201 {name, size}, a row and the exact bytes on disk', async () => {
      const { job, put } = await leasedJob();
      const bytes = Buffer.alloc(5000);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) % 256;
      const response = await put('trace.zip', bytes, 'application/zip');
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ name: 'trace.zip', size: 5000 });
      const rows = await artifactRows(job.jobId);
      expect(rows).toEqual([{ name: 'trace.zip', content_type: 'application/zip', size: 5000, path: expect.any(String) }]);
      expect(Buffer.compare(await readFile(rows[0]!.path), bytes)).toBe(0);
    });

    it('stores a JSON artifact raw, byte for byte, without parsing it', async () => {
      const { job, put } = await leasedJob();
      const text = '{ "b" :2,\n  "a": [1,2 ,3] }\n';
      const response = await put('report.json', text, 'application/json');
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ name: 'report.json', size: Buffer.byteLength(text) });
      const broken = '{"not": json';
      const second = await put('broken.json', broken, 'application/json');
      expect(second.status).toBe(201);
      const rows = await artifactRows(job.jobId);
      expect(rows.map((row) => [row.name, row.content_type])).toEqual([
        ['broken.json', 'application/json'],
        ['report.json', 'application/json'],
      ]);
      expect(await readFile(rows[1]!.path, 'utf8')).toBe(text);
      expect(await readFile(rows[0]!.path, 'utf8')).toBe(broken);
    });

    it('replaces an artifact uploaded again under the same name', async () => {
      const { job, put } = await leasedJob();
      expect((await put('log.txt', 'first version', 'text/plain')).status).toBe(201);
      expect((await put('log.txt', 'second', 'text/plain')).status).toBe(201);
      const rows = await artifactRows(job.jobId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ size: 6 });
      expect(await readFile(rows[0]!.path, 'utf8')).toBe('second');
      // The replaced bytes are gone from disk too: only the latest file is left.
      expect(await readdir(dirname(rows[0]!.path))).toEqual([expect.stringMatching(/log\.txt$/)]);
    });

    it('refuses a declared Content-Length over 150 MB with 413 shape A before any byte of the body', async () => {
      const { location, agent, job } = await leasedJob();
      const started = Date.now();
      const outcome = await putDeclaringLength(
        `${service.url}/v1/agent/jobs/${job.jobId}/artifacts/trace.zip?agentId=${agent.agentId}`,
        location.rawKey,
        MAX_ARTIFACT_BYTES + 1,
      );
      expect(outcome.error).toBeUndefined();
      expect(outcome.status).toBe(413);
      expect(outcome.body).toEqual({ statusCode: 413, error: 'Payload Too Large', message: expect.any(String) });
      expect(Date.now() - started).toBeLessThan(3000);
      expect(await artifactRows(job.jobId)).toEqual([]);
    });

    it('accepts an artifact of exactly 150 MB declared, as far as the headers go', async () => {
      // The limit is inclusive: exactly MAX_ARTIFACT_BYTES is allowed. Only a
      // small body is sent, so the service must wait for the rest; give up quickly.
      const { location, agent, job } = await leasedJob();
      const outcome = await new Promise<number | undefined>((resolve) => {
        const req = request(`${service.url}/v1/agent/jobs/${job.jobId}/artifacts/trace.zip?agentId=${agent.agentId}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${location.rawKey}`, 'content-length': String(MAX_ARTIFACT_BYTES) },
        });
        const timer = setTimeout(() => {
          req.destroy();
          resolve(undefined);
        }, 700);
        req.on('response', (response) => {
          clearTimeout(timer);
          req.destroy();
          resolve(response.statusCode);
        });
        req.on('error', () => undefined);
        req.write(Buffer.alloc(1024));
      });
      // No early 413: the service is still reading when the client gives up.
      expect(outcome).toBeUndefined();
    });

    it(
      'refuses a streamed upload that passes 150 MB with 413 shape A and leaves no file behind',
      async () => {
        const { location, agent, job, put } = await leasedJob();
        // A small artifact first, to learn where this job's files go.
        expect((await put('small.txt', 'kept', 'text/plain')).status).toBe(201);
        const [small] = await artifactRows(job.jobId);
        const jobDirectory = dirname(small!.path);

        const outcome = await putStreaming(
          `${service.url}/v1/agent/jobs/${job.jobId}/artifacts/huge.bin?agentId=${agent.agentId}`,
          location.rawKey,
          MAX_ARTIFACT_BYTES + 8 * 1024 * 1024,
        );
        expect(outcome.sent).toBeGreaterThan(MAX_ARTIFACT_BYTES);
        expect(outcome.error?.code ?? outcome.error?.message).toBeUndefined();
        expect(outcome.status).toBe(413);
        expect(outcome.body).toEqual({ statusCode: 413, error: 'Payload Too Large', message: expect.any(String) });

        // Nothing of the oversized upload is kept: no row, no file (give the service a moment to clean up).
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect((await artifactRows(job.jobId)).map((row) => row.name)).toEqual(['small.txt']);
        expect(await readdir(jobDirectory)).toEqual([expect.stringMatching(/small\.txt$/)]);
        expect((await stat(small!.path)).size).toBe(4);
      },
      30_000,
    );

    it('stores an empty artifact sent without a content type: 201 with size 0', async () => {
      const { location, agent, job } = await leasedJob();
      // fetch sends a Buffer body with Content-Length and no Content-Type.
      const response = await fetch(`${service.url}/v1/agent/jobs/${job.jobId}/artifacts/empty.log?agentId=${agent.agentId}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${location.rawKey}` },
        body: Buffer.alloc(0),
      });
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ name: 'empty.log', size: 0 });
      const rows = await artifactRows(job.jobId);
      expect(rows).toEqual([{ name: 'empty.log', content_type: 'application/octet-stream', size: 0, path: expect.any(String) }]);
    });

    it('stores an artifact sent without a content type as application/octet-stream', async () => {
      const { location, agent, job } = await leasedJob();
      const response = await fetch(`${service.url}/v1/agent/jobs/${job.jobId}/artifacts/blob.bin?agentId=${agent.agentId}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${location.rawKey}` },
        body: Buffer.alloc(100, 7),
      });
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ name: 'blob.bin', size: 100 });
      const [row] = await artifactRows(job.jobId);
      expect(row).toMatchObject({ content_type: 'application/octet-stream', size: 100 });
    });

    it('answers 404 shape A for an unknown job', async () => {
      const { location, agent } = await locationWithAgent();
      const response = await fetch(`${service.url}/v1/agent/jobs/${randomUUID()}/artifacts/trace.zip?agentId=${agent.agentId}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${location.rawKey}`, 'content-type': 'application/zip' },
        body: Buffer.alloc(100),
      });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ statusCode: 404, error: 'Not Found', message: expect.any(String) });
    });

    it('takes a name as long as the protocol allows, and refuses a longer one with 400, not the router\'s 414', async () => {
      const { put } = await leasedJob();
      const longest = `${'a'.repeat(MAX_ARTIFACT_NAME - 4)}.png`;
      const stored = await put(longest, 'x', 'image/png');
      expect(stored.status).toBe(201);
      expect(await stored.json()).toEqual({ name: longest, size: 1 });
      const tooLong = await put(`b${longest}`, 'x', 'image/png');
      expect(tooLong.status).toBe(400);
      expect(Object.keys((await tooLong.json()) as object).sort()).toEqual(['attributes', 'message']);
    });

    it('refuses an artifact name with a path in it', async () => {
      const { put } = await leasedJob();
      for (const name of ['..%2Fescape.txt', '.hidden', '%2Fetc%2Fpasswd']) {
        const response = await put(name, 'x', 'text/plain');
        expect(response.status, name).toBe(400);
        expect(Object.keys((await response.json()) as object).sort(), name).toEqual(['attributes', 'message']);
      }
    });
  });

  describe('scheduler', () => {
    it('starts a SCHEDULER session for an activated check within a couple of ticks, and an agent gets its job', async () => {
      const { location, agent } = await locationWithAgent();
      const created = await service.api(
        'POST',
        '/v1/checks/url',
        urlCheckBody([location.slugName], { frequency: 1, name: 'Scheduled' }),
      );
      expect(created.status).toBe(201);
      const job = await agent.claimOne(1500);
      expect(job).toMatchObject({ checkId: created.body.id, runSource: 'SCHEDULER', attempt: 1, runLocation: location.slugName });
      const session = await getSession(service, job.checkSessionId);
      expect(session).toMatchObject({ checkId: created.body.id, runSource: 'SCHEDULER', status: 'PROGRESS' });
      expect((await agent.report(job)).body).toEqual({ recorded: true });
      expect((await getSession(service, job.checkSessionId)).status).toBe('PASSED');
      // One run per frequency: no second session right away.
      await new Promise((resolve) => setTimeout(resolve, 400));
      const sessions = await service.service.db.query('SELECT id FROM check_sessions WHERE check_id = $1', [created.body.id]);
      expect(sessions).toHaveLength(1);
    });

    it('never schedules a deactivated check', async () => {
      const location = await service.privateLocation();
      const check = await createIdleUrlCheck(service, [location.slugName]);
      await new Promise((resolve) => setTimeout(resolve, 400));
      const sessions = await service.service.db.query('SELECT id FROM check_sessions WHERE check_id = $1', [check.id]);
      expect(sessions).toEqual([]);
    });
  });
});
