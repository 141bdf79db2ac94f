import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { JobSupervisor } from '../../src/agent/job-supervisor.js';
import { LeaseKeeper } from '../../src/agent/lease-keeper.js';
import { Readiness } from '../../src/agent/readiness.js';
import { ServiceClient } from '../../src/agent/service-client.js';
import { Secret } from '../../src/config/secret.js';
import { createOutageLog } from '../../src/outage-log.js';
import { urlJob } from '../support/jobs.js';
import { captureLogger } from '../support/logs.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A loopback service answering heartbeats as scripted: an HTTP status, or 200 naming these jobs lost. */
async function heartbeatService(steps: (number | string[])[]) {
  const bodies: { running: string[]; waiting: string[] }[] = [];
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      bodies.push(JSON.parse(body) as { running: string[]; waiting: string[] });
      const step = steps.shift() ?? [];
      response.writeHead(typeof step === 'number' ? step : 200, { 'content-type': 'application/json' });
      response.end(
        typeof step === 'number'
          ? JSON.stringify({ statusCode: step, error: 'x', message: 'scripted' })
          : JSON.stringify({ leaseExpiresAt: new Date().toISOString(), lost: step }),
      );
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

describe('lease keeper', () => {
  it('names running and waiting jobs, drops what the service took back, and sees the service come back', async () => {
    const [running, waiting] = [urlJob(), urlJob()];
    const service = await heartbeatService([503, [waiting.jobId]]);
    const supervisor = new JobSupervisor();
    supervisor.claimed([running, waiting]);
    supervisor.start(running.jobId);
    const readiness = new Readiness();
    readiness.set('ready', 'serving');
    const { logger, logs } = captureLogger('lease-keeper');
    const lost: string[][] = [];
    const client = new ServiceClient(service.url, new Secret('pl_test'));
    const keeper = new LeaseKeeper({
      client,
      agentId: randomUUID(),
      supervisor,
      leaseMs: () => 30_000,
      outage: createOutageLog({ logger, subject: 'the service' }),
      readiness,
      onLost: (ids) => {
        lost.push(ids);
        supervisor.lost(ids);
      },
    });

    await keeper.beat();
    expect(service.bodies[0]).toMatchObject({ running: [running.jobId], waiting: [waiting.jobId] });
    expect(readiness.state).toBe('service-unreachable');
    // A busy agent claims nothing for a while: the heartbeat alone sees the service back.
    await keeper.beat();
    expect(readiness.state).toBe('ready');
    expect(lost).toEqual([[waiting.jobId]]);
    expect(supervisor.ids()).toEqual({ started: [running.jobId], waiting: [] });
    expect(logs.join('')).toContain('the service is reachable again');
    await client.close();
  });
});
