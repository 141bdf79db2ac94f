/**
 * A probe thread: runs uptime jobs handed over by the main thread and sends
 * back their results. Its event loop serves nothing but the probes' sockets
 * and timers, so a probe's timestamps are taken when its events happen, not
 * when the queue and the service calls of the main thread let them through.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { perTurn } from '../../per-turn.js';
import type { Result } from '../../protocol/agent-api.js';
import { executeJob } from '../execute.js';
import { ProbePacer } from '../probe-pacer.js';
import { ProbeRegistry } from '../probes/registry.js';
import type { FromProbeThread, ProbeThreadData, ToProbeThread } from './messages.js';

const port = parentPort;
if (port === null) throw new Error('probe-worker runs as a worker thread');
const { agentId, probes: options } = workerData as ProbeThreadData;
const probes = new ProbeRegistry(options);
const controllers = new Map<number, AbortController>();
const send = (message: FromProbeThread): void => port.postMessage(message);

/** Results finished in one turn go back in one message; a result's timings were taken already. */
const finished = perTurn<{ id: number; result: Result }>((results) => send({ type: 'results', results }));

const pacer = new ProbePacer();

port.on('message', (message: ToProbeThread) => {
  if (message.type === 'cancel') {
    controllers.get(message.id)?.abort();
    return;
  }
  for (const { id, job } of message.jobs) {
    const abort = new AbortController();
    controllers.set(id, abort);
    // executeJob never rejects: whatever went wrong is in the result. A job
    // cancelled while it waited runs with its signal already aborted.
    pacer.later(() => {
      void executeJob(probes, job, agentId, abort.signal).then((result) => {
        controllers.delete(id);
        finished.add({ id, result });
      });
    });
  }
});
send({ type: 'ready', checkTypes: probes.checkTypes() });
