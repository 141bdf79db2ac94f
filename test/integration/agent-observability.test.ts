/**
 * What an operator sees of a working agent: its log lines (each job's carrying
 * the job's ids, none carrying a secret, key or script), its /metrics (read by
 * Prometheus's own promtool), and its scheduled state summary.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { runToFinal } from '../support/sessions.js';
import { startTestService, type TestService } from '../support/service.js';
import { startTarget, type Target } from '../support/target.js';

const CHECK_SECRET = 'check-secret-4471-value';
const SERVICE_SECRET = 'operator-secret-9921-value';
const SCRIPT_MARKER = 'script-body-marker-5120';
const SCRIPT = `
import { test, expect } from '@playwright/test';
// ${SCRIPT_MARKER}
test('uses its secrets', async () => {
  console.log('secret is', process.env.PASSWORD, process.env.SERVICE_SECRET_DB);
  expect(process.env.PASSWORD).toBe(${JSON.stringify(CHECK_SECRET)});
});
`;

/** Each metric family the issue names, with the labels it must carry. */
const FAMILIES: Record<string, string[]> = {
  outpost_jobs_claimed_total: ['lane', 'check_type'],
  outpost_jobs_started_total: ['check_type'],
  outpost_jobs_finished_total: ['check_type', 'status'],
  outpost_job_duration_seconds_bucket: ['check_type', 'le'],
  outpost_queue_depth: ['lane'],
  outpost_jobs_in_flight: ['lane'],
  outpost_capacity: ['lane'],
  outpost_free_capacity: ['lane'],
  outpost_sandbox_pool_size: [],
  outpost_artifact_bytes_total: [],
  outpost_service_reachable: [],
  outpost_build_info: ['version', 'node'],
};
/** Families with labels that have no series until something happens; their HELP and TYPE are still there. */
const DECLARED = ['outpost_poll_errors_total', 'outpost_artifact_failures_total', 'outpost_result_post_failures_total'];

