import type { Redis } from 'ioredis';
import type { OutageLog } from '../outage-log.js';
import type { Readiness } from './readiness.js';

export interface RedisWatchOptions {
  redis: Redis;
  /** How log lines and readiness name it: "Redis at host:6379", "the embedded redis-server". */
  where: string;
  readiness: Readiness;
  outage: OutageLog;
  /** What an outage stops, for readiness: "no jobs are claimed until it is back". */
  unusableMeans: string;
  /** Redis has been away this long: jobs waiting in its queues are better run by another agent. */
  giveUpWaitingAfterMs: number;
  onGiveUpWaiting(): void;
  /** Redis is back: the queues are put right (a Redis that keeps nothing lost them) before the agent is ready again. */
  onBack(): Promise<void>;
}

/**
 * Follows the agent's Redis connection after start: while it is away the
 * agent is not ready and claims nothing, one line says so and one says when
 * it is back; the queues are reconciled before claiming resumes.
 */
export class RedisWatch {
  #usable = true;
  #lastError: unknown;
  #giveUp: NodeJS.Timeout | undefined;
  #reconciling = false;
  #stopped = false;

  constructor(private readonly options: RedisWatchOptions) {
    const { redis } = options;
    redis.on('error', (error: Error) => {
      this.#lastError = error;
      if (!this.#usable && !this.#stopped) options.outage.failed('connecting', error);
    });
    redis.on('close', () => this.#lost());
    redis.on('end', () => this.#lost());
    redis.on('ready', () => this.#back());
  }

  /** Whether jobs can be queued now. */
  get usable(): boolean {
    return this.#usable;
  }

  /** The agent is closing its connection itself: that is no outage. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#giveUp);
  }

  #lost(): void {
    if (this.#stopped) return;
    // Already away: one outage, however many times the connection closes in it.
    if (!this.#usable) return;
    this.#usable = false;
    const { where, readiness, outage } = this.options;
    const reason = this.#lastError instanceof Error ? this.#lastError.message : 'connection closed';
    readiness.setRedisProblem(`${where} is not reachable (${reason}); ${this.options.unusableMeans}`);
    outage.failed('the connection', this.#lastError ?? new Error('connection closed'));
    this.#startGiveUpTimer();
  }

  #startGiveUpTimer(): void {
    clearTimeout(this.#giveUp);
    this.#giveUp = setTimeout(() => this.options.onGiveUpWaiting(), this.options.giveUpWaitingAfterMs);
    this.#giveUp.unref();
  }

  #back(): void {
    if (this.#usable || this.#reconciling) return;
    this.#reconciling = true;
    clearTimeout(this.#giveUp);
    const { readiness, outage } = this.options;
    void (async () => {
      try {
        await this.options.onBack();
      } catch (error) {
        // Redis failed again while the queues were put right: tried again in a second, or at the next 'ready'.
        outage.failed('reconciling the job queues', error);
        this.#reconciling = false;
        this.#startGiveUpTimer();
        setTimeout(() => {
          if (this.options.redis.status === 'ready') this.#back();
        }, 1000).unref();
        return;
      }
      this.#reconciling = false;
      if (this.options.redis.status !== 'ready') return;
      this.#usable = true;
      this.#lastError = undefined;
      readiness.setRedisProblem(undefined);
      outage.recovered();
    })();
  }
}
