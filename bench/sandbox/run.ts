/**
 * npm run bench (second part): a one-step multi-step check run through the
 * real service and agent, against `playwright test` on the same spec, in one
 * run on this machine. Traffic goes to loopback only.
 *
 * 1. CLI: `npx playwright test` on the spec in a throw-away project with the
 *    runtime's node_modules and its Node.js first on PATH, and the runtime's
 *    Node.js on Playwright's cli.js without npm; wall time per run.
 * 2. Agent: the same spec as a MULTI_STEP check, triggered one run at a time;
 *    job start → result, from the agent's own job-duration histogram.
 * 3. Memory: the agent's peak RSS plus the largest sandbox peak the agent
 *    reported (details.peakMemoryBytes), and what idle warm sandboxes hold.
 * 4. Isolation: steps 2 and 3 once per isolation backend this machine
 *    supports (BENCH_SANDBOX_ISOLATION, default "users namespaces"), side by
 *    side: users is the mechanism scripts ran under before namespaces.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { listProcesses } from '../../src/agent/sandbox/process-tree.js';
import { runtimePaths } from '../../src/runtimes/installed.js';
import { peakRssMb, start, startBenchService, type Child } from '../uptime/processes.js';
import { cliProject, SPEC } from './spec.js';
import { agentWarnings, histogramSum, proportionalBytes, ServiceApi, freePort, until } from './service.js';

const RUNS = Number(process.env.BENCH_SANDBOX_RUNS ?? 10);
const RUNTIME = process.env.BENCH_SANDBOX_RUNTIME ?? '2026.04';
/** Passed to the agent as SANDBOX_WARM when set; the agent's default otherwise. */
const WARM = process.env.BENCH_SANDBOX_WARM;
/**
 * Between agent runs: a check runs every minute or more, so its slot's next
 * warm sandbox has long finished loading when the next run comes. Runs
 * triggered back to back (0) measure a sandbox still loading.
 */
const PAUSE_MS = Number(process.env.BENCH_SANDBOX_PAUSE_MS ?? 5000);
/** Sandbox users of the benchmark's own, so nothing else on the machine is counted as its sandboxes. */
const UID_BASE = Number(process.env.BENCH_SANDBOX_UID_BASE ?? 62000);
const UID_COUNT = 100;
const ISOLATIONS = (process.env.BENCH_SANDBOX_ISOLATION ?? 'users namespaces').split(/\s+/).filter(Boolean);
const TARGET_RATIO = 0.5;
const TARGET_MEMORY_MB = 150;
const CLI = resolve(import.meta.dirname, '../../dist/cli.js');
const MB = 1024 * 1024;

