import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import { ConflictError } from '../errors/index.js';
import type { Logger } from '../logging.js';
import type { HelloRequest, Job } from '../protocol/agent-api.js';
import { laneOf, type Lane } from '../protocol/lanes.js';
import { VERSION } from '../version.js';
import { sleep, within } from './backoff.js';
import type { AgentConfig } from './config.js';
import { startEmbeddedRedis, type EmbeddedRedis } from './embedded-redis.js';
import { startHealthServer } from './health-server.js';
import { AgentMetrics, type AgentState } from './metrics.js';
import { startHousekeeping, type Housekeeping } from './housekeeping/housekeeping.js';
import { claimRoom } from './claim-room.js';
import { Poller } from './poller.js';
import { createUptimeRunner } from './uptime-runner.js';
import { Readiness } from './readiness.js';
import { Reporter } from './reporter.js';
import { ServiceClient } from './service-client.js';
import { ArtifactUploader } from './artifact-uploader.js';
import { JobLane, type JobLaneOptions } from './job-lane.js';
import { prepareSandboxRoot } from './multistep/job-directory.js';
import { chooseIsolation } from './isolation/choose-isolation.js';
import { scriptRunners } from './script-harness/runners.js';
import { ScriptHarness } from './script-harness/script-harness.js';
import type { ScrubberFactory } from './script-harness/scrubbers.js';
import { serviceSecrets } from './sandbox/sandbox-environment.js';
import { createJobScrubber } from './script-scrubber.js';
import { createAgentLogging } from './error-reporting/agent-logging.js';
import { noErrorReporter, type ErrorReporter } from './error-reporting/error-reporter.js';

export interface RunningAgent {
  agentId: string;
  healthPort: number;
  readiness: Readiness;
  metrics: AgentMetrics;
  /** The scheduled chores, also to be run now (tests, operators' tools). */
  housekeeping: Housekeeping;
  /** Drains and stops; resolves when everything the agent started has stopped. */
  stop(): Promise<void>;
}

export interface AgentOptions {
  /** With its error-level lines wired to `errorReporter`; when left out, the agent makes both from its configuration. */
  logger?: Logger;
  errorReporter?: ErrorReporter;
  /** The environment SERVICE_SECRET_* and proxy settings are read from; the process's by default. */
  env?: NodeJS.ProcessEnv;
  scrubbers?: ScrubberFactory;
  /** Bind address of the health server; the container needs 0.0.0.0. */
  healthHost?: string;
}

const SHUTDOWN = Symbol('agent shutdown');

