import { ConflictError, KeyRefusedError, ServiceUnreachableError, errorCode } from '../errors/index.js';
import type { Logger } from '../logging.js';
import type { OutageLog } from '../outage-log.js';
import type { HelloRequest, HelloResponse, Job } from '../protocol/agent-api.js';
import { laneOfJob } from '../protocol/api-settings.js';
import { Backoff, sleep } from './backoff.js';
import type { AgentMetrics } from './metrics.js';
import type { Readiness } from './readiness.js';
import type { ServiceClient } from './service-client.js';

export interface PollerOptions {
  client: ServiceClient;
  hello: HelloRequest;
  readiness: Readiness;
  metrics: AgentMetrics;
  logger: Logger;
  /** The service's outages, said once each, with the heartbeat's and the reporter's failures. */
  outage: OutageLog;
  /** Jobs each lane runs at once; 0 for a lane this agent does not have. */
  capacity: { uptime: number; script: number };
  /** Jobs to claim now, per lane (claimRoom): 0 while a lane is full or its backlog is still half there. */
  freeCapacity(): { uptime: number; script: number };
  /** Resolves when capacity frees up, after a second at most, or when the signal aborts. */
  capacityFreed(signal: AbortSignal): Promise<void>;
  /** Hands claimed jobs over; the poller counts them as taken once this resolves. */
  accept(jobs: Job[]): Promise<void>;
  /** Called once after each accepted hello: the lane may start now. */
  onHello?(answer: HelloResponse): Promise<void>;
}

/** The most jobs one claim may ask for, of each lane and in all (the protocol's bound). */
const MAX_CLAIM = 100;

/**
 * Says hello, then long-polls for as many jobs as there is room for. Never
 * spins: every failure waits a jittered, growing delay.
 */
export class Poller {
  readonly #backoff = new Backoff(500, 30_000);
  #lastError: string | undefined;

  constructor(private readonly options: PollerOptions) {}

  async run(signal: AbortSignal): Promise<void> {
    const { client, hello, readiness, logger } = this.options;
    while (!signal.aborted) {
      let answer: HelloResponse;
      try {
        answer = await client.hello(hello, signal);
      } catch (error) {
        if (signal.aborted) return;
        await this.#failed(error, signal);
        continue;
      }
      this.#recovered();
      logger.info(
        { privateLocation: answer.privateLocation.slugName, leaseSeconds: answer.leaseSeconds },
        `connected to the service as an agent of private location "${answer.privateLocation.name}"`,
      );
      await this.options.onHello?.(answer);
      readiness.set('ready', `serving private location ${answer.privateLocation.slugName}`);
      await this.#claimLoop(answer, signal);
    }
  }

  async #claimLoop(answer: HelloResponse, signal: AbortSignal): Promise<void> {
    const { client, hello, metrics } = this.options;
    while (!signal.aborted) {
      const lanes = this.options.freeCapacity();
      metrics.freeCapacity.set({ lane: 'uptime' }, lanes.uptime);
      metrics.freeCapacity.set({ lane: 'script' }, lanes.script);
      const ask = { uptime: Math.min(MAX_CLAIM, lanes.uptime), script: Math.min(MAX_CLAIM, lanes.script) };
      const free = ask.uptime + ask.script;
      if (free <= 0) {
        await this.options.capacityFreed(signal);
        continue;
      }
      // A long poll holds on to the room it asked for. While a lane is full, the
      // claim does not wait at all, and the next one goes out as soon as a slot
      // frees (or a second passes), asking for that lane's jobs too.
      const aLaneIsFull = this.#aLaneIsFull(lanes);
      try {
        const { jobs } = await client.claim(
          {
            agentId: hello.agentId,
            max: Math.min(free, MAX_CLAIM),
            lanes: ask,
            waitSeconds: aLaneIsFull ? 0 : answer.maxWaitSeconds,
          },
          signal,
        );
        this.#recovered();
        if (!this.options.readiness.serviceReady) {
          this.options.readiness.set('ready', `serving private location ${answer.privateLocation.slugName}`);
        }
        if (jobs.length > 0) {
          for (const job of jobs) metrics.jobsClaimed.inc({ lane: laneOfJob(job), check_type: job.checkType });
          await this.options.accept(jobs);
        } else if (aLaneIsFull) {
          await this.options.capacityFreed(signal);
        }
      } catch (error) {
        if (signal.aborted) return;
        await this.#failed(error, signal);
        // A refused key or a service that forgot this agent both start over with hello.
        if (error instanceof KeyRefusedError || error instanceof ConflictError) return;
      }
    }
  }

  async #failed(error: unknown, signal: AbortSignal): Promise<void> {
    const { readiness, metrics, logger } = this.options;
    const code = errorCode(error) ?? 'UNKNOWN';
    const message = error instanceof Error ? error.message : String(error);
    metrics.pollErrors.inc({ code });
    if (error instanceof KeyRefusedError) {
      readiness.set('key-refused', message);
      metrics.serviceReachable.set(1);
    } else if (error instanceof ServiceUnreachableError) {
      readiness.set('service-unreachable', message);
      metrics.serviceReachable.set(0);
    }
    const delay = this.#backoff.next();
    if (error instanceof ServiceUnreachableError) {
      // An outage is one story, told when it starts and when it ends, not a line per retry.
      this.options.outage.failed('claiming jobs', error);
    } else if (message !== this.#lastError) {
      logger.error({ code }, `${message} (retrying in ${Math.round(delay / 1000)} s)`);
    } else {
      logger.debug({ code }, `${message} (retrying in ${Math.round(delay / 1000)} s)`);
    }
    this.#lastError = message;
    await sleep(delay, signal);
  }

  #aLaneIsFull(free: { uptime: number; script: number }): boolean {
    const { capacity } = this.options;
    return (capacity.uptime > 0 && free.uptime <= 0) || (capacity.script > 0 && free.script <= 0);
  }

  #recovered(): void {
    if (!this.options.outage.recovered() && this.#lastError) this.options.logger.info('the service answers again');
    this.#lastError = undefined;
    this.#backoff.reset();
    this.options.metrics.serviceReachable.set(1);
  }
}
