/**
 * npm run bench (third part): a browser check of a few steps (open a page,
 * click a link, check a heading, fill and send a form) run through the real
 * service and agent, against `npx playwright test` on the same spec, in one
 * run on this machine. Traffic goes to a loopback shop only.
 *
 * 1. CLI: `npx playwright test` on the spec in a throw-away project with the
 *    runtime's node_modules and its Node.js first on PATH, Debian's Chromium
 *    and the browser runner's `use` options; wall time per run.
 * 2. Agent: the same spec as a BROWSER check, triggered one run at a time;
 *    job start → result, from the agent's own job-duration histogram.
 * 3. Concurrency: K checks triggered at once on an agent with K job slots,
 *    for each K of BENCH_BROWSER_CONCURRENCY; memory per concurrent check:
 *    the largest sandbox peak the agent reported (details.peakMemoryBytes),
 *    and the peak of all sandbox processes' PSS, sampled every 250 ms, ÷ K;
 *    and the agent's own peak RSS.
 * 4. Isolation: namespaces when the agent can start with it here, else users
 *    (BENCH_BROWSER_ISOLATION names one).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { allProcesses, memoryBytes, type ProcessInfo } from '../../src/agent/sandbox/process-tree.js';
import { runtimePaths } from '../../src/runtimes/installed.js';
import { startShopApp } from '../../test/support/shop-app.js';
import { agentWarnings, histogramSum, ServiceApi, freePort, until, type ResultDetail } from '../sandbox/service.js';
import { peakRssMb, start, startBenchService, type Child } from '../uptime/processes.js';
import { CHROMIUM, cliProject, SPEC, type CliProject } from './spec.js';

const RUNS = Number(process.env.BENCH_BROWSER_RUNS ?? 5);
const RUNTIME = process.env.BENCH_BROWSER_RUNTIME ?? '2026.04';
/** Between agent runs, as in the sandbox benchmark: a check runs every minute or more, so its slot's warm sandbox is loaded. */
const PAUSE_MS = Number(process.env.BENCH_BROWSER_PAUSE_MS ?? 5000);
const CONCURRENCY = (process.env.BENCH_BROWSER_CONCURRENCY ?? '1 2 4').split(/\s+/).filter(Boolean).map(Number);
/** Measured rounds of K checks at once, after one discarded round that starts each slot's first warm sandbox. */
const ROUNDS = Number(process.env.BENCH_BROWSER_ROUNDS ?? 2);
/** Tried in order; the first the agent starts with is measured. */
const ISOLATIONS = (process.env.BENCH_BROWSER_ISOLATION ?? 'namespaces users').split(/\s+/).filter(Boolean);
/** Sandbox users of the benchmark's own, so nothing else on the machine is counted as its sandboxes. */
const UID_BASE = Number(process.env.BENCH_BROWSER_UID_BASE ?? 62200);
const UID_COUNT = 100;
const SAMPLE_MS = 250;
const PASSWORD = 'bench-shop-Pa55-4711';
const CLI = resolve(import.meta.dirname, '../../dist/cli.js');
const MB = 1024 * 1024;
const FINAL = new Set(['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED']);

const children: Child[] = [];
const cleanups: (() => Promise<void>)[] = [];

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const ms = (value: number) => `${Math.round(value).toLocaleString('en')} ms`;
const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;
const range = (values: number[]) => `${ms(Math.min(...values))} – ${ms(Math.max(...values))}`;
const sleep = (milliseconds: number) => new Promise((done) => setTimeout(done, milliseconds));

