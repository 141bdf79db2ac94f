import { errorCode } from '../errors/index.js';
import type { Job, Result } from '../protocol/agent-api.js';
import { jobDestinationPolicy } from './probes/destination-guard.js';
import { erroredOutcome, type ProbeOutcome } from './probes/probe.js';
import type { ProbeRegistry } from './probes/registry.js';
import { resultFrame } from './result-frame.js';

/**
 * Runs one uptime job and turns whatever happened into a Result. Never
 * throws: a bad job is a failed check, not a crashed worker.
 */
export async function executeJob(
  probes: ProbeRegistry,
  job: Job,
  agentId: string,
  signal: AbortSignal,
): Promise<Result> {
  const startedAt = new Date();
  const started = performance.now();
  let outcome: ProbeOutcome;
  try {
    const probe = probes.probeFor(job.checkType);
    const settings = probe.parseSettings(job.settings);
    outcome = await probe.run(settings, {
      signal,
      timeoutMs: job.timeoutSeconds * 1000,
      environmentVariables: job.environmentVariables,
      destinations: jobDestinationPolicy(job),
    });
  } catch (error) {
    outcome = failedOutcome(error, performance.now() - started);
  }
  if (job.settings.shouldFail === true) outcome = invertOutcome(outcome);
  return resultOf(job, agentId, startedAt, outcome, signal.aborted);
}

/** The Result of an uptime run that started at `startedAt` and ends now with `outcome`. */
export function resultOf(job: Job, agentId: string, startedAt: Date, outcome: ProbeOutcome, aborted: boolean): Result {
  return {
    ...resultFrame(job, agentId, startedAt),
    stoppedAt: new Date().toISOString(),
    responseTime: outcome.responseTime,
    hasErrors: outcome.hasErrors,
    hasFailures: outcome.hasFailures,
    isDegraded: outcome.isDegraded,
    aborted,
    isCancelled: false,
    error: outcome.error,
    timings: outcome.timings,
    statusCode: outcome.statusCode,
    assertions: outcome.assertions,
    details: outcome.details,
  };
}

function failedOutcome(error: unknown, elapsed: number): ProbeOutcome {
  const message = error instanceof Error ? error.message : String(error);
  return erroredOutcome({ code: errorCode(error) ?? 'INTERNAL', message }, elapsed, null, {});
}

/**
 * shouldFail: a check that failed its assertions passes, and one that passed
 * fails. A check that could not run at all (an error) stays failed. API checks
 * with scripts apply it too (api-check/api-run.ts).
 */
export function invertOutcome(outcome: ProbeOutcome): ProbeOutcome {
  if (outcome.hasErrors) return outcome;
  return {
    ...outcome,
    hasFailures: !outcome.hasFailures,
    error: outcome.hasFailures
      ? null
      : { code: 'SHOULD_FAIL', message: 'The check passed, but it is set to pass only when it fails (shouldFail)' },
  };
}
