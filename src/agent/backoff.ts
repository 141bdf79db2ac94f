/**
 * Exponential backoff with full jitter: many agents that lost the service at
 * the same moment must not come back at the same moment.
 */
export class Backoff {
  #attempt = 0;

  constructor(
    private readonly baseMs = 500,
    private readonly maxMs = 30_000,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    const ceiling = Math.min(this.maxMs, this.baseMs * 2 ** this.#attempt);
    this.#attempt = Math.min(this.#attempt + 1, 30);
    return Math.max(this.baseMs / 2, Math.round(ceiling * this.random()));
  }

  reset(): void {
    this.#attempt = 0;
  }
}

/** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * `work`'s value, or undefined once `ms` have passed. For shutdown steps that
 * must not hang on a peer that is gone (Redis killed, network cut).
 */
export async function within<T>(ms: number, work: Promise<T>): Promise<T | undefined> {
  const stop = new AbortController();
  try {
    return await Promise.race([work, sleep(ms, stop.signal).then(() => undefined)]);
  } finally {
    stop.abort();
  }
}
