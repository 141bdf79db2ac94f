import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessProbes } from '../../src/agent/in-process-probes.js';
import { ProbeThreads } from '../../src/agent/probe-threads/probe-threads.js';
import { createUptimeRunner } from '../../src/agent/uptime-runner.js';
import type { Job } from '../../src/protocol/agent-api.js';

const AGENT_ID = '00000000-0000-4000-8000-000000000001';
const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function server(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const site: Server = createServer(handler);
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    site.closeAllConnections();
    return new Promise((resolve) => site.close(resolve));
  });
  return `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
}

function urlJob(url: string, jobId = 'job-1'): Job {
  return {
    jobId,
    checkSessionId: '00000000-0000-4000-8000-00000000000a',
    checkId: '00000000-0000-4000-8000-00000000000c',
    checkType: 'URL',
    name: 'threaded',
    runLocation: 'lab',
    runSource: 'TEST_NO_RECORD',
    attempt: 1,
    leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    timeoutSeconds: 10,
    runtimeId: null,
    environmentVariables: [],
    settings: { request: { url } },
  };
}

async function threads(count: number, entry?: URL): Promise<{ pool: ProbeThreads; lost: Error[] }> {
  const lost: Error[] = [];
  const pool = new ProbeThreads(count, { agentId: AGENT_ID, probes: { useOsDnsResolver: false } }, (error) => lost.push(error), entry);
  cleanup.push(() => pool.close());
  await pool.start();
  return { pool, lost };
}

describe('probe threads', () => {
  it('run uptime jobs on worker threads and answer with the full result', async () => {
    const origin = await server((_request, response) => response.writeHead(204).end());
    const { pool } = await threads(2);
    expect(pool.checkTypes()).toEqual(expect.arrayContaining(['URL', 'TCP', 'DNS', 'ICMP']));
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, index) => pool.run(urlJob(`${origin}/${index}`, `job-${index}`), new AbortController().signal)),
    );
    for (const [index, result] of results.entries()) {
      expect(result).toMatchObject({ agentId: AGENT_ID, jobId: `job-${index}`, statusCode: 204, hasErrors: false, hasFailures: false });
      expect(result.timings?.tcp).toBeGreaterThan(0);
    }
  });

  it('stop a running probe when its job is cancelled', async () => {
    const origin = await server(() => undefined); // never answers
    const { pool } = await threads(1);
    const abort = new AbortController();
    const running = pool.run(urlJob(`${origin}/hang`), abort.signal);
    setTimeout(() => abort.abort(), 300);
    const started = Date.now();
    const result = await running;
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.aborted).toBe(true);
    expect(result.error?.code).toBe('CANCELLED');
  });

  it('answer the jobs of a thread that died with an error, and start a new thread in its place', async () => {
    const { pool, lost } = await threads(1, new URL('../fixtures/probe-threads/dies-on-run.mjs', import.meta.url));
    const result = await pool.run(urlJob('http://127.0.0.1:9/'), new AbortController().signal);
    expect(result.hasErrors).toBe(true);
    expect(result.error?.code).toBe('PROBE_THREAD_FAILED');
    expect(result.error?.message).toContain('probe thread fell over');
    expect(lost).toHaveLength(1);
    // The new thread takes the next job (and dies on it the same way).
    const next = await pool.run(urlJob('http://127.0.0.1:9/', 'job-2'), new AbortController().signal);
    expect(next.error?.code).toBe('PROBE_THREAD_FAILED');
    expect(lost).toHaveLength(2);
  });

  it('report a thread that cannot load, instead of starting it again and again', async () => {
    const lost: Error[] = [];
    const pool = new ProbeThreads(
      1,
      { agentId: AGENT_ID, probes: { useOsDnsResolver: false } },
      (error) => lost.push(error),
      new URL('../fixtures/probe-threads/fails-to-load.mjs', import.meta.url),
    );
    cleanup.push(() => pool.close());
    await expect(pool.start()).rejects.toThrow(/cannot load the probes/);
    expect(lost).toHaveLength(0);
  });

  it('run on the main thread instead with UPTIME_THREADS=0, with the same results', async () => {
    const origin = await server((_request, response) => response.writeHead(204).end());
    const data = { agentId: AGENT_ID, probes: { useOsDnsResolver: false } };
    const inline = await createUptimeRunner(0, data, () => undefined);
    const threaded = await createUptimeRunner(1, data, () => undefined);
    cleanup.push(() => inline.close(), () => threaded.close());
    expect(inline).toBeInstanceOf(InProcessProbes);
    expect(threaded).toBeInstanceOf(ProbeThreads);
    await Promise.all([inline.start(), threaded.start()]);
    expect(inline.checkTypes()).toEqual(threaded.checkTypes());
    const result = await inline.run(urlJob(`${origin}/`), new AbortController().signal);
    expect(result).toMatchObject({ agentId: AGENT_ID, jobId: 'job-1', statusCode: 204, hasErrors: false });
  });
});
