/**
 * A job that no live agent of its location can run (its check type, its
 * runtime, or a script lane they lack) fails at once with a message naming
 * what it needed, instead of waiting out the unclaimed expiry. Where no agent
 * is live at all, the job keeps waiting: one may be starting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getSession, ManualAgent, triggerCheck } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';
import { FINAL_STATUSES } from '../support/sessions.js';

const SCRIPT = "import { test } from '@playwright/test';\ntest('ok', async () => {});\n";

describe.each(DB_KINDS)('jobs no agent can run (%s)', (kind) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService(kind, { tickMs: 100 });
  });
  afterAll(() => service?.close());

  /** Past the grace a fresh job gets, as if it had been waiting a while. */
  const age = (sessionId: string) =>
    service.service.db.query(`UPDATE jobs SET created_at = now() - interval '1 minute' WHERE session_id = $1`, [sessionId]);

  async function runOnce(check: { id: string }) {
    const session = await triggerCheck(service, check.id);
    await age(session.checkSessionId);
    return session.checkSessionId as string;
  }

  const finalSession = (sessionId: string) =>
    eventually(async () => {
      const session = await getSession(service, sessionId);
      return FINAL_STATUSES.has(session.status) ? session : undefined;
    }, 5000, 'the session to end');

  const multiStep = async (slug: string, runtimeId: string) => {
    const created = await service.api('POST', '/v1/checks/multistep', {
      name: `journey on ${runtimeId}`, activated: false, doubleCheck: false, runtimeId, privateLocations: [slug], script: SCRIPT,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  };

  it('fails a job on a runtime the live agents do not offer, naming the runtime and what they offer', async () => {
    const location = await service.privateLocation();
    const agent = await new ManualAgent(service, location.rawKey).connect({ checkTypes: ['URL', 'MULTI_STEP'], runtimes: ['2026.04'] });
    const sessionId = await runOnce(await multiStep(location.slugName, '2025.04'));
    const session = await finalSession(sessionId);
    expect(session.status).toBe('FAILED');
    const detail = (await service.api('GET', new URL(session.results[0].checkResultLink).pathname)).body;
    expect(detail.error).toEqual({
      code: 'NO_CAPABLE_AGENT',
      message: `No agent at private location "${location.slugName}" runs MULTI_STEP checks on runtime 2025.04; its agents offer runtimes: 2026.04`,
    });
    // Nothing is left for the agent to claim.
    expect((await agent.claim(0, 5)).body.jobs).toEqual([]);
  });

  it('fails a script job at a location whose agents run the uptime lane only', async () => {
    const location = await service.privateLocation();
    await new ManualAgent(service, location.rawKey).connect({ mode: 'uptime', checkTypes: ['URL', 'API'], capacity: { uptime: 10, script: 0 } });
    const created = await service.api('POST', '/v1/checks/api', {
      name: 'scripted API', activated: false, doubleCheck: false, privateLocations: [location.slugName],
      request: { url: 'http://127.0.0.1:9/' }, setupScript: "request.headers['x-a'] = '1';",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const session = await finalSession(await runOnce(created.body));
    expect(session.status).toBe('FAILED');
    const detail = (await service.api('GET', new URL(session.results[0].checkResultLink).pathname)).body;
    expect(detail.error.code).toBe('NO_CAPABLE_AGENT');
    expect(detail.error.message).toMatch(/runs API checks on runtime \S+; its agents offer runtimes: none$/);
  });

  it('leaves a job waiting where no agent is live, and hands it to an agent that can run it', async () => {
    const empty = await service.privateLocation();
    const waiting = await runOnce(await multiStep(empty.slugName, '2025.04'));
    const able = await service.privateLocation();
    const agent = await new ManualAgent(service, able.rawKey).connect({ checkTypes: ['MULTI_STEP'], runtimes: ['2025.04'] });
    const runnable = await runOnce(await multiStep(able.slugName, '2025.04'));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(FINAL_STATUSES.has((await getSession(service, waiting)).status)).toBe(false);
    const job = await agent.claimOne();
    expect(job.checkSessionId).toBe(runnable);
  });
});
