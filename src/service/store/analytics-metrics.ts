/**
 * What each analytics metric is in SQL: per check type, the measured
 * quantities of one result as expressions over `r` (check_results), and the
 * aggregates taken of them. Metric names reach here only after they were
 * checked against the catalogue (analytics/metrics.ts), so no user text ever
 * reaches a query.
 */
import type { CheckType } from '../../protocol/enums.js';

const timing = (name: string) => `(r.timings->>'${name}')::float8`;

/** URL monitors: the response time and each phase of the exchange. */
const URL_COLUMNS = {
  responseTime: 'r.response_time',
  wait: timing('wait'),
  dns: timing('dns'),
  tcp: timing('tcp'),
  firstByte: timing('firstByte'),
  download: timing('download'),
};

/**
 * TCP monitors: the whole exchange, the lookup, the connect, and the data
 * exchanged after it (from the write to the last byte read; null when
 * nothing was measured).
 */
const TCP_COLUMNS = {
  total: 'r.response_time',
  dns: timing('dns'),
  connection: timing('tcp'),
  data: `(CASE WHEN r.timings->>'firstByte' IS NULL AND r.timings->>'download' IS NULL THEN NULL
              ELSE COALESCE(${timing('firstByte')}, 0) + COALESCE(${timing('download')}, 0) END)`,
};

/** DNS monitors: the time the name server took to answer (TCP connect included over TCP). */
const DNS_COLUMNS = {
  responseTime: 'r.response_time',
  total: 'r.response_time',
};

/**
 * ICMP monitors: the average round trip of a run's replies (null when none
 * came back, so a lost run does not read as a fast one) and its packet loss.
 */
const ICMP_COLUMNS = {
  latency: "(r.details->'latency'->>'avg')::float8",
  latencyAvg: "(r.details->'latency'->>'avg')::float8",
  latencyMin: "(r.details->'latency'->>'min')::float8",
  latencyMax: "(r.details->'latency'->>'max')::float8",
  packetLoss: "(r.details->>'packetLoss')::float8",
};

/**
 * The items of a list in a result's details; none when the list is missing or
 * not a list (the details are the agent's, and a bad entry must not fail a query).
 */
const detailItems = (list: string) =>
  `jsonb_array_elements(CASE WHEN jsonb_typeof(r.details->'${list}') = 'array' THEN r.details->'${list}' ELSE '[]'::jsonb END)`;
const pageVital = (field: string) => `(SELECT avg((item->>'${field}')::float8) FROM ${detailItems('webVitals')} item)`;
const itemCount = (list: string, where = 'true') =>
  `(SELECT count(*) FROM ${detailItems(list)} item WHERE ${where})::float8`;

/**
 * Browser checks. A run may open several pages: each web vital is the
 * average over the pages the run measured (null when it measured none).
 * Errors are counts per run: what the pages logged with console.error, what
 * they threw uncaught, and requests that failed or answered 400 or more.
 */
const BROWSER_COLUMNS = {
  responseTime: 'r.response_time',
  TTFB: pageVital('ttfbMs'),
  FCP: pageVital('fcpMs'),
  LCP: pageVital('lcpMs'),
  CLS: pageVital('cls'),
  consoleErrors: itemCount('consoleErrors', "item->>'source' = 'console'"),
  documentErrors: itemCount('consoleErrors', "item->>'source' = 'pageerror'"),
  networkErrors: itemCount('failedRequests'),
};

/** The measured quantities of each check type with analytics, by phase name. */
export const PHASE_COLUMNS = {
  URL: URL_COLUMNS,
  // An API check's request is timed phase by phase as a URL monitor's is.
  API: URL_COLUMNS,
  BROWSER: BROWSER_COLUMNS,
  TCP: TCP_COLUMNS,
  DNS: DNS_COLUMNS,
  ICMP: ICMP_COLUMNS,
} satisfies Partial<Record<CheckType, Record<string, string>>>;

export type AnalyticsCheckType = keyof typeof PHASE_COLUMNS;
export type PhaseName<T extends AnalyticsCheckType> = keyof (typeof PHASE_COLUMNS)[T] & string;

const AGGREGATES = {
  avg: (x: string) => `avg(${x})`,
  max: (x: string) => `max(${x})`,
  min: (x: string) => `min(${x})`,
  median: (x: string) => `percentile_cont(0.5) WITHIN GROUP (ORDER BY ${x})`,
  p50: (x: string) => `percentile_cont(0.5) WITHIN GROUP (ORDER BY ${x})`,
  p90: (x: string) => `percentile_cont(0.9) WITHIN GROUP (ORDER BY ${x})`,
  p95: (x: string) => `percentile_cont(0.95) WITHIN GROUP (ORDER BY ${x})`,
  p99: (x: string) => `percentile_cont(0.99) WITHIN GROUP (ORDER BY ${x})`,
  // Sample standard deviation, as spreadsheets and most dashboards compute it.
  stddev: (x: string) => `stddev_samp(${x})`,
  sum: (x: string) => `sum(${x})`,
} as const;

export type AggregateSuffix = keyof typeof AGGREGATES;
/** The aggregates a phase is offered with, as `<phase>_<suffix>`, in the order they are listed. */
export const AGGREGATE_SUFFIXES = Object.keys(AGGREGATES) as AggregateSuffix[];

/** Whether a result failed: what the `failure` status filter keeps and availability counts against. */
export const FAILED_CONDITION = '(r.has_failures OR r.has_errors)';

/** Metrics every check type with analytics has, besides its phases. */
const RESULT_METRICS = {
  availability: `(100.0 * count(*) FILTER (WHERE NOT ${FAILED_CONDITION}) / NULLIF(count(*), 0))::float8`,
  // Runs again before each final result: retries of failed attempts (each left an
  // ATTEMPT result) and re-runs after an agent vanished mid-run (attempt > 1).
  retries: 'COALESCE(sum(r.retries + r.attempt - 1), 0)::int',
} as const;

export type ResultMetricName = keyof typeof RESULT_METRICS;

function expressionsOf(columns: Record<string, string>): ReadonlyMap<string, string> {
  const expressions = new Map<string, string>();
  for (const [phase, column] of Object.entries(columns)) {
    // The bare name is the average, as in the comparable product's charts.
    expressions.set(phase, `avg(${column})`);
    for (const suffix of AGGREGATE_SUFFIXES) expressions.set(`${phase}_${suffix}`, AGGREGATES[suffix](column));
  }
  for (const [name, sql] of Object.entries(RESULT_METRICS)) expressions.set(name, sql);
  return expressions;
}

const EXPRESSIONS = new Map(
  Object.entries(PHASE_COLUMNS).map(([checkType, columns]) => [checkType, expressionsOf(columns)] as const),
);

/** The SQL aggregate a metric of a check type is; undefined when the type has no such metric. */
export function metricExpression(checkType: AnalyticsCheckType, name: string): string | undefined {
  return EXPRESSIONS.get(checkType)?.get(name);
}
