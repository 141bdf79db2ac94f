import type { AssertionResult } from '../../protocol/assertion.js';
import type { ResultError, Timings } from '../../protocol/agent-api.js';
import type { CheckType } from '../../protocol/enums.js';
import type { DestinationPolicy } from '../../net-policy/index.js';

export interface ProbeContext {
  /** Aborted when the job is cancelled or the agent shuts down hard. */
  signal: AbortSignal;
  /** Hard ceiling for the whole run, in milliseconds; a probe never runs past it. */
  timeoutMs: number;
  /** The job's variables: API checks fill `{{VAR}}` placeholders from them and scrub the secret ones from their result. */
  environmentVariables?: readonly { key: string; value: string; secret: boolean }[];
  /** The location's destination policy: the probe connects to no address it denies. Undefined: anywhere. */
  destinations?: DestinationPolicy;
}

/** What one probe run found: the check-type-independent part of a Result. */
export interface ProbeOutcome {
  responseTime: number;
  /** The check ran, and what it found is wrong: an assertion failed or a hard threshold was crossed. */
  hasFailures: boolean;
  /** The check could not be carried out: name resolution, connection, TLS, timeout… */
  hasErrors: boolean;
  isDegraded: boolean;
  error: ResultError | null;
  timings: Timings | null;
  statusCode: number | null;
  assertions: AssertionResult[];
  details: Record<string, unknown>;
}

/**
 * One check type. Settings are validated once, before anything runs, so a bad
 * job fails with INVALID_SETTINGS instead of half-running.
 */
export interface Probe<Settings> {
  readonly checkType: CheckType;
  parseSettings(raw: unknown): Settings;
  run(settings: Settings, context: ProbeContext): Promise<ProbeOutcome>;
}

/** A run that could not be carried out: failed and errored, nothing judged, what was measured kept. */
export function erroredOutcome(
  error: ResultError,
  responseTime: number,
  timings: Timings | null,
  details: Record<string, unknown>,
): ProbeOutcome {
  return {
    responseTime,
    hasFailures: true,
    hasErrors: true,
    isDegraded: false,
    error,
    timings,
    statusCode: null,
    assertions: [],
    details,
  };
}
