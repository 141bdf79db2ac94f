/**
 * Warm sandboxes: per job seat, at most one process started ahead of its
 * job, so a job does not wait for a process and its modules to start. A warm
 * sandbox runs one job and exits with it; it is never reused.
 *
 * Each warm sandbox has a confinement of its own (a fresh namespace and user
 * id), made when it starts and handed with it to the job that takes it: it
 * shares nothing with any job that ran before. A seat has an idle sandbox
 * only while no job runs on it: it is taken (or killed) when a job takes the
 * seat, and started afresh after the job has ended. A job on another runtime
 * than the idle sandbox's runs cold, and the next one started for that seat
 * is of the runtime last used.
 */
import type { Confinement } from '../isolation/isolation.js';
import type { SandboxProcess } from './sandbox-process.js';

export interface WarmSandbox {
  runtimeId: string;
  process: SandboxProcess;
  /** The directory the sandbox was started in, waiting for its job's files. */
  root: string;
  remove(): Promise<void>;
  startedAt: number;
  /** Its own confinement, which the job that takes it adopts. */
  confinement: Confinement;
}

export type WarmLauncher<R> = (runtime: R) => Promise<WarmSandbox>;

export interface WarmPoolOptions {
  /** Older than this, an idle sandbox is replaced: it should not sit for hours on what it loaded. */
  maxAgeMs: number;
  onError?(error: unknown): void;
}

interface Idle<R> {
  sandbox: WarmSandbox;
  runtime: R;
  timer: NodeJS.Timeout;
}

const RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 60_000;
const EXIT_WAIT_MS = 5000;

export class WarmPool<R extends { id: string }> {
  readonly #idle = new Map<number, Idle<R>>();
  /** Seats a job runs on now: nothing is started for them until the job gives them back. */
  readonly #busy = new Set<number>();
  readonly #queues = new Map<number, Promise<unknown>>();
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Warm sandboxes in a row that died or failed to start, per seat: restarts back off. */
  readonly #failures = new Map<number, number>();
  #stopped = false;
  /** Jobs handed a warm sandbox, and jobs that found none they could use. */
  readonly stats = { warm: 0, cold: 0 };

  constructor(
    private readonly launch: WarmLauncher<R>,
    private readonly options: WarmPoolOptions,
  ) {}

  /**
   * For a job that has just taken `seat`: the seat's idle sandbox when it is
   * alive, of `runtime`, young enough and `usable`; otherwise undefined, and
   * whatever was idle for the seat is killed before the job starts.
   */
  async take(runtime: R, seat: number, usable: boolean): Promise<WarmSandbox | undefined> {
    const key = seat;
    const taken = await this.#serial(key, async () => {
      this.#busy.add(key);
      const idle = this.#idle.get(key);
      if (!idle) return undefined;
      this.#forget(key, idle);
      const fresh = Date.now() - idle.sandbox.startedAt < this.options.maxAgeMs;
      if (usable && fresh && idle.runtime.id === runtime.id && !idle.sandbox.process.hasExited()) {
        this.#failures.delete(key);
        return idle.sandbox;
      }
      await this.#discard(idle.sandbox);
      return undefined;
    });
    if (taken) this.stats.warm += 1;
    else this.stats.cold += 1;
    return taken;
  }

  /** Sandboxes started and waiting for a job. */
  get idleCount(): number {
    return this.#idle.size;
  }

  /** After the job on `seat` has ended and everything it started is gone: start the seat's next one. */
  refill(runtime: R, seat: number): void {
    const key = seat;
    void this.#serial(key, async () => {
      this.#busy.delete(key);
      await this.#start(key, runtime);
    });
  }

  /** The seat's idle sandbox once everything under way for it is done (tests, benchmarks). */
  async idleSandbox(seat: number): Promise<WarmSandbox | undefined> {
    const key = seat;
    return this.#serial(key, async () => this.#idle.get(key)?.sandbox);
  }

  /** Kills every idle sandbox and waits for starts under way; nothing is started afterwards. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    // Behind whatever is under way for each seat (a start may be half done), so nothing is left running.
    await Promise.all(
      [...new Set([...this.#idle.keys(), ...this.#queues.keys()])].map((key) =>
        this.#serial(key, async () => {
          const idle = this.#idle.get(key);
          if (!idle) return;
          this.#forget(key, idle);
          await this.#discard(idle.sandbox);
        }),
      ),
    );
  }

  async #start(key: number, runtime: R): Promise<void> {
    if (this.#stopped || this.#idle.has(key) || this.#busy.has(key)) return;
    let sandbox: WarmSandbox;
    try {
      sandbox = await this.launch(runtime);
    } catch (error) {
      this.options.onError?.(error);
      this.#restartLater(key, runtime);
      return;
    }
    if (this.#stopped) {
      await this.#discard(sandbox);
      return;
    }
    const idle: Idle<R> = { sandbox, runtime, timer: setTimeout(() => this.#replace(key, idle, false), this.options.maxAgeMs) };
    idle.timer.unref();
    this.#idle.set(key, idle);
    void sandbox.process.exited.then(() => this.#replace(key, idle, true));
  }

  /** An idle sandbox that died (or grew old) is cleared away and another started in its place. */
  #replace(key: number, idle: Idle<R>, died: boolean): void {
    void this.#serial(key, async () => {
      if (this.#idle.get(key) !== idle) return; // taken by a job meanwhile: its exit is the job's business
      this.#forget(key, idle);
      await this.#discard(idle.sandbox);
      if (died) {
        this.options.onError?.(new Error(`a warm sandbox of runtime ${idle.runtime.id} exited while idle`));
        this.#restartLater(key, idle.runtime);
      } else {
        await this.#start(key, idle.runtime);
      }
    });
  }

  #restartLater(key: number, runtime: R): void {
    if (this.#stopped) return;
    const failures = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, failures);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      void this.#serial(key, () => this.#start(key, runtime));
    }, Math.min(MAX_RESTART_DELAY_MS, RESTART_DELAY_MS * 2 ** (failures - 1)));
    timer.unref();
    this.#timers.add(timer);
  }

  #forget(key: number, idle: Idle<R>): void {
    clearTimeout(idle.timer);
    this.#idle.delete(key);
  }

  async #discard(sandbox: WarmSandbox): Promise<void> {
    await sandbox.process.kill();
    // Bounded: without isolation, a grandchild that left the group could hold its pipes open.
    await Promise.race([sandbox.process.exited, new Promise((done) => setTimeout(done, EXIT_WAIT_MS))]);
    await sandbox.confinement.release().catch((error: unknown) => this.options.onError?.(error));
    await sandbox.remove().catch((error: unknown) => this.options.onError?.(error));
  }

  /** Runs `task` after every earlier task for the same seat: a seat's sandboxes are started and killed in order. */
  #serial<T>(key: number, task: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.catch(() => undefined);
    this.#queues.set(key, settled);
    void settled.then(() => {
      if (this.#queues.get(key) === settled) this.#queues.delete(key);
    });
    return next;
  }
}
