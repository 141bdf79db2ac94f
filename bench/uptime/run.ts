/**
 * npm run bench: the uptime lane's throughput and timing accuracy, measured
 * side by side in one run on this machine.
 *
 * 1. Bare loop: undici requests to a local target, a fresh connection each,
 *    at the agent's concurrency, in this process.
 * 2. Pipeline: the real service and the real agent (separate processes) on URL
 *    monitors against the same target: claim → BullMQ → probe → result posted.
 * 3. Timing error: the agent's reported responseTime against the target's own
 *    measurement of requests it delays by a known amount.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { Client } from 'undici';
import { ApiClient } from '../../src/dev/api-client.js';
import {
  childPids,
  cpuSeconds,
  freePort,
  jsonLine,
  peakRssMb,
  pidsNamed,
  start,
  startBenchService,
  until,
  type Child,
} from './processes.js';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 100);
const BARE_REQUESTS = Number(process.env.BENCH_BARE_REQUESTS ?? 10_000);
const PIPELINE_JOBS = Number(process.env.BENCH_PIPELINE_JOBS ?? 10_000);
const TIMING_JOBS = Number(process.env.BENCH_TIMING_JOBS ?? 1000);
const TIMING_DELAY_MS = Number(process.env.BENCH_TIMING_DELAY_MS ?? 50);
const REST_TIMING_JOBS = Number(process.env.BENCH_REST_TIMING_JOBS ?? 200);
const CLI = resolve(import.meta.dirname, '../../dist/cli.js');

const children: Child[] = [];



async function bareLoop(origin: string): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < BARE_REQUESTS) {
      next += 1;
      const client = new Client(origin);
      try {
        const response = await client.request({ path: '/fast', method: 'GET' });
        await response.body.dump();
      } finally {
        await client.close();
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return BARE_REQUESTS / ((performance.now() - started) / 1000);
}

/**
 * The bare client's own timing error: undici, a fresh connection each, timed
 * from before the client exists to the end of the body, against the target's
 * figure for the same request. The floor any agent's figure sits on here.
 */
async function bareTimingError(origin: string, concurrency: number, count: number): Promise<number[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  const measured = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const id = ids[next]!;
      next += 1;
      const started = performance.now();
      const client = new Client(origin);
      try {
        const response = await client.request({ path: `/delay?ms=${TIMING_DELAY_MS}&id=${id}`, method: 'GET' });
        await response.body.dump();
        measured.set(id, performance.now() - started);
      } finally {
        await client.close();
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const handled = (await (await fetch(`${origin}/stats`)).json()) as Record<string, number>;
  return ids.filter((id) => handled[id] !== undefined).map((id) => measured.get(id)! - handled[id]!);
}

async function metric(healthUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${healthUrl}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}


/** Queues `count` runs: one session per check per trigger, at most 100 checks a call. */
async function queueRuns(api: ApiClient, checkIds: string[], count: number): Promise<string[]> {
  const sessions: string[] = [];
  while (sessions.length < count) {
    const batch = checkIds.slice(0, Math.min(100, count - sessions.length));
    const answer = await api.call<{ sessions: { checkSessionId: string }[] }>('POST', '/v2/check-sessions/trigger', {
      target: { checkId: batch },
    });
    sessions.push(...answer.sessions.map((session) => session.checkSessionId));
  }
  return sessions;
}

async function createChecks(api: ApiClient, slug: string, urls: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const url of urls) {
    const check = await api.call<{ id: string }>('POST', '/v1/checks/url', {
      name: `bench ${ids.length}`,
      activated: false,
      privateLocations: [slug],
      request: { url },
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
    });
    ids.push(check.id);
  }
  return ids;
}

