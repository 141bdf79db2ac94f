export type ReadinessState = 'starting' | 'ready' | 'key-refused' | 'service-unreachable' | 'redis-unavailable' | 'stopping';

type ServiceState = Exclude<ReadinessState, 'stopping' | 'redis-unavailable'>;

/**
 * Why the agent is or is not ready, in one place. The agent is ready when the
 * service took it and its Redis is usable; a Redis problem outranks what the
 * service said, since no job can be queued without it. Stopping is final:
 * nothing turns a draining agent ready again.
 */
export class Readiness {
  #service: ServiceState = 'starting';
  #serviceDetail = 'starting up';
  #redisProblem: string | undefined;
  #stopping = false;

  get state(): ReadinessState {
    if (this.#stopping) return 'stopping';
    if (this.#redisProblem !== undefined) return 'redis-unavailable';
    return this.#service;
  }

  get detail(): string {
    if (this.#stopping) return 'shutting down';
    return this.#redisProblem ?? this.#serviceDetail;
  }

  get ready(): boolean {
    return this.state === 'ready';
  }

  /** Whether the service took the agent; Redis aside. */
  get serviceReady(): boolean {
    return this.#service === 'ready';
  }

  /** What the service said of the agent last. */
  set(state: ServiceState, detail: string): void {
    this.#service = state;
    this.#serviceDetail = detail;
  }

  /** Redis is unusable, and why; undefined: usable again. */
  setRedisProblem(problem: string | undefined): void {
    this.#redisProblem = problem;
  }

  stopping(): void {
    this.#stopping = true;
  }
}
