import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import type { Logger } from '../logging.js';
import { createOutageLog } from '../outage-log.js';
import { MAX_JOBS_PER_CALL, type HelloRequest, type Job, type Result } from '../protocol/agent-api.js';
import { laneOfJob } from '../protocol/api-settings.js';
import type { Lane } from '../protocol/lanes.js';
import { VERSION } from '../version.js';
import type { AgentConfig } from './config.js';
import { startEmbeddedRedis, type EmbeddedRedis } from './embedded-redis.js';
import { startHealthServer } from './health-server.js';
import { AgentMetrics, type AgentState } from './metrics.js';
import { startHousekeeping, type Housekeeping } from './housekeeping/housekeeping.js';
import { claimRoom } from './claim-room.js';
import { JobSupervisor, type StopReason } from './job-supervisor.js';
import { shutDown } from './shutdown.js';
import { LeaseKeeper } from './lease-keeper.js';
import { Poller } from './poller.js';
import { RedisWatch } from './redis-watch.js';
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

/** How long claimed jobs wait for a Redis that went away before they are given back for another agent to run. */
const REDIS_PATIENCE_MS = 5000;

export async function startAgent(config: AgentConfig, options: AgentOptions = {}): Promise<RunningAgent> {
  const { logger, errors } = options.logger
    ? { logger: options.logger, errors: options.errorReporter ?? noErrorReporter }
    : createAgentLogging(config, options.env ?? process.env);
  const agentId = randomUUID();
  const readiness = new Readiness();
  const metrics = new AgentMetrics({ perCheck: config.metricsPerCheck, readiness });
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
  // One line when the service or Redis goes away and one when it is back, whoever noticed.
  const serviceOutage = createOutageLog({ logger, subject: 'the service', level: 'error' });
  const redisOutage = createOutageLog({ logger, subject: redisName(config.redisUrl), level: 'error' });
  const reporter = new Reporter(client, logger, metrics, serviceOutage);
  const uploader = new ArtifactUploader(client, { metrics, agentId });
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
  // From the service's hello; the agent's own clock is not trusted against the service's.
  let leaseMs = 30_000;
  const supervisor = new JobSupervisor();

  const runJob = async (job: Job): Promise<void> => {
    // Released or taken back while it waited: it is not this agent's to run.
    const signal = supervisor.start(job.jobId);
    if (!signal) return;
    const log = logger.child({ jobId: job.jobId, checkId: job.checkId, checkSessionId: job.checkSessionId });
    const stopTimer = metrics.jobDuration.startTimer({ check_type: job.checkType });
    metrics.jobsStarted.inc({ check_type: job.checkType });
    log.debug({ checkType: job.checkType, attempt: job.attempt }, 'job started');
    let result: Result;
    try {
      result = laneOfJob(job) === 'script' ? await scripts!.run(job, agentId, signal) : await probes.run(job, signal);
    } catch (error) {
      supervisor.forget(job.jobId);
      throw error;
    }
    stopTimer();
    if (signal.aborted) {
      // Stopped for shutdown (the goodbye offers it again) or taken back by the service: no result.
      log.debug({ reason: signal.reason as StopReason }, 'job stopped before it finished');
      supervisor.forget(job.jobId);
      return;
    }
    supervisor.finished(job.jobId);
    const status = result.hasErrors || result.hasFailures ? 'failed' : result.isDegraded ? 'degraded' : 'passed';
    metrics.jobsFinished.inc({ check_type: job.checkType, status });
    metrics.recordResult(job, result);
    log.debug({ status, responseTime: result.responseTime, error: result.error?.code }, 'job finished');
    // The slot frees as soon as the probe is done: posting is the reporter's
    // business (batched, retried, flushed at shutdown) and never rejects; the
    // job's lease is renewed until the service has its result.
    void reporter.report(result, log).then(() => supervisor.forget(job.jobId));
  };

  const onLaneError = (error: Error) => redisOutage.failed('the job queue', error);
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
  const forget = (jobs: readonly Job[]) =>
    Promise.all([
      lanes.uptime.forget(jobs.filter((job) => laneOfJob(job) === 'uptime')),
      lanes.script.forget(jobs.filter((job) => laneOfJob(job) === 'script')),
    ]);
  await Promise.all([lanes.uptime.waitUntilReady(), lanes.script.waitUntilReady()]);
  // Script jobs are only ever claimed where this capacity is above 0, so in uptime mode never.
  const scriptCapacity = (scripts?.checkTypes.length ?? 0) > 0 ? config.jobConcurrency : 0;

  /** Offers jobs again at once, in as few calls as it takes; never rejects. */
  const release = async (jobs: readonly Job[], reason: string, signal?: AbortSignal): Promise<boolean> => {
    try {
      for (let at = 0; at < jobs.length; at += MAX_JOBS_PER_CALL) {
        const ids = jobs.slice(at, at + MAX_JOBS_PER_CALL).map((job) => job.jobId);
        await client.release(agentId, ids, reason, signal);
      }
      return true;
    } catch (error) {
      if (!signal?.aborted) serviceOutage.failed('releasing jobs', error);
      logger.warn({ jobs: jobs.length }, `could not release ${jobs.length} jobs (${reason}); they go back at lease expiry`);
      return false;
    }
  };

  const redisWatch = new RedisWatch({
    redis,
    where: redisName(config.redisUrl),
    readiness,
    outage: redisOutage,
    giveUpWaitingAfterMs: REDIS_PATIENCE_MS,
    onGiveUpWaiting: () => {
      const waiting = supervisor.takeWaiting();
      if (waiting.length === 0) return;
      void forget(waiting);
      logger.warn({ jobs: waiting.length }, `releasing ${waiting.length} claimed jobs: Redis has been away for ${REDIS_PATIENCE_MS / 1000} s`);
      void release(waiting, 'the agent\'s Redis is unavailable');
    },
    onBack: async () => {
      const waiting = supervisor.jobsIn('waiting');
      const restored =
        (await lanes.uptime.reconcile(waiting.filter((job) => laneOfJob(job) === 'uptime'))) +
        (await lanes.script.reconcile(waiting.filter((job) => laneOfJob(job) === 'script')));
      if (restored > 0) logger.info({ jobs: restored }, `queued ${restored} claimed jobs again that Redis lost`);
    },
  });

  const hello: HelloRequest = {
    agentId,
    version: VERSION,
    hostname: hostname(),
    mode: config.mode,
    // API runs in both lanes (scripts or none): named once.
    checkTypes: [...new Set([...probes.checkTypes(), ...(scripts?.checkTypes ?? [])])],
    runtimes: scripts?.runtimes ?? [],
    capacity: { uptime: config.uptimeConcurrency, script: scriptCapacity },
  };
  const state: AgentState = {
    lanes: () => {
      const uptime = supervisor.counts('uptime');
      const script = supervisor.counts('script');
      return {
        uptime: { capacity: config.uptimeConcurrency, inFlight: uptime.running, queued: uptime.waiting },
        script: { capacity: scriptCapacity, inFlight: script.running, queued: script.waiting },
      };
    },
    idleSandboxes: () => scripts?.idleSandboxes ?? 0,
  };
  metrics.observe(state);
  const housekeeping = startHousekeeping({ config, logger, metrics, state });
  const leases = new LeaseKeeper({
    client,
    agentId,
    supervisor,
    leaseMs: () => leaseMs,
    outage: serviceOutage,
    readiness,
    onLost: (ids, cancelled) => {
      const { dropped, stopped } = supervisor.lost(ids);
      void forget(dropped);
      const taken = [...dropped, ...stopped];
      const byUser = taken.filter((job) => cancelled.has(job.jobId));
      if (byUser.length > 0) {
        logger.info({ jobs: byUser.map((job) => job.jobId) }, 'jobs cancelled by a user were stopped; they are not reported');
      }
      if (taken.length > byUser.length) {
        logger.warn(
          { jobs: taken.filter((job) => !cancelled.has(job.jobId)).map((job) => job.jobId) },
          'the service took jobs back from this agent (its lease ran out, so another agent may run them); they are not run or reported here',
        );
      }
    },
  });
  leases.start();
  const pollAbort = new AbortController();
  const poller = new Poller({
    client,
    hello,
    readiness,
    metrics,
    logger,
    outage: serviceOutage,
    capacity: hello.capacity,
    // Uptime jobs are claimed ahead of free slots (UPTIME_PREFETCH) and wait in
    // BullMQ; script jobs only for a slot that is free. Nothing is claimed
    // while Redis cannot queue it.
    freeCapacity: () =>
      redisWatch.usable
        ? {
            uptime: claimRoom(supervisor.counts('uptime').held, config.uptimeConcurrency, config.uptimePrefetch),
            script: claimRoom(supervisor.counts('script').held, scriptCapacity, 0),
          }
        : { uptime: 0, script: 0 },
    capacityFreed: (signal) => supervisor.freed(signal),
    onHello: async (answer) => {
      leaseMs = answer.leaseSeconds * 1000;
    },
    accept: async (jobs) => {
      supervisor.claimed(jobs);
      await Promise.all([
        lanes.uptime.add(jobs.filter((job) => laneOfJob(job) === 'uptime')),
        lanes.script.add(jobs.filter((job) => laneOfJob(job) === 'script')),
      ]);
    },
  });
  const polling = poller.run(pollAbort.signal);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      readiness.stopping();
      await shutDown(
        {
          graceMs: config.shutdownGraceMs,
          logger,
          supervisor,
          stopClaiming: () => {
            pollAbort.abort();
            return polling;
          },
          pauseLanes: () => Promise.all([lanes.uptime.pause(), lanes.script.pause()]),
          forget,
          goodbye: (running, reason, signal) => client.goodbye(agentId, running, reason, signal),
          flushResults: (ms) => reporter.flush(ms),
          leaseSeconds: () => leaseMs / 1000,
        },
        [
          { close: () => redisWatch.stop(), withinMs: 1000 },
          { close: () => leases.stop(), withinMs: 2000 },
          { close: () => housekeeping.stop(), withinMs: 2000 },
          { close: () => scripts?.stop(), withinMs: 5000 },
          { close: () => probes.close(), withinMs: 2000 },
          { close: () => Promise.all([lanes.uptime.close(), lanes.script.close()]), withinMs: 2000 },
          { close: () => redis.disconnect(), withinMs: 1000 },
          { close: () => embedded?.stop(), withinMs: 2000 },
          { close: () => client.close(), withinMs: 1000 },
          { close: () => health.close(), withinMs: 2000 },
        ],
      );
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

/**
 * Waits for Redis without giving up: an agent whose Redis is down at start
 * stays up, not ready, and says why, until Redis comes.
 */
async function waitForRedis(redis: Redis, url: string | undefined, readiness: Readiness, logger: Logger): Promise<void> {
  if (redis.status === 'ready') return;
  const where = redisName(url);
  let said = '';
  const onError = (error: Error) => {
    const message = `${where} is not reachable (${(error as NodeJS.ErrnoException).code ?? error.message}); retrying`;
    readiness.setRedisProblem(message);
    if (message !== said) logger.error(message);
    said = message;
  };
  redis.on('error', onError);
  try {
    // Not events.once: it rejects on the first 'error', and errors here are expected.
    await new Promise((resolve) => redis.once('ready', resolve));
  } finally {
    redis.off('error', onError);
    // Until the agent's RedisWatch follows the connection: an 'error' without a listener is printed raw by ioredis.
    redis.on('error', () => undefined);
  }
  if (said) logger.info(`${where} is reachable again`);
  readiness.setRedisProblem(undefined);
  readiness.set('starting', 'connecting to the service');
}

function redisName(url: string | undefined): string {
  return url ? `Redis at ${new URL(url).host}` : 'the embedded redis-server';
}
