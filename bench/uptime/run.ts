/**
 * npm run bench: the uptime lane's throughput and timing accuracy, measured
 * side by side in one run on this machine.
 *
 * 1. Bare loop: undici requests to a local target, a fresh connection each,
 *    at the agent's concurrency, in this process.
 * 2. Pipeline: the real service and the real agent (separate processes) on URL
 *    monitors against the same target: claim → queue → probe → result posted.
 * 3. Timing error: the agent's reported responseTime against the target's own
 *    measurement of requests it delays by a known amount.
 * 4. Memory at a steady rate: a fresh agent and a fresh blackbox_exporter,
 *    each offered the same checks a second for a while, their peak RSS.
 * 5. Memory after an error event: an idle agent that has reported one, beside
 *    one with error reporting off.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { Client } from 'undici';
import { AGENT_V8_FLAGS } from '../../src/agent/v8-tuning.js';
import { ApiClient } from '../../src/dev/api-client.js';
import {
  childPids,
  cpuSeconds,
  freePort,
  jsonLine,
  peakRssMb,
  residentMb,
  residentParts,
  pidsNamed,
  start,
  startBenchService,
  until,
  type Child,
} from './processes.js';
import { startSentryReceiver } from '../../test/support/sentry-receiver.js';
import { BLACKBOX_EXPORTER, startPeer } from './peer.js';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 100);
const BARE_REQUESTS = Number(process.env.BENCH_BARE_REQUESTS ?? 10_000);
const PIPELINE_JOBS = Number(process.env.BENCH_PIPELINE_JOBS ?? 10_000);
const TIMING_JOBS = Number(process.env.BENCH_TIMING_JOBS ?? 1000);
const TIMING_DELAY_MS = Number(process.env.BENCH_TIMING_DELAY_MS ?? 50);
/** The load the memory target is set at: checks (or probes) offered a second, and for how long. */
const STEADY_RATE = Number(process.env.BENCH_STEADY_RATE ?? 1000);
const STEADY_SECONDS = Number(process.env.BENCH_STEADY_SECONDS ?? 10);
const REST_TIMING_JOBS = Number(process.env.BENCH_REST_TIMING_JOBS ?? 200);
const CLI = resolve(import.meta.dirname, '../../dist/cli.js');
/**
 * The agent as the uptime image starts it, from its bundle (tools/bundle-agent.ts);
 * BENCH_AGENT_BUNDLE=off starts it from dist/ as `npm start` does. The full mode
 * is not in the bundle, so BENCH_AGENT_MODE=full starts it from dist/ too.
 */
const AGENT_MODE = process.env.BENCH_AGENT_MODE ?? 'uptime';
const AGENT_BUNDLED = process.env.BENCH_AGENT_BUNDLE !== 'off' && AGENT_MODE === 'uptime';
const AGENT_CLI = AGENT_BUNDLED ? resolve(import.meta.dirname, '../../dist/agent-bundle/cli.js') : CLI;
/**
 * As the uptime image sets them (Dockerfile.uptime): a small young generation,
 * so RSS follows the live heap; one V8 helper thread rather than four, whose
 * parallel collections cost CPU time on a 2-core machine; and at most two
 * malloc arenas rather than one per thread that allocates.
 */
const AGENT_NODE_OPTIONS = process.env.BENCH_AGENT_NODE_OPTIONS ?? '--max-semi-space-size=2 --v8-pool-size=1';
/**
 * The images run Node.js 24 and give V8 the agent's settings on node's command
 * line. BENCH_AGENT_NODE runs the agent on another node binary than this
 * process's (the images' version, say); BENCH_AGENT_NODE_ARGS adds options
 * NODE_OPTIONS refuses (--cpu-prof and the like) to the images' own.
 */
