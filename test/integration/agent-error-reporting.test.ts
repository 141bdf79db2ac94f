import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../../src/agent/agent.js';
import {
  defaultHousekeepingConfig,
  defaultSandboxConfig,
  serviceErrorDsn,
  type AgentConfig,
  type ErrorReportingConfig,
} from '../../src/agent/config.js';
import { createAgentLogging } from '../../src/agent/error-reporting/agent-logging.js';
import { Secret } from '../../src/config/secret.js';
import { eventually } from '../support/agent.js';
import { expectErrorA, expectErrorB, sendText } from '../support/agent-protocol.js';
import { lineCollector } from '../support/logs.js';
import { startRedisServer } from '../support/redis-server.js';
import { startSentryReceiver } from '../support/sentry-receiver.js';
import { startTestService } from '../support/service.js';
import { closedPort } from '../support/target.js';

const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const KEY = `pl_${'k3y'.repeat(12)}`;
const SERVICE_SECRET = 'service-secret-value-7f3a';
const EVENT_KEYS = ['contexts', 'event_id', 'exception', 'level', 'message', 'platform', 'release', 'sdk', 'timestamp'];

/**
 * An agent whose Redis is down: it logs an error-level line at once and keeps
 * trying. Resolves once a redis-server is started on that port, so the test
 * can stop it.
 */
async function agentWithRedisDown(errorReporting: ErrorReportingConfig | undefined, apiUrl: string, apiKey = KEY) {
  const redisPort = await closedPort();
  const config: AgentConfig = {
    apiKey: new Secret(apiKey),
    apiUrl,
    redisUrl: `redis://127.0.0.1:${redisPort}`,
    jobConcurrency: 1,
    uptimeConcurrency: 5,
    uptimePrefetch: 5,
    uptimeThreads: 0,
    uptimeQueue: 'redis',
    mode: 'uptime',
    healthPort: 0,
    logLevel: 'INFO',
    shutdownGraceMs: 1000,
    useOsDnsResolver: false,
    errorReporting,
    housekeeping: defaultHousekeepingConfig(),
    sandbox: defaultSandboxConfig(),
  };
  const env = { SERVICE_SECRET_TOKEN: SERVICE_SECRET, HOME: '/home/customer-name' };
  const { destination, lines } = lineCollector();
  const logging = createAgentLogging(config, env, { destination });
  const starting = startAgent(config, { logger: logging.logger, errorReporter: logging.errors, env, healthHost: '127.0.0.1' });
  await eventually(() => (lines.some((line) => line.includes('is not reachable')) ? true : undefined), 10_000, 'the Redis error line');
  return {
    lines,
    redisPort,
    /** Lets the agent start (Redis comes up), then stops it: the reporter is flushed and closed. */
    async stop() {
      const redis = await startRedisServer(redisPort);
      const agent: RunningAgent = await starting;
      await agent.stop();
      await redis.stop();
    },
  };
}

describe('error reporting to a DSN the operator set', () => {
  it('sends error-level events with the message, stack, version, platform and runtime only', async () => {
    const receiver = await startSentryReceiver();
    cleanup.push(() => receiver.close());
    const agent = await agentWithRedisDown({ dsn: receiver.dsn, sendsKey: false }, 'http://127.0.0.1:9');
    await eventually(() => (receiver.events().length > 0 ? true : undefined), 10_000, 'an event at the receiver');
    await agent.stop();

    const [event] = receiver.events();
    expect(Object.keys(event).sort()).toEqual(EVENT_KEYS.filter((key) => key !== 'exception'));
    expect(event).toMatchObject({
      level: 'error',
      platform: 'node',
      release: '0.1.0',
      message: expect.stringMatching(/^Redis at <address> is not reachable \(ECONNREFUSED\); retrying$/),
      contexts: {
        os: { name: process.platform },
        device: { arch: process.arch },
        runtime: { name: 'node', version: process.version },
      },
    });
    expect(Object.keys(event.contexts).sort()).toEqual(['device', 'os', 'runtime']);
    for (const envelope of receiver.envelopes) {
      // The key goes to the service's own receiver only, never to a DSN set by the operator.
      expect(envelope.headers.authorization).toBeUndefined();
      for (const forbidden of [KEY, SERVICE_SECRET, String(agent.redisPort), hostname(), '/home/customer-name', 'http://127.0.0.1:9']) {
        expect(envelope.raw).not.toContain(forbidden);
      }
    }
  });

  it('sends nothing when EXTERNAL_OBSERVABILITY is off', async () => {
    const receiver = await startSentryReceiver();
    cleanup.push(() => receiver.close());
    const agent = await agentWithRedisDown(undefined, 'http://127.0.0.1:9');
    // The same error line as above, and time for an event to have left.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await agent.stop();
    expect(receiver.envelopes).toEqual([]);
  });
});

