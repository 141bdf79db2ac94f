import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/protocol/agent-api.js';
import { createIdleUrlCheck, expectErrorB, ManualAgent, triggerCheck } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * Every agent of a location holds the same key, so the key alone cannot say
 * whose job it is: the uploading agent names itself, and only the agent the
 * job is leased to may write its artifacts.
 */
describe.each(DB_KINDS)('artifact uploads need the lease (%s)', (kind) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService(kind);
  }, 60_000);

  afterAll(async () => {
    await service?.close();
  });

  async function leased(): Promise<{ owner: ManualAgent; other: ManualAgent; job: Job; key: string }> {
    const location = await service.privateLocation();
    const owner = await new ManualAgent(service, location.rawKey).connect();
    const other = await new ManualAgent(service, location.rawKey).connect();
    await triggerCheck(service, (await createIdleUrlCheck(service, [location.slugName])).id);
    return { owner, other, job: await owner.claimOne(), key: location.rawKey };
  }

  const put = (key: string, jobId: string, query: string) =>
    service.raw('PUT', `/v1/agent/jobs/${jobId}/artifacts/trace.zip${query}`, undefined, {
      authorization: `Bearer ${key}`,
    });

  const rows = async (jobId: string) =>
    (await service.service.db.query<{ name: string }>('SELECT name FROM artifacts WHERE job_id = $1', [jobId])).map((row) => row.name);

  it('takes the artifact from the agent the job is leased to', async () => {
    const { owner, job, key } = await leased();
    const answer = await put(key, job.jobId, `?agentId=${owner.agentId}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(await rows(job.jobId)).toEqual(['trace.zip']);
  });

  it('refuses another agent of the same location with 409 shape A, and stores nothing', async () => {
    const { other, job, key } = await leased();
    const answer = await put(key, job.jobId, `?agentId=${other.agentId}`);
    expect(answer.status).toBe(409);
    expect(answer.body).toEqual({ statusCode: 409, error: 'Conflict', message: 'The job is not leased to this agent' });
    // An agent id spelled in capitals is the same agent, and still not the one.
    expect((await put(key, job.jobId, `?agentId=${other.agentId.toUpperCase()}`)).status).toBe(409);
    expect(await rows(job.jobId)).toEqual([]);
  });

  it('refuses an agent that never said hello with 409 shape A', async () => {
    const { job, key } = await leased();
    expect((await put(key, job.jobId, `?agentId=${randomUUID()}`)).status).toBe(409);
  });

  it('refuses artifacts once the job is done, even from its own agent', async () => {
    const { owner, job, key } = await leased();
    expect((await owner.report(job)).status).toBe(200);
    const answer = await put(key, job.jobId, `?agentId=${owner.agentId}`);
    expect(answer.status).toBe(409);
    expect(await rows(job.jobId)).toEqual([]);
  });

  it('answers 400 shape B without an agent id, or with one that is not a uuid', async () => {
    const { job, key } = await leased();
    expectErrorB(await put(key, job.jobId, ''), ['agentId']);
    expectErrorB(await put(key, job.jobId, '?agentId=not-a-uuid'), ['agentId']);
  });
});
