import type { CheckType } from '../protocol/enums.js';
import type { CheckDefinition } from './store/checks.js';

export interface JobSpec {
  /** Exactly what the agent's probe or runner needs; nothing of the account. */
  settings: Record<string, unknown>;
  timeoutSeconds: number;
  runtimeId: string | null;
}

type JobSpecBuilder = (definition: CheckDefinition) => JobSpec;

const url: JobSpecBuilder = (definition) => {
  const maxResponseTime = Number(definition.maxResponseTime ?? 5000);
  return {
    settings: {
      request: definition.request,
      degradedResponseTime: definition.degradedResponseTime,
      maxResponseTime,
      shouldFail: definition.shouldFail ?? false,
    },
    // The probe stops at maxResponseTime plus a margin to tell "slow" from "hung".
    timeoutSeconds: Math.ceil(maxResponseTime / 1000) + 5,
    runtimeId: null,
  };
};

/** One builder per check type the service can schedule. */
export const jobSpecBuilders: Partial<Record<CheckType, JobSpecBuilder>> = { URL: url };
