import type { Job, Result } from '../../protocol/agent-api.js';
import type { CheckType } from '../../protocol/enums.js';
import type { ProbeOptions } from '../probes/registry.js';

/** What a probe thread is started with. */
export interface ProbeThreadData {
  agentId: string;
  probes: ProbeOptions;
}

/** Main thread → probe thread. */
export type ToProbeThread =
  | { type: 'run'; id: number; job: Job }
  /** The job was cancelled, its lease lost or the agent is stopping hard. */
  | { type: 'cancel'; id: number };

/** Probe thread → main thread. */
export type FromProbeThread = { type: 'ready'; checkTypes: CheckType[] } | { type: 'result'; id: number; result: Result };
