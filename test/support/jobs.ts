import { randomUUID } from 'node:crypto';
import type { Job } from '../../src/protocol/agent-api.js';

/** A claimed URL job with fresh ids, for tests of what the agent does with jobs rather than of the probe. */
export function urlJob(overrides: Partial<Job> = {}): Job {
  return {
    jobId: randomUUID(),
    checkSessionId: randomUUID(),
    checkId: randomUUID(),
    checkType: 'URL',
    name: 'a check',
    runLocation: 'office',
    runSource: 'SCHEDULER',
    attempt: 1,
    leaseExpiresAt: new Date().toISOString(),
    timeoutSeconds: 30,
    runtimeId: null,
    environmentVariables: [],
    settings: {},
    ...overrides,
  };
}