const AGENT_NODE = process.env.BENCH_AGENT_NODE ?? process.execPath;
const AGENT_NODE_ARGS = [...AGENT_V8_FLAGS, ...(process.env.BENCH_AGENT_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
const AGENT_MALLOC_ARENA_MAX = process.env.BENCH_AGENT_MALLOC_ARENA_MAX ?? '2';
/**
 * The agent as the uptime image runs it, the setting one would pick to do what
 * blackbox_exporter does; BENCH_AGENT_MODE=full measures the full agent (its
 * script lane idle, its redis-server counted).
 */
const AGENT_ENV = {
  AGENT_MODE,
  UPTIME_QUEUE: process.env.BENCH_UPTIME_QUEUE,
  UPTIME_THREADS: process.env.BENCH_UPTIME_THREADS,
  MALLOC_ARENA_MAX: AGENT_MALLOC_ARENA_MAX || undefined,
};

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

/** The agent as the bench runs every one: its node, V8 options, mode and NODE_OPTIONS, with `env` besides. */
function spawnAgent(env: Record<string, string | undefined>): Child {
  const child = start(AGENT_NODE, [...AGENT_NODE_ARGS, AGENT_CLI, 'agent'], {
    LOG_LEVEL: 'WARN',
    ...env,
    ...AGENT_ENV,
    NODE_OPTIONS: AGENT_NODE_OPTIONS,
  });
  children.push(child);
  return child;
}

async function startAgent(serviceUrl: string, key: string): Promise<{ child: Child; health: string }> {
  const port = await freePort();
  const child = spawnAgent({
    API_KEY: key,
    API_URL: serviceUrl,
    REDIS_URL: process.env.BENCH_REDIS_URL,
    UPTIME_CONCURRENCY: String(CONCURRENCY),
    AGENT_HEALTH_PORT: String(port),
    SHUTDOWN_GRACE_SECONDS: '5',
  });
  const health = `http://127.0.0.1:${port}`;
  await until(async () => (await fetch(`${health}/-/readiness`).catch(() => undefined))?.status === 200, 30_000, 'agent ready');
  return { child, health };
}

/**
 * CPU time each group of processes used from now on, per unit of work, in µs.
 * Groups are listed again at the end, so a PostgreSQL backend that started
 * meanwhile counts in full; one that ended meanwhile is missing from it.
 */
function cpuMeter(groups: Record<string, () => number[]>): {
  perUnit(units: number): string;
  micros(units: number): Record<string, number>;
} {
  const before = new Map<number, number>();
  for (const list of Object.values(groups)) for (const pid of list()) before.set(pid, cpuSeconds(pid));
  const micros = (units: number) =>
    Object.fromEntries(
      Object.entries(groups).map(([name, list]) => {
        const seconds = list().reduce((sum, pid) => sum + Math.max(0, cpuSeconds(pid) - (before.get(pid) ?? 0)), 0);
        return [name, (seconds / units) * 1e6];
      }),
    );
  return {
    micros,
    perUnit(units) {
      const each = micros(units);
      const total = Object.values(each).reduce((sum, value) => sum + value, 0);
      const parts = Object.entries(each).map(([name, value]) => `${name} ${value.toFixed(0)}`);
      return `${parts.join(', ')}; all ${total.toFixed(0)} µs`;
    },
  };
}

/** Sums a labelled series of the agent's /metrics (every lane). */
async function labelledMetric(healthUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${healthUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

const mean = (values: number[]) => (values.length === 0 ? NaN : values.reduce((sum, value) => sum + value, 0) / values.length);
const inFlightText = (samples: number[]) =>
  `${mean(samples).toFixed(0)} in flight (mean of ${samples.length} samples, max ${Math.max(0, ...samples)})`;
const errorText = (errors: number[]) =>
  `p50 ${quantile(errors, 0.5).toFixed(3)} / p99 ${quantile(errors, 0.99).toFixed(3)} ms`;

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

async function main(): Promise<void> {
  const target = start(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'target.ts')], {});
  children.push(target);
  const { port: targetPort } = await target.waitFor((line) => jsonLine<{ port: number }>(line));
  const origin = `http://127.0.0.1:${targetPort}`;

  const agentSettings = Object.entries(AGENT_ENV)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
  console.log(
    `uptime benchmark: concurrency ${CONCURRENCY}, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}, ` +
      `agent ${agentSettings} NODE_OPTIONS=${AGENT_NODE_OPTIONS} (other settings their defaults), ` +
      `on Node.js ${execFileSync(AGENT_NODE, ['--version'], { encoding: 'utf8' }).trim()} ${AGENT_NODE_ARGS.join(' ')}, ` +
      `${AGENT_BUNDLED ? 'bundled (dist/agent-bundle)' : 'from dist/'}, load average ${loadAverage()}`,
  );
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

  // The peer: the same target, the same number of probes, the same concurrency.
  const peer = await startPeer(children);
  let peerCpuPerProbe: number | undefined;
  let peerFailed = 0;
  if (!peer) {
    console.log(`  blackbox_exporter     skipped: ${BLACKBOX_EXPORTER} is not installed (Debian: prometheus-blackbox-exporter)`);
  } else {
    const peerCpu = cpuMeter({ peer: () => [peer.child.process.pid!], target: () => [target.process.pid!] });
    const startedAt = performance.now();
    const run = await peer.probe(Array.from({ length: PIPELINE_JOBS }, () => `${origin}/fast`), CONCURRENCY);
    const rate = PIPELINE_JOBS / ((performance.now() - startedAt) / 1000);
    peerCpuPerProbe = peerCpu.micros(PIPELINE_JOBS).peer!;
    peerFailed += run.failed;
    console.log(
      `  blackbox_exporter     ${rate.toFixed(0)} probes/s (${PIPELINE_JOBS} probes, ${run.failed} failed, ${inFlightText(run.inFlight)})`,
    );
    console.log(`  CPU per probe         ${peerCpu.perUnit(PIPELINE_JOBS)} (the load generator, this process, apart)`);
  }

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
  // A scrape costs the agent CPU that the meter charges to its checks: four a second, not ten (Prometheus takes one in 15 s).
  await until(async () => (await metric(agent.health, 'outpost_results_posted_total')) >= PIPELINE_JOBS, 600_000, 'results', 250);
  const pipeline = PIPELINE_JOBS / ((performance.now() - startedAt) / 1000);
  const pipelineResults = await metric(agent.health, 'outpost_results_posted_total');
  const perCheck = cpu.micros(PIPELINE_JOBS);
  console.log(`  agent pipeline        ${pipeline.toFixed(0)} checks/s (${PIPELINE_JOBS} checks, claim → queue → probe → result posted)`);
  console.log(`  pipeline / bare       ${((pipeline / bare) * 100).toFixed(1)} %   (target ≥ 50 % and ≥ 1000 checks/s)`);
  console.log(`  CPU per check         ${cpu.perUnit(PIPELINE_JOBS)}`);
  console.log(
    `  per recorded result   service ${perCheck.service!.toFixed(0)} µs, PostgreSQL ${perCheck.postgres!.toFixed(0)} µs` +
      `${process.env.DATABASE_URL ? '' : ' (PGlite runs inside the service)'}`,
  );
  const agentRss = peakRssMb(agent.child.process.pid!);
  const agentParts = residentParts(agent.child.process.pid!);
  const redisPids = childPids(agent.child.process.pid!);
  const redisRss = redisPids.reduce((sum, pid) => sum + peakRssMb(pid), 0);
  const withRedis = redisPids.length > 0;
  // Stopped before the timing phase: that one starts an agent with its runs already queued.
  await agent.child.stop();

  // Timing error: every run its own URL, so the target's record matches one result.
  const ids = Array.from({ length: TIMING_JOBS }, () => randomUUID());
  const delayedUrls = ids.map((id) => `${origin}/delay?ms=${TIMING_DELAY_MS}&id=${id}`);
  const delayedChecks = await createChecks(api, location.slugName, delayedUrls);
  const sessions = await queueRunsOnce(api, delayedChecks);
  await fetch(`${origin}/loop-delay?reset`);
  // Queued before the agent starts, so its slots fill at once rather than as runs trickle in.
  const timingAgent = await startAgent(base, rawKey);
  const agentInFlight: number[] = [];
  let timingDone = false;
  const sampling = (async () => {
    while (!timingDone) {
      agentInFlight.push(await labelledMetric(timingAgent.health, 'outpost_jobs_in_flight'));
      await new Promise((done) => setTimeout(done, 50));
    }
  })();
  await until(
    async () => (await metric(timingAgent.health, 'outpost_results_posted_total')) >= TIMING_JOBS,
    600_000,
    'timed results',
  );
  timingDone = true;
  await sampling;
  // Its figures are in; the steady phase below starts an agent of its own.
  await timingAgent.child.stop();
  const handled = (await (await fetch(`${origin}/stats`)).json()) as Record<string, number>;
  const targetDelay = (await (await fetch(`${origin}/loop-delay`)).json()) as { p50: number; p99: number };
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
  // Samples before the first claim and after the last result say nothing about load.
  const busy = agentInFlight.filter((count) => count > 0);
  console.log(
    `  timing error          ${errorText(errors)} with ${inFlightText(busy)}, ` +
      `over ${errors.length} runs delayed ${TIMING_DELAY_MS} ms (target p50 ≤ 1, p99 ≤ 5)`,
  );
  console.log(
    `    of which            TCP handshake p50 ${quantile(connects, 0.5).toFixed(3)} / p99 ${quantile(connects, 0.99).toFixed(3)} ms, ` +
      `request → response end beyond the target's p50 ${quantile(answers, 0.5).toFixed(3)} / p99 ${quantile(answers, 0.99).toFixed(3)} ms`,
  );
  console.log(
    `    target's loop delay p50 ${targetDelay.p50.toFixed(3)} / p99 ${targetDelay.p99.toFixed(3)} ms (the resolution, 1 ms, included)`,
  );
  console.log(
    `  agent peak RSS        ${agentRss.toFixed(1)} MB` +
      (withRedis ? `, ${(agentRss + redisRss).toFixed(1)} MB with its redis-server` : ' (no redis-server)') +
      `; at the end ${partsText(agentParts)}`,
  );

  if (peer) {
    // The same number in flight as the agent had: as many probes at a time as it ran on average.
    const equal = Math.max(1, Math.round(mean(busy)));
    const peerIds = Array.from({ length: TIMING_JOBS }, () => randomUUID());
    const peerUrls = peerIds.map((id) => `${origin}/delay?ms=${TIMING_DELAY_MS}&id=${id}`);
    const run = await peer.probe(peerUrls, equal);
    const peerHandled = (await (await fetch(`${origin}/stats`)).json()) as Record<string, number>;
    const peerErrors = peerIds.flatMap((id, index) => {
      const reference = peerHandled[id];
      const measured = run.responseMs.get(peerUrls[index]!);
      return reference === undefined || measured === undefined ? [] : [measured - reference];
    });
    const peerRss = peakRssMb(peer.child.process.pid!);
    const peerParts = residentParts(peer.child.process.pid!);
    peerFailed += TIMING_JOBS - peerErrors.length;
    console.log(
      `  peer timing error     ${errorText(peerErrors)} with ${inFlightText(run.inFlight.filter((count) => count > 0))}, ` +
        `over ${peerErrors.length} probes (blackbox_exporter's phases added up)`,
    );
    console.log(`  peer peak RSS         ${peerRss.toFixed(1)} MB; at the end ${partsText(peerParts)}`);
    console.log('  Outpost ÷ blackbox_exporter, same run:');
    console.log(
      `    CPU per check       ${(perCheck.agent! / peerCpuPerProbe!).toFixed(2)} (agent ${perCheck.agent!.toFixed(0)} µs ÷ ` +
        `${peerCpuPerProbe!.toFixed(0)} µs)` +
        (withRedis ? `; with its redis-server ${((perCheck.agent! + perCheck['agent redis']!) / peerCpuPerProbe!).toFixed(2)}` : '') +
        '   (target ≤ 1.0)',
    );
    console.log(
      `    peak RSS            ${(agentRss / peerRss).toFixed(2)}` +
        (withRedis ? `; with its redis-server ${((agentRss + redisRss) / peerRss).toFixed(2)}` : '') +
        ` with ~${CONCURRENCY} in flight, each as fast as it goes (the target is set at ${STEADY_RATE}/s, below)`,
    );
    console.log(
      `    timing error        p50 ${(quantile(errors, 0.5) / quantile(peerErrors, 0.5)).toFixed(2)}, ` +
        `p99 ${(quantile(errors, 0.99) / quantile(peerErrors, 0.99)).toFixed(2)} at ~${equal} in flight each   (target ≤ 1)`,
    );
  }
  // Memory where the target sets it: fresh processes, so each peak is this phase's own.
  const steadyRuns = STEADY_RATE * STEADY_SECONDS;
  const steadyAgent = await startAgent(base, rawKey);
  const agentSteady = await offerSteadily(10, (count) => queueRuns(api, fastChecks, count));
  await until(
    async () => (await metric(steadyAgent.health, 'outpost_results_posted_total')) >= steadyRuns,
    600_000,
    'steady results',
  );
  const agentSteadyBack = (performance.now() - agentSteady.startedAt) / 1000;
  const steadyResults = await metric(steadyAgent.health, 'outpost_results_posted_total');
  const agentSteadyRss = peakRssMb(steadyAgent.child.process.pid!);
  const agentSteadyParts = residentParts(steadyAgent.child.process.pid!);
  await steadyAgent.child.stop();
  console.log(
    `  at ${STEADY_RATE} checks/s        agent peak RSS ${agentSteadyRss.toFixed(1)} MB; at the end ${partsText(agentSteadyParts)} ` +
      `(${steadyRuns} runs offered over ${agentSteady.seconds.toFixed(1)} s, all back in ${agentSteadyBack.toFixed(1)} s)`,
  );
  if (peer) {
    const steadyPeer = (await startPeer(children))!;
    let steadyFailed = 0;
    const peerSteady = await offerSteadily(100, async (count) => {
      const runs = await Promise.all(Array.from({ length: count }, () => steadyPeer.probe([`${origin}/fast`], 1)));
      for (const run of runs) steadyFailed += run.failed;
    });
    const peerSteadyBack = (performance.now() - peerSteady.startedAt) / 1000;
    const peerSteadyRss = peakRssMb(steadyPeer.child.process.pid!);
    const peerSteadyParts = residentParts(steadyPeer.child.process.pid!);
    peerFailed += steadyFailed;
    await steadyPeer.child.stop();
    console.log(
      `  peer at ${STEADY_RATE} probes/s   peak RSS ${peerSteadyRss.toFixed(1)} MB; at the end ${partsText(peerSteadyParts)} ` +
        `(${steadyRuns} probes offered over ${peerSteady.seconds.toFixed(1)} s, all back in ${peerSteadyBack.toFixed(1)} s, ${steadyFailed} failed)`,
    );
    console.log(`    peak RSS at ${STEADY_RATE}/s ${(agentSteadyRss / peerSteadyRss).toFixed(2)}   (target ≤ 2)`);
  }
  // A real agent reports an error sooner or later (a service restart is enough), and keeps
  // what reporting loaded; the runs above report none.
  const erred = await agentAfterAnErrorEvent(true);
  const quiet = await agentAfterAnErrorEvent(false);
  console.log(
    `  after an error event  agent RSS ${erred.rssMb.toFixed(1)} MB, ${quiet.rssMb.toFixed(1)} MB with error reporting off ` +
      `(idle, its service unreachable; ${erred.events} event(s) at a receiver)`,
  );
  console.log(`  load average          ${loadAverage()} at the end (${availableParallelism()} cores)`);
  // What a test reads: whether every run came back, never how fast.
  console.log(
    JSON.stringify({
      bench: 'uptime',
      pipelineRuns: PIPELINE_JOBS,
      pipelineResults,
      timedRuns: TIMING_JOBS,
      timedResults: errors.length,
      steadyRuns,
      steadyResults,
      errorEvents: erred.events,
      peer: peer ? { failed: peerFailed } : null,
    }),
  );
}

/**
 * Offers STEADY_RATE a second for STEADY_SECONDS, in `ticksPerSecond` even
 * batches on a fixed clock (a late tick does not push the later ones back),
 * without waiting for one batch before the next. Resolves when every batch
 * was accepted; says when it started and how long offering took.
 */
async function offerSteadily(
  ticksPerSecond: number,
  offer: (count: number) => Promise<unknown>,
): Promise<{ startedAt: number; seconds: number }> {
  const perTick = STEADY_RATE / ticksPerSecond;
  const ticks = STEADY_SECONDS * ticksPerSecond;
  const startedAt = performance.now();
  const offered: Promise<unknown>[] = [];
  for (let tick = 0; tick < ticks; tick += 1) {
    const wait = startedAt + (tick * 1000) / ticksPerSecond - performance.now();
    if (wait > 0) await new Promise((done) => setTimeout(done, wait));
    // Whole runs: the remainder of a fractional batch goes with the next one.
    const count = Math.floor(perTick * (tick + 1)) - Math.floor(perTick * tick);
    if (count > 0) offered.push(offer(count));
  }
  await Promise.all(offered);
  return { startedAt, seconds: (performance.now() - startedAt) / 1000 };
}

/**
 * A fresh agent whose service does not answer: its first claim fails, which
 * it logs at error level and, with reporting on, reports to a receiver here.
 * Its resident memory once the event is in (or, reporting off, once the line
 * is out) and the agent has settled.
 */
async function agentAfterAnErrorEvent(reporting: boolean): Promise<{ rssMb: number; events: number }> {
  const receiver = await startSentryReceiver();
  const agent = spawnAgent({
    API_KEY: `pl_${'b'.repeat(40)}`,
    API_URL: `http://127.0.0.1:${await freePort()}`,
    AGENT_HEALTH_PORT: String(await freePort()),
    EXTERNAL_OBSERVABILITY: reporting ? 'on' : 'off',
    SENTRY_DSN: receiver.dsn,
  });
  try {
    await agent.waitFor((line) => (line.includes('"level":50') ? true : undefined));
    if (reporting) await until(async () => receiver.events().length > 0, 30_000, 'an error event');
    await new Promise((done) => setTimeout(done, 1000));
    return { rssMb: residentMb(agent.process.pid!), events: receiver.events().length };
  } finally {
    await agent.stop();
    await receiver.close();
  }
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

function loadAverage(): string {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
}

function partsText(parts: { anonymousMb: number; fileMb: number }): string {
  return `${parts.anonymousMb.toFixed(1)} MB anonymous, ${parts.fileMb.toFixed(1)} MB file pages (mostly its executable's)`;
}
