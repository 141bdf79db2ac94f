/**
 * What both lanes share of an API check run: the request sent and timed, the
 * response judged (assertions, status, response-time thresholds, shouldFail),
 * and the result's details. The uptime lane does this alone; the script lane
 * wraps setup scripts before and teardown scripts after the request.
 */
import { performance } from 'node:perf_hooks';
import { ProbeTimeoutError } from '../../errors/index.js';
import type { DestinationPolicy } from '../../net-policy/index.js';
import type { ResultError, Timings } from '../../protocol/agent-api.js';
import { API_MAX_RESPONSE_TIME_CAP_MS, type ApiSettings } from '../../protocol/api-settings.js';
import { SCRUB_MARKER } from '../../scrub/marker.js';
import { isSensitiveHeader } from '../../scrub/sensitive-headers.js';
import { evaluateAssertions, type AssertionInput } from '../probes/assertions.js';
import { queryJsonPath } from '../probes/json-path.js';
import { budgetMs, describeRunFailure, roundMs, startRunDeadline } from '../probes/probe-failure.js';
import { erroredOutcome, type ProbeOutcome } from '../probes/probe.js';
import { withResponseTime } from '../probes/response-time-verdict.js';
import { describeExchangeFailure, sumTimings } from '../probes/http-hop.js';
import { sendRequest, type Hop } from './http-exchange.js';
import { requestUrl, type OutgoingRequest } from './request.js';

/** shouldFail, as uptime jobs apply it; the script lane applies it to the judged response. */
export { invertOutcome } from '../execute.js';

/** What of the request's body a result repeats: the check's own settings hold the rest. */
export const MAX_REQUEST_BODY_IN_RESULT = 64 * 1024;

/** The response as assertions (and teardown scripts) see it. */
export interface ApiResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: string;
  bodyTruncated: boolean;
}

export interface ApiExchangeOutcome {
  /** Undefined when no response came (name resolution, connection, TLS, timeout…): then `error` says why. */
  response?: ApiResponse;
  error?: ResultError;
  /** The target's time: the network phases without the agent's own `wait`. */
  responseTime: number;
  timings: Timings | null;
  hops: Hop[];
}

/** Sends `request` within `timeoutMs` (the job's budget); never throws. */
export async function exchangeApiRequest(
  request: OutgoingRequest,
  settings: Pick<ApiSettings['request'], 'followRedirects' | 'skipSSL' | 'ipFamily'>,
  signal: AbortSignal,
  timeoutMs: number,
  destinations: DestinationPolicy | undefined,
): Promise<ApiExchangeOutcome> {
  const startedAt = performance.now();
  const budget = budgetMs(timeoutMs, API_MAX_RESPONSE_TIME_CAP_MS);
  const deadline = startRunDeadline(
    signal,
    budget,
    () => new ProbeTimeoutError(`${request.method} ${request.url} exceeded ${budget} ms`),
  );
  const hops: Hop[] = [];
  try {
    const final = await sendRequest(request, { ...settings, signal: deadline.signal, destinations }, hops);
    const timings = sumTimings(hops, performance.now() - startedAt);
    return {
      response: {
        status: final.statusCode ?? 0,
        statusText: final.statusText,
        headers: final.headers,
        body: final.body.toString('utf8'),
        bodyTruncated: final.bodyTruncated,
      },
      responseTime: roundMs(timings.total! - (timings.wait ?? 0)),
      timings,
      hops,
    };
  } catch (error) {
    const where = `${hops.at(-1)?.method ?? request.method} ${hops.at(-1)?.url.href ?? request.url}`;
    const described = describeRunFailure(error, deadline.signals, (cause) =>
      describeExchangeFailure(where, cause),
    );
    const elapsed = performance.now() - startedAt;
    return { error: described, responseTime: roundMs(elapsed), timings: hops.length > 0 ? sumTimings(hops, elapsed) : null, hops };
  } finally {
    deadline.end();
  }
}

