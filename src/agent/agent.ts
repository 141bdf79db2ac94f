import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../logging.js';
import { createOutageLog } from '../outage-log.js';
import { MAX_JOBS_PER_CALL, type HelloRequest, type Job, type Result } from '../protocol/agent-api.js';
import { laneOfJob } from '../protocol/api-settings.js';
import type { Lane } from '../protocol/lanes.js';
import { VERSION } from '../version.js';
import type { AgentConfig } from './config.js';
import { startHealthServer } from './health-server.js';
import { AgentMetrics, type AgentState } from './metrics.js';
import { startHousekeeping, type Housekeeping } from './housekeeping/housekeeping.js';
import { claimRoom } from './claim-room.js';
import { JobSupervisor, type StopReason } from './job-supervisor.js';
import { shutDown } from './shutdown.js';
import { LeaseKeeper } from './lease-keeper.js';
import { Poller } from './poller.js';
import { createUptimeRunner } from './uptime-runner.js';
import { Readiness } from './readiness.js';
import { Reporter } from './reporter.js';
import { ServiceClient } from './service-client.js';
import { ArtifactUploader } from './artifact-uploader.js';
import { createJobLanes, laneInRedis } from './job-lanes.js';
import type { QueueRedis } from './queue-redis.js';
import type { ScriptHarness } from './script-harness/script-harness.js';
import type { ScrubberFactory } from './script-harness/scrubbers.js';
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
  const needsRedis = laneInRedis('uptime', config) || laneInRedis('script', config);
  let queueRedis: QueueRedis | undefined;
  try {
    await probes.start();
    if (needsRedis) {
      // Imported here: an agent that queues nothing in Redis never loads ioredis or BullMQ.
      const { connectQueueRedis } = await import('./queue-redis.js');
      queueRedis = await connectQueueRedis(config.redisUrl, readiness, logger);
    } else {
      if (config.redisUrl) logger.info('REDIS_URL is not used: uptime jobs wait in memory (UPTIME_QUEUE=memory) and this agent runs no scripts');
      readiness.set('starting', 'connecting to the service');
    }
  } catch (error) {
    await probes.close();
    await health.close();
    throw error;
  }

  const client = new ServiceClient(config.apiUrl, config.apiKey);
  // One line when the service or Redis goes away and one when it is back, whoever noticed.
  const serviceOutage = createOutageLog({ logger, subject: 'the service', level: 'error' });
  const redisOutage = createOutageLog({ logger, subject: queueRedis?.where ?? 'Redis', level: 'error' });
  const reporter = new Reporter(client, logger, metrics, serviceOutage);
  const uploader = new ArtifactUploader(client, { metrics, agentId });
  // The uptime mode sets up no sandboxes: nothing of the script side is looked for or started.
  let scripts: ScriptHarness | undefined;
  try {
    if (config.mode === 'full') {
      const { startScriptSide } = await import('./script-side.js');
      scripts = await startScriptSide(config, client, uploader, logger, { env: options.env ?? process.env, scrubbers: options.scrubbers });
    }
  } catch (error) {
    // An isolation the operator named that cannot work here stops the agent at start: nothing it started stays.
    await queueRedis?.close();
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
    // Only when its lines are written: a child logger per job is CPU a busy uptime lane pays per check.
    const log = logger.isLevelEnabled('debug')
      ? logger.child({ jobId: job.jobId, checkId: job.checkId, checkSessionId: job.checkSessionId })
      : undefined;
    const stopTimer = metrics.jobDuration.startTimer({ check_type: job.checkType });
    metrics.jobsStarted.inc({ check_type: job.checkType });
    log?.debug({ checkType: job.checkType, attempt: job.attempt }, 'job started');
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
      log?.debug({ reason: signal.reason as StopReason }, 'job stopped before it finished');
      supervisor.forget(job.jobId);
      return;
    }
    supervisor.finished(job.jobId);
    const status = result.hasErrors || result.hasFailures ? 'failed' : result.isDegraded ? 'degraded' : 'passed';
    metrics.jobsFinished.inc({ check_type: job.checkType, status });
    metrics.recordResult(job, result);
    log?.debug({ status, responseTime: result.responseTime, error: result.error?.code }, 'job finished');
    // The slot frees as soon as the probe is done: posting is the reporter's
    // business (batched, retried, flushed at shutdown) and never rejects; the
    // job's lease is renewed until the service has its result.
    void reporter.report(result, log).then(() => supervisor.forget(job.jobId));
  };

  const lanes = await createJobLanes({
    agentId,
    uptimeConcurrency: config.uptimeConcurrency,
    scriptConcurrency: config.jobConcurrency,
    mode: config.mode,
    uptimeQueue: config.uptimeQueue,
    redis: queueRedis,
    logger,
    metrics,
    run: runJob,
    onQueueError: (error) => redisOutage.failed('the job queue', error),
  });
  await lanes.waitUntilReady();
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

  const redisWatch = queueRedis && new (await import('./redis-watch.js')).RedisWatch({
    redis: queueRedis.connection,
    where: queueRedis.where,
    readiness,
    outage: redisOutage,
    unusableMeans: lanes.inRedis('uptime')
      ? 'no jobs are claimed until it is back'
      : 'no script jobs are claimed until it is back; uptime probes go on',
    giveUpWaitingAfterMs: REDIS_PATIENCE_MS,
    onGiveUpWaiting: () => {
      const inQueues = supervisor.jobsIn('waiting').filter((job) => lanes.inRedis(laneOfJob(job)));
      const waiting = supervisor.takeWaiting(inQueues.map((job) => job.jobId));
      if (waiting.length === 0) return;
      void lanes.forget(waiting);
      logger.warn({ jobs: waiting.length }, `releasing ${waiting.length} claimed jobs: Redis has been away for ${REDIS_PATIENCE_MS / 1000} s`);
      void release(waiting, 'the agent\'s Redis is unavailable');
    },
    onBack: async () => {
      const restored = await lanes.reconcile(supervisor.jobsIn('waiting'));
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
      void lanes.forget(dropped);
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
    // their queue; script jobs only for a slot that is free. Nothing is claimed
    // for a lane whose queue is in a Redis that cannot take it.
    freeCapacity: () => {
      const usable = (lane: Lane) => !lanes.inRedis(lane) || (redisWatch?.usable ?? false);
      return {
        uptime: usable('uptime') ? claimRoom(supervisor.counts('uptime').held, config.uptimeConcurrency, config.uptimePrefetch) : 0,
        script: usable('script') ? claimRoom(supervisor.counts('script').held, scriptCapacity, 0) : 0,
      };
    },
    capacityFreed: (signal) => supervisor.freed(signal),
    onHello: async (answer) => {
      leaseMs = answer.leaseSeconds * 1000;
    },
    accept: async (jobs) => {
      supervisor.claimed(jobs);
      await lanes.add(jobs);
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
          pauseLanes: () => lanes.pause(),
          forget: (jobs) => lanes.forget(jobs),
          goodbye: (running, reason, signal) => client.goodbye(agentId, running, reason, signal),
          flushResults: (ms) => reporter.flush(ms),
          leaseSeconds: () => leaseMs / 1000,
        },
        [
          { close: () => redisWatch?.stop(), withinMs: 1000 },
          { close: () => leases.stop(), withinMs: 2000 },
          { close: () => housekeeping.stop(), withinMs: 2000 },
          { close: () => scripts?.stop(), withinMs: 5000 },
          { close: () => probes.close(), withinMs: 2000 },
          { close: () => lanes.close(), withinMs: 2000 },
          { close: () => queueRedis?.close(), withinMs: 3000 },
          { close: () => client.close(), withinMs: 1000 },
          { close: () => health.close(), withinMs: 2000 },
        ],
      );
      logger.info('agent stopped');
      await errors.close(2000);
    })());

  return { agentId, healthPort: health.port, readiness, metrics, housekeeping, stop };
}