export async function startAgent(config: AgentConfig, options: AgentOptions = {}): Promise<RunningAgent> {
  const { logger, errors } = options.logger
    ? { logger: options.logger, errors: options.errorReporter ?? noErrorReporter }
    : createAgentLogging(config, options.env ?? process.env);
  const agentId = randomUUID();
  const readiness = new Readiness();
  const metrics = new AgentMetrics();
  const about: Record<string, unknown> = {};
  const health = await startHealthServer(config.healthPort, readiness, metrics, options.healthHost, () => about);
  logger.info({ agentId, version: VERSION, healthPort: health.port }, 'agent starting');

  const probes = await createUptimeRunner(
    config.uptimeThreads,
    { agentId, probes: { useOsDnsResolver: config.useOsDnsResolver } },
    (error) => logger.error(`${error.message}; a new probe thread took its place`),
  );
  let embedded: EmbeddedRedis | undefined;
  let redis: Redis | undefined;
  try {
    await probes.start();
    if (!config.redisUrl) {
      embedded = await startEmbeddedRedis();
      logger.info('started an embedded redis-server (REDIS_URL is not set)');
    }
    redis = embedded
      ? new Redis({ path: embedded.socketPath, password: embedded.password, maxRetriesPerRequest: null })
      : new Redis(config.redisUrl!, { maxRetriesPerRequest: null });
    await waitForRedis(redis, config.redisUrl, readiness, logger);
  } catch (error) {
    redis?.disconnect();
    await embedded?.stop();
    await probes.close();
    await health.close();
    throw error;
  }

  const client = new ServiceClient(config.apiUrl, config.apiKey);
  const reporter = new Reporter(client, logger, metrics);
  const uploader = new ArtifactUploader(client, { metrics });
  // The uptime mode sets up no sandboxes: nothing of the script side is looked for or started.
  let scripts: ScriptHarness | undefined;
  try {
    scripts = config.mode === 'full' ? await startScriptSide(config, client, uploader, logger, options) : undefined;
  } catch (error) {
    // An isolation the operator named that cannot work here stops the agent at start: nothing it started stays.
    redis.disconnect();
    await embedded?.stop();
    await probes.close();
    await client.close();
    await health.close();
    throw error;
  }
  if (scripts) {
    about.isolation = { backend: scripts.isolation.kind, description: scripts.isolation.description };
    metrics.isolation.set({ backend: scripts.isolation.kind }, 1);
  }
  const inFlight = new Map<string, { job: Job; abort: AbortController }>();
  // From the service's hello; the agent's own clock is not trusted against the service's.
  let leaseMs = 300_000;
  // Claimed jobs count against capacity from the moment they are claimed, not when they start.
  const claimed = { uptime: new Set<string>(), script: new Set<string>() };
  const capacity = new EventEmitter();

  const runJob = async (job: Job): Promise<void> => {
    const abort = new AbortController();
    inFlight.set(job.jobId, { job, abort });
    const log = logger.child({ jobId: job.jobId, checkId: job.checkId, checkSessionId: job.checkSessionId });
    const stopTimer = metrics.jobDuration.startTimer({ check_type: job.checkType });
    metrics.jobsStarted.inc({ check_type: job.checkType });
    log.debug({ checkType: job.checkType, attempt: job.attempt }, 'job started');
    const lease = keepLeased(client, job, agentId, leaseMs, abort, log);
    try {
      const result = laneOf(job.checkType) === 'script'
        ? await scripts!.run(job, agentId, abort.signal)
        : await probes.run(job, abort.signal);
      stopTimer();
      if (abort.signal.reason === SHUTDOWN) {
        await client.release(job.jobId, agentId, 'agent shut down before the job finished').catch(() => undefined);
        return;
      }
      const status = result.hasErrors || result.hasFailures ? 'failed' : result.isDegraded ? 'degraded' : 'passed';
      metrics.jobsFinished.inc({ check_type: job.checkType, status });
      log.debug({ status, responseTime: result.responseTime, error: result.error?.code }, 'job finished');
      // The slot frees as soon as the probe is done: posting is the reporter's
      // business (batched, retried, flushed at shutdown) and never rejects.
      void reporter.report(result, log);
    } finally {
      clearInterval(lease);
      inFlight.delete(job.jobId);
      claimed[laneOf(job.checkType)].delete(job.jobId);
      capacity.emit('freed');
    }
  };

  const onLaneError = (error: Error) => logger.warn(`job queue: ${error.message}`);
  const laneOptions = (lane: Lane, concurrency: number): JobLaneOptions => ({
    lane,
    agentId,
    concurrency,
    logger,
    onRejected: (reason) => metrics.queueEntriesRejected.inc({ lane, reason }),
  });
  const lanes = {
    uptime: new JobLane(redis, laneOptions('uptime', config.uptimeConcurrency), runJob, onLaneError),
    script: new JobLane(redis, laneOptions('script', config.jobConcurrency), runJob, onLaneError),
  };
  await Promise.all([lanes.uptime.waitUntilReady(), lanes.script.waitUntilReady()]);
  // Script jobs are only ever claimed where this capacity is above 0, so in uptime mode never.
  const scriptCapacity = (scripts?.checkTypes.length ?? 0) > 0 ? config.jobConcurrency : 0;

  const hello: HelloRequest = {
    agentId,
    version: VERSION,
    hostname: hostname(),
    mode: config.mode,
    checkTypes: [...probes.checkTypes(), ...(scripts?.checkTypes ?? [])],
    runtimes: scripts?.runtimes ?? [],
    capacity: { uptime: config.uptimeConcurrency, script: scriptCapacity },
  };
  const running = (lane: Lane) =>
    [...inFlight.values()].filter(({ job }) => laneOf(job.checkType) === lane).length;
  const state: AgentState = {
    lanes: () => {
      const uptime = running('uptime');
      const script = running('script');
      return {
        uptime: { capacity: config.uptimeConcurrency, inFlight: uptime, queued: claimed.uptime.size - uptime },
        script: { capacity: scriptCapacity, inFlight: script, queued: claimed.script.size - script },
      };
    },
    idleSandboxes: () => scripts?.idleSandboxes ?? 0,
  };
  metrics.observe(state);
  const housekeeping = startHousekeeping({ config, logger, metrics, state });
  const pollAbort = new AbortController();
  const poller = new Poller({
    client,
    hello,
    readiness,
    metrics,
    logger,
    capacity: hello.capacity,
    // Uptime jobs are claimed ahead of free slots (UPTIME_PREFETCH) and wait in
    // BullMQ; script jobs only for a slot that is free.
    freeCapacity: () => ({
      uptime: claimRoom(claimed.uptime.size, config.uptimeConcurrency, config.uptimePrefetch),
      script: claimRoom(claimed.script.size, scriptCapacity, 0),
    }),
    capacityFreed: (signal) => waitForFreedCapacity(capacity, signal),
    onHello: async (answer) => {
      leaseMs = answer.leaseSeconds * 1000;
    },
    accept: async (jobs) => {
      for (const job of jobs) claimed[laneOf(job.checkType)].add(job.jobId);
      await Promise.all([
        lanes.uptime.add(jobs.filter((job) => laneOf(job.checkType) === 'uptime')),
        lanes.script.add(jobs.filter((job) => laneOf(job.checkType) === 'script')),
      ]);
    },
  });
  const polling = poller.run(pollAbort.signal);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      readiness.stopping();
      logger.info({ graceMs: config.shutdownGraceMs }, 'shutting down: no new jobs; running jobs may finish');
      pollAbort.abort();
      await polling;
      // Each Redis step is bounded: a Redis that died must not keep the agent from exiting.
      await within(5000, Promise.all([lanes.uptime.pause(), lanes.script.pause()]));
      for (const lane of [lanes.uptime, lanes.script]) {
        for (const job of (await within(5000, lane.drainWaiting())) ?? []) {
          await client.release(job.jobId, agentId, 'agent shutting down').catch(() => undefined);
          claimed[laneOf(job.checkType)].delete(job.jobId);
        }
      }
      const drained = await waitUntil(() => inFlight.size === 0, config.shutdownGraceMs);
      if (!drained) {
        logger.warn({ jobs: inFlight.size }, 'grace period over: releasing the jobs still running');
        for (const { abort } of inFlight.values()) abort.abort(SHUTDOWN);
        await waitUntil(() => inFlight.size === 0, 2000);
      }
      await reporter.flush(Math.max(1000, Math.min(config.shutdownGraceMs, 10_000)));
      await housekeeping.stop();
      await scripts?.stop();
      await probes.close();
      await within(5000, Promise.all([lanes.uptime.close(), lanes.script.close()]));
      redis.disconnect();
      await embedded?.stop();
      await client.close();
      await health.close();
      logger.info('agent stopped');
      await errors.close(2000);
    })());

  return { agentId, healthPort: health.port, readiness, metrics, housekeeping, stop };
}

