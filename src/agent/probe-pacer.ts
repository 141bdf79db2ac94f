/**
 * Starts probes one per turn of the event loop. Jobs arrive in bursts (a
 * claim hands over dozens at once); started all in one go, each probe's
 * connect and response would wait behind the set-up of all the others and be
 * timed that much too long. Started one per turn, the I/O of those already
 * running is seen between starts.
 */
export class ProbePacer {
  /** Never more than a lane's prefetch and concurrency: shift() on it is cheap. */
  readonly #waiting: (() => void)[] = [];
  #scheduled = false;

  /** `start` runs in a later turn, after those handed over before it. */
  later(start: () => void): void {
    this.#waiting.push(start);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#startNext());
  }

  #startNext(): void {
    this.#scheduled = false;
    const start = this.#waiting.shift();
    if (start === undefined) return;
    if (this.#waiting.length > 0) this.#schedule();
    start();
  }
}
