import type { Job, Result } from '../protocol/agent-api.js';

/** A result for the job with nothing found yet: every runner starts from this and fills in what it measured. */
export function resultFrame(job: Job, agentId: string, startedAt: Date): Result {
  return {
    agentId,
    jobId: job.jobId,
    checkId: job.checkId,
    checkType: job.checkType,
    runLocation: job.runLocation,
    startedAt: startedAt.toISOString(),
    stoppedAt: startedAt.toISOString(),
    responseTime: 0,
    hasErrors: false,
    hasFailures: false,
    isDegraded: false,
    aborted: false,
    isCancelled: false,
    error: null,
    timings: null,
    statusCode: null,
    assertions: [],
    details: {},
    logs: [],
    artifacts: [],
  };
}