describe("error reporting to the monitoring service's own receiver (the default)", () => {
  it('is authenticated with the agent key and listed on the private location, with only the allowed fields', async () => {
    const service = await startTestService('pglite');
    cleanup.push(() => service.close());
    const location = await service.privateLocation();
    const agent = await agentWithRedisDown({ dsn: serviceErrorDsn(service.url), sendsKey: true }, service.url, location.rawKey);
    const [stored] = await eventually(async () => {
      const answer = await service.api('GET', `/v1/private-locations/${location.id}/error-events`);
      return answer.body.length > 0 ? answer.body : undefined;
    }, 10_000, 'the event at the service');
    await agent.stop();
    expect(stored).toEqual({
      id: expect.any(String),
      eventId: expect.stringMatching(/^[0-9a-f]{32}$/),
      occurredAt: expect.any(String),
      receivedAt: expect.any(String),
      release: '0.1.0',
      platform: `${process.platform}/${process.arch}`,
      runtime: `node ${process.version}`,
      message: 'Redis at <address> is not reachable (ECONNREFUSED); retrying',
      exceptions: [],
    });
  });

  it('keeps exceptions with their frames, takes gzip, and refuses envelopes it cannot read', async () => {
    const service = await startTestService('pglite');
    cleanup.push(() => service.close());
    const location = await service.privateLocation();
    const path = '/v1/agent/error-events/api/1/envelope/';
    const auth = { authorization: `Bearer ${location.rawKey}` };
    const event = {
      event_id: 'a'.repeat(32),
      timestamp: Date.now() / 1000,
      level: 'error',
      release: '0.1.0',
      server_name: 'not-kept',
      extra: { notKept: true },
      exception: {
        values: [{ type: 'TypeError', value: 'x is undefined', stacktrace: { frames: [{ filename: 'dist/agent/agent.js', function: 'run', lineno: 3, colno: 9, vars: { notKept: 1 } }] } }],
      },
    };
    const envelope = `${JSON.stringify({ event_id: event.event_id })}\n${JSON.stringify({ type: 'event' })}\n${JSON.stringify(event)}\n`;
    const response = await fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-encoding': 'gzip' },
      body: gzipSync(envelope),
    });
    expect(response.status).toBe(200);
    const listed = await service.api('GET', `/v1/private-locations/${location.id}/error-events`);
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0]).toMatchObject({
      message: null,
      exceptions: [{ type: 'TypeError', value: 'x is undefined', frames: [{ filename: 'dist/agent/agent.js', function: 'run', lineno: 3, colno: 9 }] }],
    });
    expect(JSON.stringify(listed.body)).not.toContain('notKept');

    // The same event again (a retry after a lost answer) is stored once.
    expect((await sendText(service, 'POST', path, envelope, auth)).status).toBe(200);
    expect((await service.api('GET', `/v1/private-locations/${location.id}/error-events`)).body).toHaveLength(1);

    expectErrorB(await sendText(service, 'POST', path, '{}\n{"type":"event"}\nnot json\n', auth), ['body']);
    expectErrorA(await sendText(service, 'POST', path, envelope, {}), 401, 'Unauthorized');
    const tooLarge = await sendText(service, 'POST', path, `{}\n${'x'.repeat(1024 * 1024 + 1)}`, auth);
    expectErrorA(tooLarge, 413, 'Payload Too Large');
  });
});

describe('a crash', () => {
  it('is logged and reported before the agent exits 1', async () => {
    const receiver = await startSentryReceiver();
    cleanup.push(() => receiver.close());
    const child = spawn(process.execPath, ['test/fixtures/crash/crashing-agent.mjs'], {
      env: { PATH: process.env.PATH, API_KEY: KEY, API_URL: 'http://127.0.0.1:9', SENTRY_DSN: receiver.dsn },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(output).toContain('the agent crashed: boom while reaching http://10.0.0.1/x');
    const [event] = receiver.events();
    expect(event.exception.values[0]).toMatchObject({ type: 'Error', value: 'boom while reaching <url>' });
    expect(event.exception.values[0].stacktrace.frames.at(-1)).toMatchObject({ filename: 'test/fixtures/crash/crashing-agent.mjs', function: expect.stringContaining('crashLater') });
  });
});
