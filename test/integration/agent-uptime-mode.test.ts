import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startTestAgent } from '../support/agent.js';
import { startTestService } from '../support/service.js';
import { closedPort, startTarget } from '../support/target.js';

const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const SCRIPT = "const { test } = require('@playwright/test');\ntest('t', async () => {});\n";

/** A target answering /ok, a service, its location, and an uptime agent for it that is ready. */
async function readyUptimeAgent(redisUrl?: string) {
  const target = await startTarget({ '/ok': (_request, response) => response.writeHead(200).end('ok') });
  cleanup.push(() => target.close());
  const service = await startTestService('pglite');
  cleanup.push(() => service.close());
  const location = await service.privateLocation();
  const agent = await startTestAgent({ apiKey: location.rawKey, apiUrl: service.url, mode: 'uptime', redisUrl });
  cleanup.push(() => agent.stop());
  await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 10_000, 'ready');
  return { target, service, location, agent };
}

describe('the agent in uptime mode (the uptime image)', () => {
  it('says hello as an uptime agent with only URL, TCP, DNS, ICMP and API (without scripts), runs those, and is never handed a script check', async () => {
    const { target, service, location, agent } = await readyUptimeAgent();

    const [running] = (await service.api('GET', `/v1/private-locations/${location.id}`)).body.runningAgents;
    expect(running).toMatchObject({ mode: 'uptime' });
    const [hello] = await service.service.db.query<{ check_types: string[]; runtimes: string[] }>(
      'SELECT check_types, runtimes FROM agents WHERE private_location_id = $1',
      [location.id],
    );
    expect([...hello!.check_types].sort()).toEqual(['API', 'DNS', 'ICMP', 'TCP', 'URL']);
    expect(hello!.runtimes).toEqual([]);
    // The script side is never set up: no runtime is even looked for.
    expect(agent.logs.some((line) => line.includes('runtime'))).toBe(false);
    // Uptime jobs wait in memory, so nothing needs Redis: none is started.
    expect(agent.logs.some((line) => line.includes('redis-server'))).toBe(false);
    expect(redisServersOfThisProcess()).toEqual([]);

    const url = await service.api('POST', '/v1/checks/url', {
      name: 'up',
      activated: false,
      privateLocations: [location.slugName],
      request: { url: `${target.url}/ok` },
    });
    const script = await service.api('POST', '/v1/checks/multistep', {
      name: 'script',
      script: SCRIPT,
      activated: false,
      privateLocations: [location.slugName],
    });
    const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [url.body.id, script.body.id] } });
    const byCheck = new Map<string, string>(
      triggered.body.sessions.map((session: { checkId: string; checkSessionId: string }) => [session.checkId, session.checkSessionId]),
    );
    await eventually(async () => {
      const session = await service.api('GET', `/v1/check-sessions/${byCheck.get(url.body.id)}`);
      return session.body.status === 'PASSED' ? true : undefined;
    }, 10_000, 'the URL check passed');
    // The script job is still queued: no one claimed it.
    const [job] = await service.service.db.query<{ state: string; claimed_by: string[] }>(
      'SELECT state, claimed_by FROM jobs WHERE session_id = $1',
      [byCheck.get(script.body.id)],
    );
    expect(job).toEqual({ state: 'queued', claimed_by: [] });
  });

  it('needs no Redis: REDIS_URL unreachable, it is ready and runs checks, and says the URL is not used', async () => {
    const { target, service, location, agent } = await readyUptimeAgent(`redis://127.0.0.1:${await closedPort()}`);
    expect(agent.logs.some((line) => line.includes('REDIS_URL is not used'))).toBe(true);

    const url = await service.api('POST', '/v1/checks/url', {
      name: 'up without Redis',
      activated: false,
      privateLocations: [location.slugName],
      request: { url: `${target.url}/ok` },
    });
    const triggered = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [url.body.id] } });
    const sessionId = triggered.body.sessions[0].checkSessionId as string;
    await eventually(async () => {
      const session = await service.api('GET', `/v1/check-sessions/${sessionId}`);
      return session.body.status === 'PASSED' ? true : undefined;
    }, 10_000, 'the URL check passed');
    expect(agent.logs.some((line) => /not reachable|ECONNREFUSED/.test(line))).toBe(false);
  });
});

/** redis-server processes started by this test process (an embedded one would be its child). */
function redisServersOfThisProcess(): string[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid), 'redis-server'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    // pgrep exits 1 when nothing matches.
    return [];
  }
}