/** The script side: the isolation backend chosen and said, and every script kind behind the harness. */
async function startScriptSide(
  config: AgentConfig,
  client: ServiceClient,
  uploader: ArtifactUploader,
  logger: Logger,
  options: AgentOptions,
): Promise<ScriptHarness> {
  const env = options.env ?? process.env;
  const sandbox = config.sandbox;
  const limits = {
    processes: sandbox.maxProcesses,
    openFiles: sandbox.maxOpenFiles,
    memoryBytes: sandbox.memoryLimitBytes,
    diskBytes: sandbox.diskLimitBytes,
  };
  await prepareSandboxRoot(sandbox.directory);
  const { backend, refused } = await chooseIsolation({
    mode: sandbox.isolation,
    allowUnsafe: sandbox.allowUnsafeNoIsolation,
    uidBase: sandbox.uidBase,
    uidCount: sandbox.uidCount,
    limits,
    directory: sandbox.directory,
  });
  const said = { isolation: backend.kind, ...(Object.keys(refused).length > 0 ? { refused } : {}) };
  if (backend.kind === 'none') logger.warn(said, `script isolation: ${backend.description}`);
  else logger.info(said, `script isolation: ${backend.description}`);
  const harness = new ScriptHarness({
    settings: {
      sandboxRoot: sandbox.directory,
      limits,
      serviceSecrets: serviceSecrets(env),
      agentEnv: env,
      chromiumPath: sandbox.chromiumPath,
      dependencyCache: sandbox.dependencyCache,
      ...(backend.privateTemp ? { privateTemp: backend.privateTemp } : {}),
    },
    isolation: backend,
    runners: scriptRunners({ sandbox, isolation: backend, client, agentEnv: env }),
    seats: config.jobConcurrency,
    uploader,
    scrubbers: options.scrubbers ?? createJobScrubber,
    agentKey: config.apiKey.reveal(),
  });
  await harness.start(logger);
  return harness;
}