const children: Child[] = [];
const cleanups: (() => Promise<void>)[] = [];

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const range = (values: number[]) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`;
const verdict = (met: boolean) => (met ? 'MET' : 'NOT MET');

async function startTarget(): Promise<{ server: Server; url: string }> {
  const server = createServer((_request, response) => response.end('ok\n'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

/**
 * Wall time of one `playwright test` run, spawn to exit; throws when the test did not pass.
 * `npx`: as a developer runs it, npm finding the project's playwright binary, the runtime's
 * Node.js first on PATH. `node`: the runtime's Node.js on Playwright's cli.js directly,
 * without npm's own start-up: the stricter baseline.
 */
async function cliRun(how: 'npx' | 'node', project: string, targetUrl: string): Promise<number> {
  const paths = runtimePaths(RUNTIME);
  const config = ['test', '--config', join(project, 'playwright.config.cjs')];
  const [command, args] = how === 'npx' ? ['npx', ['--no-install', 'playwright', ...config]] : [paths.node, [paths.playwrightCli, ...config]];
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: project,
    env: { PATH: `${dirname(paths.node)}:${process.env.PATH ?? ''}`, HOME: process.env.HOME, TARGET_URL: targetUrl, FORCE_COLOR: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once('close', done));
  const elapsed = performance.now() - started;
  if (code !== 0) throw new Error(`${how} playwright test exited with ${String(code)}: ${stderr.slice(-2000)}`);
  return elapsed;
}

async function main(): Promise<void> {
  const target = await startTarget();
  cleanups.push(() => new Promise((done) => target.server.close(() => done())));
  console.log(`sandbox benchmark: runtime ${RUNTIME}, ${RUNS} runs each, one at a time`);

  const project = await cliProject(runtimePaths(RUNTIME).dir);
  cleanups.push(() => rm(project, { recursive: true, force: true }));
  await cliRun('npx', project, target.url); // file caches warm, as the agent's will be
  const cli: number[] = [];
  const direct: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    cli.push(await cliRun('npx', project, target.url));
    direct.push(await cliRun('node', project, target.url));
  }
  console.log(`  npx playwright test     median ${median(cli).toFixed(0)} ms wall, range ${range(cli)} ms`);
  console.log(`  node cli.js test        median ${median(direct).toFixed(0)} ms wall, range ${range(direct)} ms (no npm)`);

  const { base, accountId, apiKey, location, rawKey } = await startBenchService(CLI, children);
  const api = new ServiceApi(base, accountId, apiKey);
  const measured: AgentMeasure[] = [];
  for (const isolation of ISOLATIONS) {
    const measure = await agentRuns(isolation, api, location.slugName, rawKey, target.url);
    if (!measure) continue;
    measured.push(measure);
    const ratio = measure.medianMs / median(cli);
    const strictRatio = measure.medianMs / median(direct);
    console.log(`  [${isolation}] agent job start→result  median ${measure.medianMs.toFixed(0)} ms, range ${measure.range} ms (warm sandboxes: ${WARM ?? 'agent default'}, ${PAUSE_MS} ms apart)`);
    console.log(`  [${isolation}] agent / npx             ${ratio.toFixed(2)}   target ≤ ${TARGET_RATIO}: ${verdict(ratio <= TARGET_RATIO)}`);
    console.log(`  [${isolation}] agent / node cli.js     ${strictRatio.toFixed(2)}   (${verdict(strictRatio <= TARGET_RATIO)} against the stricter baseline)`);
    console.log(`  [${isolation}] agent peak RSS          ${measure.agentPeakMb.toFixed(1)} MB`);
    console.log(`  [${isolation}] sandbox peak (max)      ${measure.sandboxPeakMb.toFixed(1)} MB RSS (all of one job's processes together, as the agent reports it)`);
    console.log(`  [${isolation}] idle warm sandbox       ${measure.idleWarmMb.toFixed(1)} MB RSS, ${measure.idleWarmPssMb.toFixed(1)} MB PSS (${measure.idleProcesses} processes, between jobs, per job seat)`);
    console.log(`  [${isolation}] agent + sandbox         ${measure.perRunMb.toFixed(1)} MB   target ≤ ${TARGET_MEMORY_MB} MB: ${verdict(measure.perRunMb <= TARGET_MEMORY_MB)}`);
    for (const line of measure.warnings) console.log(`  [${isolation}] agent said: ${line}`);
  }
  const [before, after] = [measured.find((m) => m.isolation === 'users'), measured.find((m) => m.isolation === 'namespaces')];
  if (before && after) {
    console.log(`  isolation cost: namespaces / users  start→result ${(after.medianMs / before.medianMs).toFixed(2)}, sandbox peak ${(after.sandboxPeakMb / before.sandboxPeakMb).toFixed(2)}, agent + sandbox ${(after.perRunMb / before.perRunMb).toFixed(2)}`);
  }
}

interface AgentMeasure {
  isolation: string;
  medianMs: number;
  range: string;
  agentPeakMb: number;
  sandboxPeakMb: number;
  idleWarmMb: number;
  idleWarmPssMb: number;
  idleProcesses: number;
  perRunMb: number;
  warnings: string[];
}

