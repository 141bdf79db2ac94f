import { KeyRefusedError, ProtocolError, ServiceUnreachableError, errorCode } from '../errors/index.js';
import type { Logger } from '../logging.js';
import type { OutageLog } from '../outage-log.js';
import { MAX_RESULTS_PER_BATCH, type Result } from '../protocol/agent-api.js';
import { Backoff, sleep } from './backoff.js';
import type { AgentMetrics } from './metrics.js';
import type { ServiceClient } from './service-client.js';

/** How long a result is retried before it is given up; the service times the job out by then anyway. */
const GIVE_UP_MS = 10 * 60_000;
/**
 * How long a result waits for others to share its call. Each call is an HTTP
 * request and a transaction on the service: at a thousand checks a second,
 * 50 ms makes batches of about fifty instead of ten, and a result is still
 * recorded well within the second it was taken.
 */
const BATCH_WINDOW_MS = 50;

interface Pending {
  result: Result;
  done: () => void;
  /** The job's logger, when it has one: lines about this result carry its job, check and session ids. */
  log: Logger | undefined;
}

/**
 * Posts results, many to a call, and keeps trying through outages: a result
 * is never lost because the service blinked. Recording is idempotent on the
 * service, so a batch sent twice records each result once.
 */
export class Reporter {
  #queue: Pending[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #sending = new Set<Promise<void>>();
  readonly #stop = new AbortController();

  constructor(
    private readonly client: ServiceClient,
    private readonly logger: Logger,
    private readonly metrics: AgentMetrics,
    /** The service's outages: a failed post is counted there, not logged batch by batch. */
    private readonly outage: OutageLog,
  ) {}

  /**
   * Resolves once the result is recorded or given up; never rejects. `log`:
   * the job's own logger, so what is said about its result carries its ids.
   */
  report(result: Result, log?: Logger): Promise<void> {
    return new Promise((done) => {
      this.#queue.push({ result, done, log });
      if (this.#queue.length >= MAX_RESULTS_PER_BATCH) this.#send();
      else this.#timer ??= setTimeout(() => this.#send(), BATCH_WINDOW_MS);
    });
  }

  /** Sends what waits, lets outstanding calls finish up to `ms`, then stops retrying them. */
  async flush(ms: number): Promise<void> {
    while (this.#queue.length > 0) this.#send();
    await Promise.race([Promise.all(this.#sending), sleep(ms, this.#stop.signal)]);
    this.#stop.abort();
    await Promise.all(this.#sending);
  }

  #send(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#queue.splice(0, MAX_RESULTS_PER_BATCH);
    if (this.#queue.length > 0) this.#timer = setTimeout(() => this.#send(), 0);
    if (batch.length === 0) return;
    const task = this.#deliver(batch).finally(() => {
      this.#sending.delete(task);
      for (const pending of batch) pending.done();
    });
    this.#sending.add(task);
  }

  async #deliver(batch: Pending[]): Promise<void> {
    const backoff = new Backoff(250, 15_000);
    const deadline = Date.now() + GIVE_UP_MS;
    for (;;) {
      try {
        // Aborted at the end of a flush: a hung service must not hold up a shutdown.
        const answer = await this.client.postResults(batch.map((pending) => pending.result), this.#stop.signal);
        this.outage.recovered();
        answer.outcomes.forEach((item, index) => this.#settled(batch[index]!, item.outcome, item.message));
        return;
      } catch (error) {
        const code = errorCode(error) ?? 'UNKNOWN';
        const jobIds = batch.map((pending) => pending.result.jobId);
        this.metrics.resultsFailed.inc({ code }, batch.length);
        if (error instanceof ProtocolError) {
          this.logger.error({ code, jobIds }, `results refused by the service: ${error.message}`);
          return;
        }
        if (Date.now() > deadline || this.#stop.signal.aborted) {
          this.logger.error({ code, jobIds }, 'giving up on results after retrying; the service will time the jobs out');
          return;
        }
        if (error instanceof ServiceUnreachableError) this.outage.failed('posting results', error);
        else {
          const level = error instanceof KeyRefusedError ? 'error' : 'warn';
          this.logger[level]({ code, jobIds }, `posting results failed, retrying: ${(error as Error).message}`);
        }
        await sleep(backoff.next(), this.#stop.signal);
      }
    }
  }

  #settled({ result, log: jobLog }: Pending, outcome: string, message: string | undefined): void {
    if (outcome === 'recorded' || outcome === 'duplicate') {
      this.metrics.resultsPosted.inc();
      return;
    }
    // Made only for what is said: a child logger per result is CPU that a busy agent spends per check.
    const log = jobLog ?? this.logger.child({ jobId: result.jobId, checkId: result.checkId });
    switch (outcome) {
      case 'conflict':
        log.warn(`result not recorded: ${message ?? 'the job is no longer this agent\'s'}`);
        return;
      default:
        log.warn('result not recorded: the service no longer knows the job');
    }
  }
}
