/**
 * A probe thread: runs uptime jobs handed over by the main thread and sends
 * back their results. Its event loop serves nothing but the probes' sockets
 * and timers, so a probe's timestamps are taken when its events happen, not
 * when the queue and the service calls of the main thread let them through.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Job } from '../../protocol/agent-api.js';
import { executeJob } from '../execute.js';
import { ProbeRegistry } from '../probes/registry.js';
import type { FromProbeThread, ProbeThreadData, ToProbeThread } from './messages.js';

const port = parentPort;
if (port === null) throw new Error('probe-worker runs as a worker thread');
const { agentId, probes: options } = workerData as ProbeThreadData;
const probes = new ProbeRegistry(options);
const controllers = new Map<number, AbortController>();
const send = (message: FromProbeThread): void => port.postMessage(message);

/**
 * Jobs arrive in bursts (a claim hands over dozens at once). Started all in
 * one go, each probe's connect and response would wait behind the set-up of
 * all the others, and be timed that much too long; started one per turn of
 * the event loop, the I/O of those already running is seen between starts.
 */
const waiting: { id: number; job: Job; abort: AbortController }[] = [];
let scheduled = false;

function startNext(): void {
  scheduled = false;
  const next = waiting.shift();
  if (next === undefined) return;
  if (waiting.length > 0) schedule();
  // executeJob never rejects: whatever went wrong is in the result. A job
  // cancelled while it waited runs with its signal already aborted.
  void executeJob(probes, next.job, agentId, next.abort.signal).then((result) => {
    controllers.delete(next.id);
    send({ type: 'result', id: next.id, result });
  });
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(startNext);
}

port.on('message', (message: ToProbeThread) => {
  if (message.type === 'cancel') {
    controllers.get(message.id)?.abort();
    return;
  }
  const abort = new AbortController();
  controllers.set(message.id, abort);
  waiting.push({ id: message.id, job: message.job, abort });
  schedule();
});
send({ type: 'ready', checkTypes: probes.checkTypes() });