/** Extends the job's lease at half its length for as long as the job runs. */
function keepLeased(
  client: ServiceClient,
  job: Job,
  agentId: string,
  leaseMs: number,
  abort: AbortController,
  log: Logger,
): NodeJS.Timeout {
  const timer = setInterval(() => {
    client.extendLease(job.jobId, agentId).catch((error: unknown) => {
      if (error instanceof ConflictError) {
        log.warn('the service gave the job to another agent; stopping it here');
        abort.abort();
      }
    });
  }, leaseMs / 2);
  timer.unref();
  return timer;
}

/**
 * Waits for Redis without giving up: an agent whose Redis is down at start
 * stays up, not ready, and says why, until Redis comes.
 */
async function waitForRedis(redis: Redis, url: string | undefined, readiness: Readiness, logger: Logger): Promise<void> {
  if (redis.status === 'ready') return;
  const where = url ? new URL(url).host : 'the embedded redis-server';
  let said = '';
  const onError = (error: Error) => {
    const message = `Redis at ${where} is not reachable (${(error as NodeJS.ErrnoException).code ?? error.message}); retrying`;
    readiness.set('redis-unavailable', message);
    if (message !== said) logger.error(message);
    said = message;
  };
  redis.on('error', onError);
  try {
    // Not events.once: it rejects on the first 'error', and errors here are expected.
    await new Promise((resolve) => redis.once('ready', resolve));
  } finally {
    redis.off('error', onError);
    redis.on('error', (error: Error) => logger.warn(`Redis: ${error.message}`));
  }
  if (said) logger.info(`Redis at ${where} is reachable again`);
  readiness.set('starting', 'connecting to the service');
}

async function waitUntil(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await sleep(Math.min(50, deadline - Date.now()));
  }
  return true;
}

/** Resolves when a job frees its slot, after a second at most, or on abort; leaves no listener behind. */
function waitForFreedCapacity(capacity: EventEmitter, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      capacity.off('freed', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, 1000);
    capacity.on('freed', done);
    signal.addEventListener('abort', done);
    if (signal.aborted) done();
  });
}
