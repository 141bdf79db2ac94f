import type { Job, Result } from '../protocol/agent-api.js';
import type { CheckType } from '../protocol/enums.js';
import { ProbeThreads } from './probe-threads/probe-threads.js';
import type { ProbeThreadData } from './probe-threads/messages.js';

/** Where the uptime lane's probes run. */
export interface UptimeRunner {
  start(): Promise<void>;
  /** The check types it runs, for the hello handshake; known once start() resolved. */
  checkTypes(): CheckType[];
  /** Never rejects: a failure is in the result. */
  run(job: Job, signal: AbortSignal): Promise<Result>;
  close(): Promise<void>;
}

/**
 * UPTIME_THREADS: 0 (the default): the probes run on the main thread, paced
 * one start per turn; with uptime jobs queued in memory, the main thread's
 * other work per check is small enough that its timings match a thread's,
 * without a second V8 heap (docs/performance.md). More: that many worker
 * threads of their own, for an agent whose main thread is busy with other
 * work. The probes' modules are loaded only where the probes run.
 */
export async function createUptimeRunner(
  threads: number,
  data: ProbeThreadData,
  onThreadLost: (error: Error) => void,
): Promise<UptimeRunner> {
  if (threads > 0) return new ProbeThreads(threads, data, onThreadLost);
  const { InProcessProbes } = await import('./in-process-probes.js');
  return new InProcessProbes(data);
}