/** The verdict on a response: assertions, then the status (without assertions), then the thresholds. shouldFail is not applied here. */
export function judgeApiResponse(
  settings: Pick<ApiSettings, 'degradedResponseTime' | 'maxResponseTime'> & { request: { assertions: readonly AssertionInput[] } },
  request: OutgoingRequest,
  exchange: ApiExchangeOutcome,
  response: ApiResponse | undefined = exchange.response,
): ProbeOutcome {
  const details = apiDetails(request, exchange, response);
  if (response === undefined) {
    return erroredOutcome(exchange.error ?? { code: 'HTTP_FAILURE', message: 'No response' }, exchange.responseTime, exchange.timings, details);
  }
  const { responseTime } = exchange;
  let json: { value: unknown } | undefined;
  const parsedBody = (): unknown => {
    json ??= { value: parseJson(response.body) };
    return json.value;
  };
  const assertions = evaluateAssertions(settings.request.assertions, (source, property) => {
    switch (source) {
      case 'STATUS_CODE':
        return response.status;
      case 'RESPONSE_TIME':
        return responseTime;
      case 'TEXT_BODY':
        return response.body;
      case 'JSON_BODY': {
        const document = parsedBody();
        return document === undefined ? undefined : queryJsonPath(document, property);
      }
      case 'HEADERS':
        return property.trim() === '' ? response.headers : headerValue(response.headers, property);
      default:
        return undefined;
    }
  });
  let hasFailures = assertions.some((result) => !result.passed);
  let error: ResultError | null = null;
  const failedAssertion = assertions.find((result) => !result.passed);
  if (failedAssertion) {
    error = {
      code: 'ASSERTION_FAILED',
      message: `${failedAssertion.source}${failedAssertion.property ? ` ${failedAssertion.property}` : ''} ${failedAssertion.comparison} ${JSON.stringify(failedAssertion.target)} failed (actual: ${JSON.stringify(failedAssertion.actual)})`,
    };
  }
  if (assertions.length === 0 && response.status >= 400) {
    hasFailures = true;
    error = {
      code: 'HTTP_STATUS',
      message: `${request.method} ${details.finalUrl as string} answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`,
    };
  }
  return {
    responseTime,
    ...withResponseTime(responseTime, settings, { hasFailures, isDegraded: false, error }),
    hasErrors: false,
    timings: exchange.timings,
    statusCode: response.status,
    assertions,
    details,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const wanted = name.trim().toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/** Header values of credentials replaced by the marker, whoever set them. */
export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, isSensitiveHeader(name) ? SCRUB_MARKER : value]));
}

function apiDetails(request: OutgoingRequest, exchange: ApiExchangeOutcome, response: ApiResponse | undefined): Record<string, unknown> {
  const last = exchange.hops.at(-1);
  const certificate = exchange.hops.findLast((hop) => hop.phases.certificate !== null)?.phases.certificate;
  let url: string;
  try {
    url = requestUrl(request).href;
  } catch {
    url = request.url;
  }
  return {
    request: {
      method: request.method,
      url,
      headers: maskHeaders(request.headers),
      body: request.body.length > MAX_REQUEST_BODY_IN_RESULT ? request.body.slice(0, MAX_REQUEST_BODY_IN_RESULT) : request.body,
      bodyTruncated: request.body.length > MAX_REQUEST_BODY_IN_RESULT,
    },
    response:
      response === undefined
        ? null
        : {
            status: response.status,
            statusText: response.statusText,
            headers: maskHeaders(response.headers),
            body: response.body,
            bodyTruncated: response.bodyTruncated,
            bodyBytesRead: last?.bodyBytes ?? 0,
          },
    redirects: Math.max(exchange.hops.length - 1, 0),
    finalUrl: last?.url.href ?? url,
    remoteAddress: last?.phases.remoteAddress ?? null,
    httpVersion: last?.statusCode != null ? '1.1' : null,
    ...(certificate ? { tls: certificate } : {}),
  };
}
