import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/agent.js';
import { startAgentProcess, type AgentProcess } from '../support/agent-process.js';
import { startTestService, type TestService } from '../support/service.js';
import { createAndRunToFinal } from '../support/sessions.js';
import { closedPort, respond, startTarget, type Target } from '../support/target.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BUNDLE_CLI = join(ROOT, 'dist/agent-bundle/cli.js');

/**
 * The uptime image starts its agent from the bundle (tools/bundle-agent.ts),
 * not from dist/: the same checks must run through it, on the main thread and
 * on a probe thread, whose entry is a file of the bundle's own.
 */
describe('the bundled uptime agent', () => {
  let service: TestService;
  let target: Target;
  let echo: Server;
  let home: string;
  let location: Awaited<ReturnType<TestService['privateLocation']>>;
  const agents: AgentProcess[] = [];

  beforeAll(async () => {
    target = await startTarget({ '/up': respond(200, 'all good') });
    echo = createServer((socket) => socket.on('data', (data) => socket.end(data)));
    await new Promise<void>((done) => echo.listen(0, '127.0.0.1', done));
    home = await mkdtemp(join(tmpdir(), 'outpost-bundle-'));
    service = await startTestService('pglite');
    location = await service.privateLocation();
  });

  afterAll(async () => {
    for (const agent of agents) await agent.stop(5000);
    await service?.close();
    await target?.close();
    await new Promise((done) => echo?.close(done));
    await rm(home, { recursive: true, force: true });
  });

  function startBundled(env: Record<string, string>): AgentProcess {
    const agent = startAgentProcess({
      cli: BUNDLE_CLI,
      cwd: home,
      env: {
        PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
        HOME: home,
        API_URL: service.url,
        API_KEY: location.rawKey,
        AGENT_HEALTH_PORT: '0',
        LOG_LEVEL: 'INFO',
        ...env,
      },
    });
    agents.push(agent);
    return agent;
  }

  async function ready(agent: AgentProcess): Promise<void> {
    await eventually(async () => ((await agent.health('/-/readiness')) === 200 ? true : undefined), 20_000, 'the agent ready').catch(
      (error: Error) => {
        throw new Error(`${error.message}; it said:\n${agent.tail()}`);
      },
    );
  }

  const run = (type: string, body: Record<string, unknown>) =>
    createAndRunToFinal(service, type, { name: `${type} from the bundle`, privateLocations: [location.slugName], ...body }, 20_000);

  it('says the package version, as the unbundled CLI does', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [BUNDLE_CLI, '--version']);
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(stdout.trim()).toBe(version);
  });

  it('runs URL and TCP monitors in uptime mode, its default', async () => {
    const agent = startBundled({});
    await ready(agent);
    const [running] = (await service.api('GET', `/v1/private-locations/${location.id}`)).body.runningAgents;
    expect(running.mode).toBe('uptime');

    const url = await run('url', { request: { url: `${target.url}/up` } });
    expect(url.session.status, JSON.stringify(url.detail)).toBe('PASSED');
    const port = (echo.address() as AddressInfo).port;
    const tcp = await run('tcp', {
      request: { hostname: '127.0.0.1', port, data: 'hello', assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: 'hello' }] },
    });
    expect(tcp.session.status, JSON.stringify(tcp.detail)).toBe('PASSED');
    const refused = await run('tcp', { request: { hostname: '127.0.0.1', port: await closedPort() } });
    expect(refused.session.status).toBe('FAILED');
    await agent.stop(5000);
  }, 60_000);

  it('runs probes on a thread started from the bundle', async () => {
    const agent = startBundled({ UPTIME_THREADS: '1' });
    await ready(agent);
    const url = await run('url', { request: { url: `${target.url}/up` } });
    // A thread whose entry the bundle lacked would have kept the agent from starting at all.
    expect(url.session.status, JSON.stringify(url.detail)).toBe('PASSED');
    await agent.stop(5000);
  }, 60_000);

  it('refuses the full mode, which it does not carry, naming AGENT_MODE', async () => {
    const agent = startBundled({ AGENT_MODE: 'full' });
    await eventually(async () => (agent.hasExited() ? true : undefined), 10_000, 'the agent to exit');
    expect(agent.tail()).toMatch(/AGENT_MODE is invalid: .*"full".*uptime/);
  }, 20_000);
});
