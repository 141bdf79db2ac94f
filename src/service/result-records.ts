/**
 * What the API shows of a stored result: the check-results record (the
 * comparable product's field names, plus what a location's run carries here),
 * and each artifact with its short-lived download link.
 */
import Type from 'typebox';
import { AssertionResultSchema } from '../protocol/assertion.js';
import { CheckTypeNameSchema, DateTimeSchema } from './schemas/common.js';
import type { ArtifactLinks } from './artifact-links.js';
import type { ResultWithArtifactsRow } from './store/check-results.js';

/** Where a dashboard can open a trace without downloading it first (it fetches the link itself). */
const TRACE_VIEWER = 'https://trace.playwright.dev/';
const TRACE_NAME = /trace[^/]*\.zip$/i;

export const ArtifactEntrySchema = Type.Object({
  name: Type.String(),
  contentType: Type.String(),
  size: Type.Integer(),
  uploaded: Type.Boolean(),
  error: Type.Union([Type.String(), Type.Null()]),
  /** The stored artifact's id; null when the agent could not upload it. */
  id: Type.Union([Type.String(), Type.Null()]),
  link: Type.Union([Type.String(), Type.Null()], { description: 'Signed download link; no API key needed, valid until linkExpiresAt' }),
  linkExpiresAt: Type.Union([Type.String(), Type.Null()]),
  traceViewerUrl: Type.Union([Type.String(), Type.Null()], { description: 'Playwright traces: the link opened in trace.playwright.dev' }),
}, { title: 'ArtifactEntry' });
export type ArtifactEntry = Type.Static<typeof ArtifactEntrySchema>;

interface ArtifactRefLike {
  name?: unknown;
  contentType?: unknown;
  size?: unknown;
  uploaded?: unknown;
  error?: unknown;
}

/** The result's artifacts as the agent listed them, each uploaded one with its signed link. */
export function artifactEntries(
  row: Pick<ResultWithArtifactsRow, 'artifacts' | 'artifact_ids'>,
  links: ArtifactLinks,
  baseUrl: string,
  now: Date = new Date(),
): ArtifactEntry[] {
  return (row.artifacts as ArtifactRefLike[]).map((ref) => {
    const name = typeof ref.name === 'string' ? ref.name : '';
    const id = row.artifact_ids[name] ?? null;
    const signed = id === null ? null : links.link(baseUrl, id, now);
    const trace = signed !== null && TRACE_NAME.test(name);
    return {
      name,
      contentType: typeof ref.contentType === 'string' ? ref.contentType : 'application/octet-stream',
      size: typeof ref.size === 'number' ? ref.size : 0,
      uploaded: ref.uploaded === true,
      error: typeof ref.error === 'string' ? ref.error : null,
      id,
      link: signed?.url ?? null,
      linkExpiresAt: signed?.expiresAt ?? null,
      traceViewerUrl: trace ? `${TRACE_VIEWER}?trace=${encodeURIComponent(signed.url)}` : null,
    };
  });
}

const Nullable = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Milliseconds of each phase of a run (dns, tcp, tls, firstByte, download, wait, total); null where it had none. */
export const ResultTimingsSchema = Type.Record(Type.String(), Nullable(Type.Number()), { title: 'ResultTimings' });
export const ResultErrorSchema = Type.Object({ code: Type.String(), message: Type.String() }, { title: 'ResultError' });
export const ResultAssertionSchema = Type.Object(
  {
    ...AssertionResultSchema.properties,
    // Unknown rather than the protocol's union: a result stored by an older agent must still be answered, not fail serialisation.
    actual: Type.Unknown({ description: 'What the assertion read: a string, number, boolean or null' }),
  },
  { title: 'AssertionResult' },
);
export const ResultLogLineSchema = Type.Object(
  { time: Type.String(), level: Type.String(), message: Type.String() },
  { title: 'LogLine' },
);
export const ResultDetailsSchema = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'What the check type measured: URL (redirects, finalUrl, tls), TCP (response), DNS (answers), ICMP (latency, packetLoss), MULTI_STEP (steps), PLAYWRIGHT (tests)',
});

export const CheckResultSchema = Type.Object({
  id: Type.String(),
  checkId: Type.String(),
  checkSessionId: Type.String(),
  checkResultLink: Type.String(),
  checkSessionLink: Type.String(),
  name: Type.String(),
  checkType: CheckTypeNameSchema,
  runLocation: Type.String(),
  resultType: Type.String(),
  hasFailures: Type.Boolean(),
  hasErrors: Type.Boolean(),
  isDegraded: Type.Boolean(),
  overMaxResponseTime: Type.Boolean(),
  aborted: Type.Boolean(),
  isCancelled: Type.Boolean(),
  responseTime: Nullable(Type.Number()),
  statusCode: Nullable(Type.Integer()),
  startedAt: Nullable(DateTimeSchema),
  stoppedAt: Nullable(DateTimeSchema),
  created_at: DateTimeSchema,
  attempts: Type.Integer(),
  retries: Type.Integer({ description: 'Retries of this location before this result (ATTEMPT results for each)' }),
  timings: Nullable(ResultTimingsSchema),
  error: Nullable(ResultErrorSchema),
  assertions: Type.Array(ResultAssertionSchema),
  details: ResultDetailsSchema,
  logs: Type.Array(ResultLogLineSchema),
  artifacts: Type.Array(ArtifactEntrySchema),
});
export type CheckResultRecord = Type.Static<typeof CheckResultSchema>;

/** A stored result as GET /v1/check-results answers it. */
export function checkResultRecord(
  row: ResultWithArtifactsRow,
  links: ArtifactLinks,
  baseUrl: string,
  now: Date = new Date(),
): CheckResultRecord {
  return {
    id: row.id,
    checkId: row.check_id,
    checkSessionId: row.session_id,
    checkResultLink: `${baseUrl}/v1/check-results/${row.check_id}/${row.id}`,
    checkSessionLink: `${baseUrl}/v1/check-sessions/${row.session_id}`,
    name: row.name,
    checkType: row.check_type,
    runLocation: row.run_location,
    resultType: row.result_type,
    hasFailures: row.has_failures,
    hasErrors: row.has_errors,
    isDegraded: row.is_degraded,
    overMaxResponseTime: row.error?.code === 'MAX_RESPONSE_TIME',
    aborted: row.aborted,
    isCancelled: row.is_cancelled,
    responseTime: row.response_time,
    statusCode: row.status_code,
    startedAt: row.started_at?.toISOString() ?? null,
    stoppedAt: row.stopped_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    attempts: row.attempt,
    retries: row.retries ?? 0,
    timings: row.timings,
    error: row.error,
    // Stored as the agent reported them, which the result schema validated.
    assertions: row.assertions as CheckResultRecord['assertions'],
    details: row.details,
    logs: row.logs as CheckResultRecord['logs'],
    artifacts: artifactEntries(row, links, baseUrl, now),
  };
}