/** The agent under one isolation backend, its own check, RUNS runs; undefined when the backend cannot run here. */
async function agentRuns(isolation: string, api: ServiceApi, slug: string, rawKey: string, targetUrl: string): Promise<AgentMeasure | undefined> {
  const sandboxDir = await mkdtemp(join(tmpdir(), 'outpost-bench-sandboxes-'));
  cleanups.push(() => rm(sandboxDir, { recursive: true, force: true }));
  const healthPort = await freePort();
  const agent = start(process.execPath, [CLI, 'agent'], {
    API_KEY: rawKey,
    API_URL: api.base,
    JOB_CONCURRENCY: '1',
    AGENT_HEALTH_PORT: String(healthPort),
    LOG_LEVEL: process.env.BENCH_AGENT_LOG_LEVEL ?? 'WARN',
    SHUTDOWN_GRACE_SECONDS: '5',
    SANDBOX_DIR: sandboxDir,
    SANDBOX_ISOLATION: isolation,
    SANDBOX_UID_BASE: String(UID_BASE),
    SANDBOX_UID_COUNT: String(UID_COUNT),
    SANDBOX_WARM: WARM,
  });
  children.push(agent);
  const health = `http://127.0.0.1:${healthPort}`;
  try {
    await until(async () => (await fetch(`${health}/-/readiness`).catch(() => undefined))?.status === 200, 60_000, 'agent ready');
  } catch {
    console.log(`  [${isolation}] not measured: the agent did not start with it here (${(await agentWarnings(agent)).join(' | ').slice(0, 500)})`);
    await agent.stop();
    return undefined;
  }

  const check = await api.call<{ id: string }>('POST', '/v1/checks/multistep', {
    name: `bench one step (${isolation})`,
    activated: false,
    privateLocations: [slug],
    runtimeId: RUNTIME,
    script: SPEC,
    environmentVariables: [{ key: 'TARGET_URL', value: targetUrl }],
  });
  const runOnce = async (): Promise<{ ms: number; peakMemoryBytes: number }> => {
    const before = await histogramSum(health, 'outpost_job_duration_seconds', 'MULTI_STEP');
    const detail = await api.runToResult(check.id);
    if (detail.hasFailures || detail.hasErrors) throw new Error(`the check did not pass: ${JSON.stringify(detail.error)}`);
    // The result is posted after the histogram is observed, so the sum is already there.
    const after = await histogramSum(health, 'outpost_job_duration_seconds', 'MULTI_STEP');
    return { ms: (after - before) * 1000, peakMemoryBytes: Number(detail.details?.peakMemoryBytes ?? 0) };
  };
  await runOnce(); // as for the CLI: the first run pays for cold file caches (and starts cold)
  const runs: { ms: number; peakMemoryBytes: number }[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    await new Promise((done) => setTimeout(done, PAUSE_MS));
    runs.push(await runOnce());
  }
  const agentMs = runs.map((run) => run.ms);

  // Settled: the warm sandbox for the next job (if any) has finished loading.
  await new Promise((done) => setTimeout(done, 3000));
  const agentPeakMb = peakRssMb(agent.process.pid!);
  const sandboxPeakMb = Math.max(...runs.map((run) => run.peakMemoryBytes)) / MB;
  // The idle warm sandbox: everything below the agent but its embedded redis-server.
  const idle = (await listProcesses({ root: agent.process.pid! })).filter(
    (info) => info.pid !== agent.process.pid && ((info.uid >= UID_BASE && info.uid < UID_BASE + UID_COUNT) || isSandboxOf(info.pid)),
  );
  const idleWarmMb = idle.reduce((sum, info) => sum + info.rssBytes, 0) / MB;
  const idleWarmPssMb = (await proportionalBytes(idle.map((info) => info.pid))) / MB;
  // The memory a run holds is the larger of its reported peak (sampled every 250 ms, and at once
  // when a warm sandbox is handed its job) and the idle warm sandbox the next run will start in.
  const perRunMb = agentPeakMb + Math.max(sandboxPeakMb, idleWarmMb);
  const warnings = await agentWarnings(agent);
  await agent.stop();
  return {
    isolation,
    medianMs: median(agentMs),
    range: range(agentMs),
    agentPeakMb,
    sandboxPeakMb,
    idleWarmMb,
    idleWarmPssMb,
    idleProcesses: idle.length,
    perRunMb,
    warnings,
  };
}

/** A process of a sandbox whose user is the agent's own (a non-root agent's namespaces): anything but redis-server. */
function isSandboxOf(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('redis-server');
  } catch {
    return false;
  }
}


try {
  await main();
} finally {
  for (const child of children.reverse()) await child.stop();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
}
