/**
 * A stored result as the public `checkly` CLI reads one from its MQTT topic
 * (`…/result`): the flags its reporters count, the timings they print, and
 * for failures what they show: the request and response of HTTP checks with
 * their assertions, the log lines of scripts, the error of a run that broke.
 * Everything comes inline, so the CLI never fetches assets.
 */
import type { ResultRow } from '../store/sessions.js';

const HTTP_TYPES = new Set(['API', 'URL']);
const SCRIPT_TYPES = new Set(['MULTI_STEP', 'BROWSER', 'PLAYWRIGHT']);

interface CliLogLine {
  time: number;
  level: string;
  msg: string;
}

interface StoredAssertion {
  source?: unknown;
  property?: unknown;
  comparison?: unknown;
  target?: unknown;
  actual?: unknown;
  passed?: unknown;
}

type Json = Record<string, unknown>;

function logLines(logs: readonly unknown[]): CliLogLine[] {
  return logs.flatMap((line) => {
    if (typeof line !== 'object' || line === null) return [];
    const { time, level, message } = line as { time?: unknown; level?: unknown; message?: unknown };
    const millis = typeof time === 'number' ? time : Date.parse(String(time));
    return [
      {
        time: Number.isFinite(millis) ? millis : 0,
        level: typeof level === 'string' ? level.toUpperCase() : 'INFO',
        msg: typeof message === 'string' ? message : String(message),
      },
    ];
  });
}

/** The CLI marks a failed assertion by an `error`; its text is not shown, the line turns red. */
function assertions(stored: readonly unknown[]): Json[] {
  return (stored as StoredAssertion[]).map((assertion) => ({
    source: assertion.source,
    property: assertion.property ?? '',
    comparison: assertion.comparison,
    target: assertion.target ?? '',
    regex: null,
    actual: assertion.actual ?? null,
    ...(assertion.passed === false ? { error: 'assertion failed' } : {}),
  }));
}

function errorText(result: ResultRow): string | undefined {
  return result.error ? `${result.error.code}: ${result.error.message}` : undefined;
}

function httpRunData(result: ResultRow): Json {
  const details = result.details;
  const request = details.request as Json | undefined;
  const response = details.response as Json | null | undefined;
  const statusCode = result.status_code;
  // A request that never got an answer has nothing else to show.
  if (!response && statusCode === null && result.error) return { requestError: errorText(result) };
  return {
    ...(request
      ? { request: { method: request.method, url: request.url, headers: request.headers ?? {}, data: request.body ?? '' } }
      : { request: { method: 'GET', url: details.finalUrl ?? '', headers: {} } }),
    ...(response
      ? { response: { status: response.status, statusText: response.statusText ?? '', headers: response.headers ?? {}, body: response.body ?? '' } }
      : statusCode === null
        ? {}
        : { response: { status: statusCode, statusText: '', headers: {} } }),
    assertions: assertions(result.assertions),
  };
}

/** `result` of the CLI's message for one stored result. */
export function cliResult(result: ResultRow): Json {
  const common: Json = {
    id: result.id,
    name: result.name,
    checkType: result.check_type,
    runLocation: result.run_location,
    hasErrors: result.has_errors,
    hasFailures: result.has_failures,
    isDegraded: result.is_degraded,
    isCancelled: result.is_cancelled,
    aborted: result.aborted,
    responseTime: result.response_time,
    startedAt: result.started_at?.toISOString() ?? null,
    stoppedAt: result.stopped_at?.toISOString() ?? null,
    resultType: result.result_type,
    attempts: result.attempt,
  };
  if (HTTP_TYPES.has(result.check_type)) {
    return { ...common, checkRunData: httpRunData(result), logs: { setup: [], request: logLines(result.logs), teardown: [] } };
  }
  if (SCRIPT_TYPES.has(result.check_type)) {
    const runError = errorText(result);
    return { ...common, logs: logLines(result.logs), ...(runError ? { runError } : {}) };
  }
  const requestError = result.error && result.has_errors ? errorText(result) : undefined;
  return {
    ...common,
    checkRunData: { ...(requestError ? { requestError } : {}), assertions: assertions(result.assertions) },
    logs: logLines(result.logs),
  };
}
