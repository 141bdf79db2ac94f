/**
 * One script kind (multi-step, Playwright suite, and those to come): what it
 * does with a job, given the harness's ScriptJob for everything every kind
 * shares. A new kind is a file and a line in runners.ts.
 */
import type { Logger } from '../../logging.js';
import type { Job, Result } from '../../protocol/agent-api.js';
import type { ScriptJob } from './script-job.js';

export interface JobRunner {
  /** Sets the kind up; false when this agent cannot run it (the reason is logged here). */
  start(logger: Logger): Promise<boolean>;
  /** Whether the job's traces need credential headers hidden too (runtimes that record them). */
  hidesSensitiveHeaders(job: Job): boolean;
  /** Runs the job through `script`; may throw: the harness turns that into the job's errored result. */
  run(script: ScriptJob): Promise<Result>;
  /** Once no job of the kind runs any more. */
  stop?(): Promise<void>;
  /** Warm sandboxes waiting for a job now. */
  idleSandboxes?(): number;
  /** For the hello: the runtimes this kind offers, when it is the kind that has them. */
  runtimes?(): string[];
}