/** Rows of cells, each column as wide as its widest cell. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) => `  ${row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()}`).join('\n');
}

/** Wall time of one `npx playwright test` run, spawn to exit; throws when the test did not pass. */
async function cliRun(project: CliProject, targetUrl: string): Promise<number> {
  const paths = runtimePaths(RUNTIME);
  const started = performance.now();
  const child = spawn('npx', ['--no-install', 'playwright', 'test', '--config', join(project.root, 'playwright.config.cjs')], {
    cwd: project.root,
    env: {
      PATH: `${dirname(paths.node)}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME,
      PLAYWRIGHT_BROWSERS_PATH: project.browsersPath,
      TARGET_URL: targetUrl,
      SHOP_PASSWORD: PASSWORD,
      FORCE_COLOR: '0',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once('close', done));
  const elapsed = performance.now() - started;
  if (code !== 0) throw new Error(`npx playwright test exited with ${String(code)}: ${stderr.slice(-2000)}`);
  return elapsed;
}

interface Agent {
  child: Child;
  health: string;
}

/** An agent with `slots` job slots under `isolation`; undefined (and why) when it does not start with it here. */
async function startAgent(api: ServiceApi, rawKey: string, isolation: string, slots: number): Promise<Agent | string> {
  const sandboxDir = await mkdtemp(join(tmpdir(), 'outpost-bench-browser-sandboxes-'));
  cleanups.push(() => rm(sandboxDir, { recursive: true, force: true }));
  const healthPort = await freePort();
  const child = start(process.execPath, [CLI, 'agent'], {
    API_KEY: rawKey,
    API_URL: api.base,
    // The script lane's slots: browser jobs run at once.
    JOB_CONCURRENCY: String(slots),
    AGENT_HEALTH_PORT: String(healthPort),
    LOG_LEVEL: process.env.BENCH_AGENT_LOG_LEVEL ?? 'WARN',
    SHUTDOWN_GRACE_SECONDS: '5',
    SANDBOX_DIR: sandboxDir,
    SANDBOX_ISOLATION: isolation,
    SANDBOX_UID_BASE: String(UID_BASE),
    SANDBOX_UID_COUNT: String(UID_COUNT),
    CHROMIUM_PATH: CHROMIUM,
  });
  children.push(child);
  const health = `http://127.0.0.1:${healthPort}`;
  try {
    await until(
      async () => {
        if (child.process.exitCode !== null) throw new Error('exited');
        return (await fetch(`${health}/-/readiness`).catch(() => undefined))?.status === 200;
      },
      60_000,
      'agent ready',
    );
  } catch {
    const said = (await agentWarnings(child)).join(' | ').slice(0, 500);
    await child.stop();
    return said || 'it did not become ready';
  }
  return { child, health };
}

/** Triggers the checks at once (one session each) and waits for every session to end; answers their results. */
async function runAllToResults(api: ServiceApi, checkIds: string[]): Promise<ResultDetail[]> {
  const triggered = await api.call<{ sessions: { checkSessionId: string }[] }>('POST', '/v2/check-sessions/trigger', {
    target: { checkId: checkIds },
  });
  return Promise.all(
    triggered.sessions.map(async ({ checkSessionId }) => {
      let session: { status: string; results: { checkResultLink: string }[] } | undefined;
      await until(
        async () => {
          session = await api.call('GET', `/v1/check-sessions/${checkSessionId}`);
          return FINAL.has(session!.status);
        },
        180_000,
        'a finished session',
        50,
      );
      const detail = await api.call<ResultDetail>('GET', new URL(session!.results[0]!.checkResultLink).pathname);
      if (detail.hasFailures || detail.hasErrors) throw new Error(`the check did not pass: ${JSON.stringify(detail.error)}`);
      return detail;
    }),
  );
}

/** Seconds of BROWSER jobs, start → result, the agent has observed so far. */
const jobSeconds = (agent: Agent) => histogramSum(agent.health, 'outpost_job_duration_seconds', 'BROWSER');

/**
 * The agent's sandbox processes: those of the benchmark's sandbox users, and
 * everything below the agent but the agent and its embedded redis-server
 * (bubblewrap's processes, a non-root agent's namespaces).
 */
function sandboxProcesses(all: ProcessInfo[], agentPid: number): ProcessInfo[] {
  const children = new Map<number, number[]>();
  for (const info of all) children.set(info.ppid, [...(children.get(info.ppid) ?? []), info.pid]);
  const below = new Set<number>();
  const stack = [...(children.get(agentPid) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (below.has(pid)) continue;
    below.add(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return all.filter((info) => (info.uid >= UID_BASE && info.uid < UID_BASE + UID_COUNT) || (below.has(info.pid) && !isRedis(info.pid)));
}

function isRedis(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('redis-server');
  } catch {
    return false;
  }
}

/** Samples the sandbox processes' total PSS every 250 ms until stopped; answers the peak. */
function samplePss(agentPid: number): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const next = performance.now() + SAMPLE_MS;
      peak = Math.max(peak, await memoryBytes(sandboxProcesses(await allProcesses(), agentPid)));
      await sleep(Math.max(0, next - performance.now()));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}


interface ConcurrentMeasure {
  k: number;
  meanJobMs: number[];
  wallMs: number[];
  reportedPeak: number;
  pssPeak: number;
  agentPeakMb: number;
}

async function main(): Promise<void> {
  const began = performance.now();
  const app = await startShopApp({ password: PASSWORD });
  cleanups.push(() => app.close());
  const paths = runtimePaths(RUNTIME);
  const project = await cliProject(RUNTIME, paths.dir);
  cleanups.push(() => rm(project.root, { recursive: true, force: true }));

  const { base, accountId, apiKey, location, rawKey } = await startBenchService(CLI, children);
  const api = new ServiceApi(base, accountId, apiKey);

  // The isolation: the first of ISOLATIONS the agent starts with here, as the sandbox benchmark finds out.
  let isolation: string | undefined;
  let agent: Agent | undefined;
  const refused: string[] = [];
  for (const candidate of ISOLATIONS) {
    const started = await startAgent(api, rawKey, candidate, 1);
    if (typeof started === 'string') {
      refused.push(`${candidate}: ${started}`);
      continue;
    }
    [isolation, agent] = [candidate, started];
    break;
  }
  if (!isolation || !agent) throw new Error(`the agent started with none of ${ISOLATIONS.join(', ')}: ${refused.join('; ')}`);
  const solo = agent;
  const slotsMax = Math.max(...CONCURRENCY);
  const checks: string[] = [];
  for (let index = 0; index < Math.max(1, slotsMax); index += 1) {
    const created = await api.call<{ id: string }>('POST', '/v1/checks/browser', {
      name: `bench browser ${index + 1}`,
      activated: false,
      privateLocations: [location.slugName],
      runtimeId: RUNTIME,
      script: SPEC,
      environmentVariables: [
        { key: 'TARGET_URL', value: app.url },
        { key: 'SHOP_PASSWORD', value: PASSWORD, secret: true },
      ],
    });
    checks.push(created.id);
  }

  console.log(
    `browser benchmark: runtime ${RUNTIME}, Chromium ${CHROMIUM}, video ${project.video ? 'on (ffmpeg)' : 'off (no ffmpeg)'}, ` +
      `isolation ${isolation}${refused.length ? ` (not: ${refused.join('; ').slice(0, 300)})` : ''}`,
  );

  // 1. CLI, one discarded run first: file caches warm, as the agent's will be.
  await cliRun(project, app.url);
  const cli: number[] = [];
  for (let run = 0; run < RUNS; run += 1) cli.push(await cliRun(project, app.url));

  // 2. Agent, one slot, one run at a time; the first run is discarded (cold, and it starts the slot's first warm sandbox).
  const agentOnce = async (): Promise<number> => {
    const before = await jobSeconds(solo);
    await runAllToResults(api, [checks[0]!]);
    // The result is posted after the histogram is observed, so the sum is already there.
    return ((await jobSeconds(solo)) - before) * 1000;
  };
  await agentOnce();
  const agentMs: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    await sleep(PAUSE_MS);
    agentMs.push(await agentOnce());
  }
  const warnings = await agentWarnings(solo.child);
  await solo.child.stop();

  console.log(`\none at a time: ${RUNS} runs each (agent runs ${PAUSE_MS} ms apart, one discarded run first on each side)`);
  console.log(
    table([
      ['', 'median', 'range'],
      ['npx playwright test, wall', ms(median(cli)), range(cli)],
      ['agent, job start → result', ms(median(agentMs)), range(agentMs)],
      ['agent ÷ CLI', (median(agentMs) / median(cli)).toFixed(2), ''],
    ]),
  );

  // 3. Concurrency: a fresh agent with K slots per K, so idle warm sandboxes of other slots count nowhere.
  const measures: ConcurrentMeasure[] = [];
  for (const k of CONCURRENCY) {
    const started = await startAgent(api, rawKey, isolation, k);
    if (typeof started === 'string') throw new Error(`the agent with ${k} slots did not start: ${started}`);
    const ids = checks.slice(0, k);
    await runAllToResults(api, ids); // every slot's first, cold job; each starts its slot's warm sandbox
    const measure: ConcurrentMeasure = { k, meanJobMs: [], wallMs: [], reportedPeak: 0, pssPeak: 0, agentPeakMb: 0 };
    for (let round = 0; round < ROUNDS; round += 1) {
      await sleep(PAUSE_MS);
      const sampler = samplePss(started.child.process.pid!);
      const before = await jobSeconds(started);
      const wallStarted = performance.now();
      const details = await runAllToResults(api, ids);
      measure.wallMs.push(performance.now() - wallStarted);
      measure.meanJobMs.push((((await jobSeconds(started)) - before) * 1000) / k);
      measure.pssPeak = Math.max(measure.pssPeak, await sampler.stop());
      measure.reportedPeak = Math.max(measure.reportedPeak, ...details.map((detail) => Number(detail.details?.peakMemoryBytes ?? 0)));
    }
    measure.agentPeakMb = peakRssMb(started.child.process.pid!);
    warnings.push(...(await agentWarnings(started.child)));
    await started.child.stop();
    measures.push(measure);
  }

  console.log(`\nK browser checks at once, agent with K job slots (JOB_CONCURRENCY=K), ${ROUNDS} round(s) of K after one discarded, ${PAUSE_MS} ms apart`);
  console.log(
    table([
      ['K', 'job start → result, mean', 'trigger → K results', 'sandbox peak per check (reported, max)', 'sandbox PSS peak ÷ K', 'agent peak RSS'],
      ...measures.map((m) => [
        String(m.k),
        m.meanJobMs.map(ms).join(', '),
        m.wallMs.map(ms).join(', '),
        mb(m.reportedPeak),
        mb(m.pssPeak / m.k),
        `${m.agentPeakMb.toFixed(0)} MB`,
      ]),
    ]),
  );
  console.log('  (reported: details.peakMemoryBytes, PSS of one job\'s processes sampled by the agent; PSS peak: all sandbox processes every 250 ms)');
  for (const line of [...new Set(warnings)].slice(0, 10)) console.log(`  agent said: ${line.slice(0, 300)}`);
  console.log(`browser benchmark took ${((performance.now() - began) / 1000).toFixed(0)} s`);
}

try {
  await main();
} finally {
  for (const child of children.reverse()) await child.stop();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
}