async function startAgent(serviceUrl: string, key: string): Promise<{ child: Child; health: string }> {
  const port = await freePort();
  // Options NODE_OPTIONS refuses (--cpu-prof, --heap-prof) go on the command line.
  const nodeArgs = process.env.BENCH_AGENT_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = start(process.execPath, [...nodeArgs, CLI, 'agent'], {
    API_KEY: key,
    API_URL: serviceUrl,
    REDIS_URL: process.env.BENCH_REDIS_URL,
    UPTIME_CONCURRENCY: String(CONCURRENCY),
    AGENT_HEALTH_PORT: String(port),
    LOG_LEVEL: 'WARN',
    SHUTDOWN_GRACE_SECONDS: '5',
    NODE_OPTIONS: process.env.BENCH_AGENT_NODE_OPTIONS,
  });
  children.push(child);
  const health = `http://127.0.0.1:${port}`;
  await until(async () => (await fetch(`${health}/-/readiness`).catch(() => undefined))?.status === 200, 30_000, 'agent ready');
  return { child, health };
}

/**
 * CPU time each group of processes used from now on, per unit of work, in µs.
 * Groups are listed again at the end, so a PostgreSQL backend that started
 * meanwhile counts in full; one that ended meanwhile is missing from it.
 */
function cpuMeter(groups: Record<string, () => number[]>): { perUnit(units: number): string } {
  const before = new Map<number, number>();
  for (const list of Object.values(groups)) for (const pid of list()) before.set(pid, cpuSeconds(pid));
  return {
    perUnit(units) {
      let total = 0;
      const parts = Object.entries(groups).map(([name, list]) => {
        const seconds = list().reduce((sum, pid) => sum + Math.max(0, cpuSeconds(pid) - (before.get(pid) ?? 0)), 0);
        const micros = (seconds / units) * 1e6;
        total += micros;
        return `${name} ${micros.toFixed(0)}`;
      });
      return `${parts.join(', ')}; all ${total.toFixed(0)} µs`;
    },
  };
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

async function main(): Promise<void> {
  const target = start(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'target.ts')], {});
  children.push(target);
  const { port: targetPort } = await target.waitFor((line) => jsonLine<{ port: number }>(line));
  const origin = `http://127.0.0.1:${targetPort}`;

  console.log(`uptime benchmark: concurrency ${CONCURRENCY}, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}`);
  const bareCpu = cpuMeter({ loop: () => [process.pid], target: () => [target.process.pid!] });
  const bare = await bareLoop(origin);
  console.log(`  bare undici loop      ${bare.toFixed(0)} requests/s (${BARE_REQUESTS} requests)`);
  console.log(`  CPU per request       ${bareCpu.perUnit(BARE_REQUESTS)}`);
  const bareLoaded = await bareTimingError(origin, CONCURRENCY, TIMING_JOBS);
  const bareAtRest = await bareTimingError(origin, 1, REST_TIMING_JOBS);
  console.log(
    `  bare timing error     p50 ${quantile(bareLoaded, 0.5).toFixed(3)} / p99 ${quantile(bareLoaded, 0.99).toFixed(3)} ms ` +
      `${CONCURRENCY} at a time; p50 ${quantile(bareAtRest, 0.5).toFixed(3)} / p99 ${quantile(bareAtRest, 0.99).toFixed(3)} ms ` +
      `one at a time (undici, delayed ${TIMING_DELAY_MS} ms)`,
  );

  const { child: service, base, accountId, apiKey, location, rawKey } = await startBenchService(CLI, children);
  const api = new ApiClient(base, accountId, apiKey);

  // Throughput: jobs queued first, then an agent drains them.
  const fastChecks = await createChecks(api, location.slugName, Array.from({ length: 100 }, () => `${origin}/fast`));
  await queueRuns(api, fastChecks, PIPELINE_JOBS);
  const agent = await startAgent(base, rawKey);
  const cpu = cpuMeter({
    target: () => [target.process.pid!],
    service: () => [service.process.pid!],
    postgres: () => pidsNamed('postgres'),
    agent: () => [agent.child.process.pid!],
    'agent redis': () => childPids(agent.child.process.pid!),
  });
  const startedAt = performance.now();
  await until(async () => (await metric(agent.health, 'outpost_results_posted_total')) >= PIPELINE_JOBS, 600_000, 'results');
  const pipeline = PIPELINE_JOBS / ((performance.now() - startedAt) / 1000);
  console.log(`  agent pipeline        ${pipeline.toFixed(0)} checks/s (${PIPELINE_JOBS} checks, claim → BullMQ → probe → result posted)`);
  console.log(`  pipeline / bare       ${((pipeline / bare) * 100).toFixed(1)} %   (target ≥ 50 % and ≥ 1000 checks/s)`);
  console.log(`  CPU per check         ${cpu.perUnit(PIPELINE_JOBS)}`);

  // Timing error: every run its own URL, so the target's record matches one result.
  const ids = Array.from({ length: TIMING_JOBS }, () => randomUUID());
  const delayedChecks = await createChecks(
    api,
    location.slugName,
    ids.map((id) => `${origin}/delay?ms=${TIMING_DELAY_MS}&id=${id}`),
  );
  await fetch(`${origin}/loop-delay?reset`);
  const sessions = await queueRunsOnce(api, delayedChecks);
  await until(
    async () => (await metric(agent.health, 'outpost_results_posted_total')) >= PIPELINE_JOBS + TIMING_JOBS,
    600_000,
    'timed results',
  );
  const handled = await (await fetch(`${origin}/stats`)).json() as Record<string, number>;
  const targetDelay = await (await fetch(`${origin}/loop-delay`)).json() as { p50: number; p99: number };
  const errors: number[] = [];
  const connects: number[] = [];
  const answers: number[] = [];
  for (const [index, sessionId] of sessions.entries()) {
    const session = await api.call<{ results: { responseTime: number; timings: Record<string, number | null> | null }[] }>(
      'GET',
      `/v1/check-sessions/${sessionId}`,
    );
    const reference = handled[ids[index]!];
    const result = session.results[0];
    if (reference === undefined || !result) continue;
    errors.push(result.responseTime - reference);
    // Where the error sits: the TCP handshake (which the target does not see) or the exchange.
    connects.push(result.timings?.tcp ?? 0);
    answers.push((result.timings?.firstByte ?? 0) + (result.timings?.download ?? 0) - reference);
  }
  console.log(
    `  timing error          p50 ${quantile(errors, 0.5).toFixed(3)} ms, p99 ${quantile(errors, 0.99).toFixed(3)} ms ` +
      `over ${errors.length} runs delayed ${TIMING_DELAY_MS} ms (target p50 ≤ 1, p99 ≤ 5)`,
  );
  console.log(
    `    of which            TCP handshake p50 ${quantile(connects, 0.5).toFixed(3)} / p99 ${quantile(connects, 0.99).toFixed(3)} ms, ` +
      `request → response end beyond the target's p50 ${quantile(answers, 0.5).toFixed(3)} / p99 ${quantile(answers, 0.99).toFixed(3)} ms`,
  );
  console.log(
    `    target's loop delay p50 ${targetDelay.p50.toFixed(3)} / p99 ${targetDelay.p99.toFixed(3)} ms (the resolution, 1 ms, included)`,
  );
  console.log(`  agent peak RSS        ${peakRssMb(agent.child.process.pid!).toFixed(1)} MB (target ≤ 150)`);
}

async function queueRunsOnce(api: ApiClient, checkIds: string[]): Promise<string[]> {
  const sessions: string[] = [];
  for (let index = 0; index < checkIds.length; index += 100) {
    const answer = await api.call<{ sessions: { checkSessionId: string; checkId: string }[] }>('POST',
      '/v2/check-sessions/trigger',
      { target: { checkId: checkIds.slice(index, index + 100) } },
    );
    // Keep the sessions in the order of checkIds, so index i belongs to ids[i].
    const byCheck = new Map(answer.sessions.map((session) => [session.checkId, session.checkSessionId]));
    for (const checkId of checkIds.slice(index, index + 100)) sessions.push(byCheck.get(checkId)!);
  }
  return sessions;
}

try {
  await main();
} finally {
  for (const child of children.reverse()) await child.stop();
}
