import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentMetrics } from '../../src/agent/metrics.js';
import { Reporter } from '../../src/agent/reporter.js';
import { createOutageLog } from '../../src/outage-log.js';
import { ServiceClient } from '../../src/agent/service-client.js';
import { Secret } from '../../src/config/secret.js';
import type { Result } from '../../src/protocol/agent-api.js';
import { captureLogger } from '../support/logs.js';

const result: Result = {
  agentId: '7b0a3c5e-1111-4222-8333-444455556666',
  jobId: '7b0a3c5e-aaaa-4bbb-8ccc-ddddeeeeffff',
  checkId: 'c',
  checkType: 'URL',
  runLocation: 'office',
  startedAt: new Date().toISOString(),
  stoppedAt: new Date().toISOString(),
  responseTime: 12,
  hasErrors: false,
  hasFailures: false,
  isDegraded: false,
  aborted: false,
  isCancelled: false,
  error: null,
  timings: null,
  statusCode: 200,
  assertions: [],
  details: {},
  logs: [],
  artifacts: [],
};

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/**
 * A loopback service whose answers to result batches the test scripts, one
 * step per call: an HTTP status, or 200 with this outcome for every result.
 */
async function scriptedService(steps: (number | string)[]): Promise<{ url: string; bodies: { results: Result[] }[] }> {
  const bodies: { results: Result[] }[] = [];
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const parsed = JSON.parse(body) as { results: Result[] };
      bodies.push(parsed);
      const step = steps.shift() ?? 'recorded';
      const status = typeof step === 'number' ? step : 200;
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(
        status === 200
          ? JSON.stringify({ outcomes: parsed.results.map((r) => ({ jobId: r.jobId, outcome: step, message: 'scripted' })) })
          : JSON.stringify({ statusCode: status, error: 'x', message: 'scripted' }),
      );
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

function reporterFor(url: string) {
  const { logger, logs } = captureLogger('reporter');
  const client = new ServiceClient(url, new Secret('pl_test'));
  return { reporter: new Reporter(client, logger, new AgentMetrics(), createOutageLog({ logger, subject: 'the service' })), logs, client };
}

describe('reporter', () => {
  it('retries through server errors until the service records the result', async () => {
    const service = await scriptedService([503, 502, 'recorded']);
    const { reporter, logs, client } = reporterFor(service.url);
    await reporter.report(result);
    await client.close();
    expect(service.bodies).toHaveLength(3);
    expect(service.bodies.every((body) => JSON.stringify(body.results) === JSON.stringify([result]))).toBe(true);
    // One line when the outage starts, one when it ends: not a line per retry.
    const lines = logs.join('');
    expect(lines).toContain('the service is unreachable: posting results failed');
    expect(lines).toContain('the service is reachable again');
    expect(lines.match(/is unreachable/g)).toHaveLength(1);
  });

  it('does not retry a result the service answered as another agent\'s', async () => {
    const service = await scriptedService(['conflict']);
    const { reporter, logs, client } = reporterFor(service.url);
    await reporter.report(result);
    await client.close();
    expect(service.bodies).toHaveLength(1);
    expect(logs.join('')).toContain('result not recorded: scripted');
  });

  it('sends results reported together in batches of at most 100', async () => {
    const service = await scriptedService([]);
    const { reporter, client } = reporterFor(service.url);
    const many = Array.from({ length: 250 }, (_, index) => ({ ...result, jobId: `job-${index}` }));
    await Promise.all(many.map((one) => reporter.report(one)));
    await client.close();
    expect(service.bodies.map((body) => body.results.length)).toEqual([100, 100, 50]);
    expect(service.bodies.flatMap((body) => body.results.map((r) => r.jobId))).toEqual(many.map((one) => one.jobId));
  });

  it('gives up at once on a 400: the same body will never be accepted', async () => {
    const service = await scriptedService([400]);
    const { reporter, client } = reporterFor(service.url);
    await reporter.report(result);
    await client.close();
    expect(service.bodies).toHaveLength(1);
  });

  it('ends a flush on time when the service holds the call open', async () => {
    const hung = createServer(() => undefined);
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const { reporter, client } = reporterFor(`http://127.0.0.1:${(hung.address() as AddressInfo).port}`);
    const delivery = reporter.report(result);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await reporter.flush(300);
    await delivery;
    expect(Date.now() - started).toBeLessThan(2000);
    await client.close();
    hung.closeAllConnections();
    await new Promise((resolve) => hung.close(resolve));
  });

  it('stops retrying when flushed at shutdown', async () => {
    const service = await scriptedService(Array.from({ length: 100 }, () => 503));
    const { reporter, client } = reporterFor(service.url);
    const delivery = reporter.report(result);
    const started = Date.now();
    await reporter.flush(300);
    await delivery;
    await client.close();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(service.bodies.length).toBeGreaterThanOrEqual(1);
  });
});
