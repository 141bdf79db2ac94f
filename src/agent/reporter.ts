import { ConflictError, KeyRefusedError, ProtocolError, errorCode } from '../errors/index.js';
import type { Logger } from '../logging.js';
import type { Result } from '../protocol/agent-api.js';
import { Backoff, sleep } from './backoff.js';
import type { AgentMetrics } from './metrics.js';
import type { ServiceClient } from './service-client.js';

/** How long a result is retried before it is given up; the service times the job out by then anyway. */
const GIVE_UP_MS = 10 * 60_000;

/**
 * Posts results and keeps trying through outages: a result is never lost
 * because the service blinked. The service makes posting idempotent.
 */
export class Reporter {
  readonly #pending = new Set<Promise<void>>();
  readonly #stop = new AbortController();

  constructor(
    private readonly client: ServiceClient,
    private readonly logger: Logger,
    private readonly metrics: AgentMetrics,
  ) {}

  /** Resolves once the result is recorded or given up; never rejects. */
  report(result: Result): Promise<void> {
    const task = this.#deliver(result).finally(() => this.#pending.delete(task));
    this.#pending.add(task);
    return task;
  }

  /** Waits for outstanding posts up to `ms`, then stops retrying them. */
  async flush(ms: number): Promise<void> {
    const timer = sleep(ms, this.#stop.signal);
    await Promise.race([Promise.all(this.#pending), timer]);
    this.#stop.abort();
  }

  async #deliver(result: Result): Promise<void> {
    const log = this.logger.child({ jobId: result.jobId, checkId: result.checkId });
    const backoff = new Backoff(250, 15_000);
    const deadline = Date.now() + GIVE_UP_MS;
    for (;;) {
      try {
        await this.client.postResult(result);
        this.metrics.resultsPosted.inc();
        return;
      } catch (error) {
        const code = errorCode(error) ?? 'UNKNOWN';
        this.metrics.resultsFailed.inc({ code });
        if (error instanceof ConflictError) {
          log.warn({ code }, `result not recorded: ${error.message}`);
          return;
        }
        if (error instanceof ProtocolError) {
          log.error({ code }, `result refused by the service: ${error.message}`);
          return;
        }
        if (Date.now() > deadline || this.#stop.signal.aborted) {
          log.error({ code }, 'giving up on a result after retrying; the service will time the job out');
          return;
        }
        const level = error instanceof KeyRefusedError ? 'error' : 'warn';
        log[level]({ code }, `posting the result failed, retrying: ${(error as Error).message}`);
        await sleep(backoff.next(), this.#stop.signal);
      }
    }
  }
}
