/**
 * What a check result carries beyond the record of result-records.ts for the
 * checkly CLI (`checks get --result`, `--include-attempts`): the retry
 * sequence it belongs to and, for API checks, the exchange in the comparable
 * product's apiCheckResult shape, read from what the agent reported.
 */
import Type from 'typebox';
import type { ResultWithArtifactsRow } from './store/check-results.js';

const Nullable = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ChecklyResultFields = {
  sequenceId: Type.String({
    description: "One location's run in a session with its retries: the ATTEMPT results and the FINAL one share it",
  }),
  apiCheckResult: Type.Optional(
    Type.Object(
      {
        request: Type.Record(Type.String(), Type.Unknown()),
        response: Type.Record(Type.String(), Type.Unknown()),
        assertions: Type.Array(Type.Unknown()),
        requestError: Nullable(Type.String()),
      },
      { description: 'API checks: the request sent and the response read, as the agent reported them' },
    ),
  ),
};

interface ExchangeDetails {
  request?: { method?: unknown; url?: unknown; headers?: unknown; body?: unknown };
  response?: { status?: unknown; statusText?: unknown; headers?: unknown; body?: unknown } | null;
}

interface AssertionLike {
  source?: unknown;
  property?: unknown;
  comparison?: unknown;
  target?: unknown;
}

function apiCheckResult(row: ResultWithArtifactsRow) {
  const details = row.details as ExchangeDetails;
  if (row.check_type !== 'API' || !details.request) return undefined;
  const response = details.response ?? null;
  const timings = row.timings ?? {};
  return {
    request: {
      method: details.request.method,
      url: details.request.url,
      headers: details.request.headers ?? {},
      data: details.request.body ?? '',
    },
    // No response (the request failed): the status is null and the error says why.
    response: {
      status: response?.status ?? row.status_code,
      statusText: response?.statusText ?? '',
      headers: response?.headers ?? {},
      body: response?.body ?? '',
      timingPhases: {
        wait: timings.wait ?? null,
        dns: timings.dns ?? null,
        tcp: timings.tcp ?? null,
        tls: timings.tls ?? null,
        firstByte: timings.firstByte ?? null,
        download: timings.download ?? null,
        total: timings.total ?? row.response_time,
      },
    },
    assertions: (row.assertions as AssertionLike[]).map(({ source, property, comparison, target }) => ({ source, property, comparison, target })),
    requestError: row.error?.message ?? null,
  };
}

export function checklyResultFields(row: ResultWithArtifactsRow) {
  const api = apiCheckResult(row);
  return {
    sequenceId: `${row.session_id}:${row.run_location}`,
    ...(api ? { apiCheckResult: api } : {}),
  };
}
