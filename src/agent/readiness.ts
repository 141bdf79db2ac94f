export type ReadinessState = 'starting' | 'ready' | 'key-refused' | 'service-unreachable' | 'redis-unavailable' | 'stopping';

/**
 * Why the agent is or is not ready, in one place. Stopping is final: nothing
 * turns a draining agent ready again.
 */
export class Readiness {
  #state: ReadinessState = 'starting';
  #detail = 'starting up';

  get state(): ReadinessState {
    return this.#state;
  }

  get detail(): string {
    return this.#detail;
  }

  get ready(): boolean {
    return this.#state === 'ready';
  }

  set(state: Exclude<ReadinessState, 'stopping'>, detail: string): void {
    if (this.#state === 'stopping') return;
    this.#state = state;
    this.#detail = detail;
  }

  stopping(): void {
    this.#state = 'stopping';
    this.#detail = 'shutting down';
  }
}
