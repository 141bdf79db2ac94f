/**
 * The uptime lane's probes run on worker threads. The main thread keeps the
 * queue, the claims and the result posting; a probe thread's event loop
 * serves only probes, so the moment a response arrives is seen when it
 * arrives. Measured in bench/uptime: see docs/performance.md.
 */
import { Worker } from 'node:worker_threads';
import { ProbeThreadError } from '../../errors/index.js';
import { perTurn, type PerTurn } from '../../per-turn.js';
import type { Job, Result } from '../../protocol/agent-api.js';
import type { CheckType } from '../../protocol/enums.js';
import { erroredOutcome } from '../probes/probe.js';
import { resultOf } from '../execute.js';
import type { UptimeRunner } from '../uptime-runner.js';
import type { FromProbeThread, ProbeThreadData, ToProbeThread } from './messages.js';

interface Pending {
  job: Job;
  startedAt: Date;
  settle(result: Result): void;
}

interface ProbeThread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Jobs handed over this turn, posted together at its end. */
  outbox: PerTurn<{ id: number; job: Job }>;
  ready: Promise<void>;
  /** False once the thread has exited: it takes no more jobs. */
  alive: boolean;
}

export class ProbeThreads implements UptimeRunner {
  readonly #threads: ProbeThread[] = [];
  readonly #count: number;
  readonly #data: ProbeThreadData;
  readonly #onThreadLost: (error: Error) => void;
  readonly #entry: URL | undefined;
  #nextId = 1;
  #closing = false;
  #checkTypes: CheckType[] = [];

  /**
   * `onThreadLost`: a thread stopped unasked; its jobs got errored results and
   * a new thread took its place. `entry`: another thread script speaking the
   * same messages (the tests' failing threads); the probe worker by default.
   */
  constructor(count: number, data: ProbeThreadData, onThreadLost: (error: Error) => void, entry?: URL) {
    this.#count = count;
    this.#data = data;
    this.#onThreadLost = onThreadLost;
    this.#entry = entry;
  }

  /** Resolves when every thread has loaded the probes. */
  async start(): Promise<void> {
    for (let index = 0; index < this.#count; index += 1) this.#threads.push(this.#spawn(index));
    await Promise.all(this.#threads.map((thread) => thread.ready));
  }

  /** The check types the threads' probes run, for the hello handshake; known once start() resolved. */
  checkTypes(): CheckType[] {
    return [...this.#checkTypes];
  }

  /** Runs one uptime job on the least busy thread. Never rejects: a failure is in the result. */
  run(job: Job, signal: AbortSignal): Promise<Result> {
    const alive = this.#threads.filter((candidate) => candidate.alive);
    if (alive.length === 0) {
      const error = new ProbeThreadError('No probe thread is running: the last one stopped and its replacement could not start');
      return Promise.resolve(lostResult(job, this.#data.agentId, new Date(), error));
    }
    const thread = alive.reduce((best, candidate) => (candidate.pending.size < best.pending.size ? candidate : best));
    const id = this.#nextId++;
    return new Promise<Result>((resolve) => {
      const onAbort = (): void => {
        // The run goes first, so the thread knows the job it is told to cancel.
        thread.outbox.flush();
        this.#post(thread, { type: 'cancel', id });
      };
      thread.pending.set(id, {
        job,
        startedAt: new Date(),
        settle: (result) => {
          signal.removeEventListener('abort', onAbort);
          resolve(result);
        },
      });
      thread.outbox.add({ id, job });
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all(this.#threads.map((thread) => thread.worker.terminate()));
  }

  #post(thread: ProbeThread, message: ToProbeThread): void {
    thread.worker.postMessage(message);
  }

  #spawn(index: number): ProbeThread {
    const worker = this.#entry ? new Worker(this.#entry, { workerData: this.#data }) : startProbeWorker(this.#data);
    const pending = new Map<number, Pending>();
    let lastError: Error | undefined;
    let started = false;
    let markReady: () => void = () => undefined;
    let failStart: (error: Error) => void = () => undefined;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failStart = reject;
    });
    // start() awaits the first threads' ready; a replacement's failure to load is reported by run().
    ready.catch(() => undefined);
    const thread: ProbeThread = {
      worker,
      pending,
      // A thread that has exited takes none: their jobs were answered with lost results.
      outbox: perTurn((jobs) => {
        if (thread.alive) this.#post(thread, { type: 'run', jobs });
      }),
      ready,
      alive: true,
    };
    worker.on('message', (message: FromProbeThread) => {
      if (message.type === 'ready') {
        started = true;
        this.#checkTypes = message.checkTypes;
        markReady();
        return;
      }
      for (const { id, result } of message.results) {
        const waiting = pending.get(id);
        pending.delete(id);
        waiting?.settle(result);
      }
    });
    worker.on('error', (error) => {
      lastError = error;
    });
    worker.on('exit', (exitCode) => {
      thread.alive = false;
      const error = new ProbeThreadError(
        `The probe thread stopped (exit code ${exitCode}${lastError ? `: ${lastError.message}` : ''}) before the job finished`,
      );
      failStart(error);
      for (const waiting of pending.values()) waiting.settle(lostResult(waiting.job, this.#data.agentId, waiting.startedAt, error));
      pending.clear();
      // A thread that never loaded would fail the same way again: start() reports it instead.
      if (this.#closing || !started) return;
      this.#threads[index] = this.#spawn(index);
      this.#onThreadLost(error);
    });
    return thread;
  }
}

function lostResult(job: Job, agentId: string, startedAt: Date, error: ProbeThreadError): Result {
  const outcome = erroredOutcome(error.toJSON(), Date.now() - startedAt.getTime(), null, {});
  return resultOf(job, agentId, startedAt, outcome, false);
}

function startProbeWorker(data: ProbeThreadData): Worker {
  if (import.meta.url.endsWith('.ts')) {
    // Running from source (the tests, tsx): the thread compiles TypeScript as
    // the main thread does. Built code never takes this branch.
    const entry = new URL('./probe-worker.ts', import.meta.url).href;
    const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
    return new Worker(boot, { eval: true, workerData: data });
  }
  return new Worker(new URL('./probe-worker.js', import.meta.url), { workerData: data });
}