describe('the agent as an operator sees it', () => {
  let service: TestService;
  let target: Target;
  let agent: TestAgent;
  let location: Awaited<ReturnType<TestService['privateLocation']>>;
  let sandboxDirectory: string;
  const sessions: string[] = [];

  beforeAll(async () => {
    target = await startTarget({
      '/ok': (_request, response) => response.writeHead(200).end('ok'),
      '/broken': (_request, response) => response.writeHead(500).end('broken'),
    });
    service = await startTestService('pglite');
    location = await service.privateLocation();
    sandboxDirectory = await mkdtemp(join(tmpdir(), 'outpost-observability-'));
    // What an agent killed mid-job three hours ago left behind.
    await mkdir(join(sandboxDirectory, 'job-left-behind', 'node_modules'), { recursive: true });
    const longAgo = new Date(Date.now() - 3 * 3_600_000);
    await utimes(join(sandboxDirectory, 'job-left-behind'), longAgo, longAgo);
    agent = await startTestAgent(
      {
        apiKey: location.rawKey,
        apiUrl: service.url,
        sandbox: { ...defaultSandboxConfig(), directory: sandboxDirectory },
        // Every second: the test sees the scheduled summary without waiting minutes.
        housekeeping: { schedule: '0 0 1 1 *', dependencyCacheMaxAgeMs: 0, summarySchedule: '* * * * * *' },
      },
      { SERVICE_SECRET_DB: SERVICE_SECRET },
    );
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'readiness');

    await service.api('POST', '/v1/variables', { key: 'PASSWORD', value: CHECK_SECRET, secret: true });
    const checks = [
      await service.api('POST', '/v1/checks/url', {
        name: 'up',
        activated: false,
        privateLocations: [location.slugName],
        request: { url: `${target.url}/ok` },
      }),
      await service.api('POST', '/v1/checks/url', {
        name: 'down',
        activated: false,
        privateLocations: [location.slugName],
        request: { url: `${target.url}/broken` },
      }),
      await service.api('POST', '/v1/checks/multistep', {
        name: 'script',
        activated: false,
        runtimeId: '2026.04',
        privateLocations: [location.slugName],
        script: SCRIPT,
      }),
    ];
    for (const check of checks) expect(check.status).toBe(201);
    for (const check of checks) {
      const { session } = await runToFinal(service, check.body.id, 120_000);
      sessions.push(session.checkSessionId);
    }
  }, 180_000);

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await target?.close();
    await rm(sandboxDirectory, { recursive: true, force: true });
  });

  it('cleared at start what a killed agent had left in the sandbox directory', async () => {
    expect(await readdir(sandboxDirectory)).not.toContain('job-left-behind');
    const line = agent.logs.map((text) => JSON.parse(text)).find((entry) => entry.msg === 'removed stale files');
    expect(line).toMatchObject({ task: 'housekeeping', sandboxes: 1 });
  });

  it("tags every line about a job with the job's, check's and session's ids", () => {
    const lines = agent.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
    const jobLines = lines.filter((line) => 'jobId' in line);
    expect(jobLines.length).toBeGreaterThanOrEqual(sessions.length * 2);
    for (const line of jobLines) {
      expect(line).toMatchObject({ jobId: expect.any(String), checkId: expect.any(String), checkSessionId: expect.any(String) });
    }
    const loggedSessions = new Set(jobLines.map((line) => line.checkSessionId));
    for (const session of sessions) expect(loggedSessions).toContain(session);
  });

  it('never logs a secret, the key or a script, even at DEBUG', () => {
    const text = agent.logs.join('');
    expect(agent.logs.some((line) => line.includes('"level":20'))).toBe(true);
    for (const leaked of [CHECK_SECRET, SERVICE_SECRET, location.rawKey, SCRIPT_MARKER]) expect(text).not.toContain(leaked);
  });

  it('serves /metrics that promtool accepts, with every family an operator needs', async () => {
    const metrics = await agent.health('/metrics');
    expect(metrics.status).toBe(200);
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: metrics.text, encoding: 'utf8' });
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.status).toBe(0);

    for (const [family, labels] of Object.entries(FAMILIES)) {
      const series = metrics.text.split('\n').filter((line) => line.startsWith(`${family}{`) || line.startsWith(`${family} `));
      expect(series.length, family).toBeGreaterThan(0);
      for (const line of series) {
        const names = [...line.matchAll(/(\w+)="/g)].map((match) => match[1]);
        expect(names.sort(), line).toEqual([...labels].sort());
      }
    }
    for (const family of DECLARED) expect(metrics.text).toContain(`# TYPE ${family} counter`);
    expect(metrics.text).toMatch(/outpost_jobs_claimed_total\{lane="uptime",check_type="URL"\} 2/);
    expect(metrics.text).toMatch(/outpost_jobs_claimed_total\{lane="script",check_type="MULTI_STEP"\} 1/);
    expect(metrics.text).toMatch(/outpost_jobs_finished_total\{check_type="URL",status="failed"\} 1/);
    expect(metrics.text).toMatch(/outpost_jobs_finished_total\{check_type="MULTI_STEP",status="passed"\} 1/);
    expect(metrics.text).toMatch(/outpost_capacity\{lane="uptime"\} 20/);
    expect(metrics.text).toMatch(/outpost_jobs_in_flight\{lane="script"\} 0/);
    expect(metrics.text).toMatch(/outpost_service_reachable 1/);
    // The trace of the script run went up.
    expect(metrics.text).toMatch(/outpost_artifact_bytes_total [1-9]/);
    // Its slot's next sandbox is started ahead once the job is over.
    await eventually(async () => ((await agent.health('/metrics')).text.includes('outpost_sandbox_pool_size 1') ? true : undefined), 30_000, 'a warm sandbox');
  });

  it('logs its state summary on its schedule', async () => {
    const summary = await eventually(() => {
      // The newest: one logged while the agent was still starting may predate its first call to the service.
      const line = agent.logs.map((text) => JSON.parse(text)).findLast((entry) => entry.msg === 'state summary');
      return line?.state;
    }, 5000, 'a state summary');
    expect(summary).toMatchObject({
      inFlight: { uptime: expect.any(Number), script: expect.any(Number) },
      queued: { uptime: expect.any(Number), script: expect.any(Number) },
      serviceReachable: true,
      rssMb: expect.any(Number),
    });
  });

  it("counts in its summaries, each since the one before, every job the agent finished", async () => {
    const summaries = () => agent.logs.map((text) => JSON.parse(text)).filter((entry) => entry.msg === 'state summary');
    // One more summary, taken after every job above had finished.
    const before = summaries().length;
    await eventually(() => (summaries().length > before ? true : undefined), 5000, 'another state summary');
    const finished: Record<string, number> = {};
    for (const { state } of summaries()) {
      for (const [status, count] of Object.entries(state.finished as Record<string, number>)) finished[status] = (finished[status] ?? 0) + count;
    }
    expect(finished).toEqual({ passed: 2, failed: 1 });
  });
});
