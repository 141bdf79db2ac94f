import { expect } from 'vitest';
import { eventually } from './agent.js';
import type { TestService } from './service.js';

export const FINAL_STATUSES = new Set(['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED']);

/** Triggers one run of a check through the API and waits for its session to end; answers it and its first result's detail. */
export async function runToFinal(service: TestService, checkId: string, ms: number): Promise<{ session: any; detail: any }> {
  const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [checkId] } });
  expect(triggered.status).toBe(201);
  const sessionId = triggered.body.sessions[0].checkSessionId;
  const session = await eventually(async () => {
    const read = await service.api('GET', `/v1/check-sessions/${sessionId}`);
    return FINAL_STATUSES.has(read.body.status) ? read.body : undefined;
  }, ms, 'a final session');
  const detail = await service.api('GET', new URL(session.results[0].checkResultLink).pathname);
  expect(detail.status).toBe(200);
  return { session, detail: detail.body };
}

/** Creates a check, not activated (so only the trigger runs it), and runs it once to the end as runToFinal does. */
export async function createAndRunToFinal(
  service: TestService,
  type: string,
  check: Record<string, unknown>,
  ms: number,
): Promise<{ session: any; detail: any }> {
  const created = await service.api('POST', `/v1/checks/${type}`, { activated: false, ...check });
  expect(created.status).toBe(201);
  return runToFinal(service, created.body.id as string, ms);
}
