import type { Job, Result } from '../../protocol/agent-api.js';
import type { CheckType } from '../../protocol/enums.js';
import type { ProbeOptions } from '../probes/registry.js';

/** What a probe thread is started with. */
export interface ProbeThreadData {
  agentId: string;
  probes: ProbeOptions;
}

/**
 * Main thread → probe thread. Jobs and results cross in batches, one message
 * per event-loop turn: a claim starts dozens of jobs in one turn, and each
 * message is a structured clone and a wake-up of the other thread.
 */
export type ToProbeThread =
  | { type: 'run'; jobs: { id: number; job: Job }[] }
  /** The job was cancelled, its lease lost or the agent is stopping hard. */
  | { type: 'cancel'; id: number };

/** Probe thread → main thread. */
export type FromProbeThread =
  | { type: 'ready'; checkTypes: CheckType[] }
  | { type: 'results'; results: { id: number; result: Result }[] };
