import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startTestAgent } from '../support/agent.js';
import { startTestService } from '../support/service.js';
import { startTarget } from '../support/target.js';

const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('uptime prefetch', () => {
  it('claims a backlog beyond its running slots, yet never runs more probes at once than UPTIME_CONCURRENCY', async () => {
    let inFlight = 0;
    let mostInFlight = 0;
    const slow = (_request: IncomingMessage, response: ServerResponse) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      }, 600);
    };
    const target = await startTarget({ '/slow': slow });
    cleanup.push(() => target.close());
    const service = await startTestService('pglite');
    cleanup.push(() => service.close());
    const location = await service.privateLocation();
    const agent = await startTestAgent({
      apiKey: location.rawKey,
      apiUrl: service.url,
      uptimeConcurrency: 2,
      uptimePrefetch: 2,
    });
    cleanup.push(() => agent.stop());
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 10_000);

    const ids: string[] = [];
    for (let index = 0; index < 6; index += 1) {
      const created = await service.api('POST', '/v1/checks/url', {
        name: `slow ${index}`,
        activated: false,
        privateLocations: [location.slugName],
        request: { url: `${target.url}/slow` },
      });
      ids.push(created.body.id);
    }
    const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: ids } });
    const sessions: string[] = triggered.body.sessions.map((session: { checkSessionId: string }) => session.checkSessionId);

    const leased = async () =>
      (
        await service.service.db.query<{ count: number }>(
          "SELECT count(*)::int AS count FROM jobs WHERE state = 'leased' AND session_id = ANY($1::uuid[])",
          [sessions],
        )
      )[0]!.count;
    // Two running and two waiting in the agent's queue: four leased while the first two run.
    await eventually(async () => ((await leased()) === 4 ? true : undefined), 10_000, 'a backlog of two claimed');
    expect(target.hits.get('/slow') ?? 0).toBeLessThanOrEqual(2);

    for (const sessionId of sessions) {
      await eventually(async () => {
        const session = await service.api('GET', `/v1/check-sessions/${sessionId}`);
        return session.body.status === 'PASSED' ? true : undefined;
      }, 20_000, `session ${sessionId} passed`);
    }
    expect(target.hits.get('/slow')).toBe(6);
    expect(mostInFlight).toBe(2);
  }, 40_000);
});
