/**
 * The metrics of the analytics endpoints, one catalogue per check type:
 * names, labels, and the SQL aggregate each one is. Names are checked against
 * the catalogue before any SQL is built, so no user text ever reaches a query.
 */
import type { CheckType } from '../../protocol/enums.js';

/** A measured quantity of one result, as an SQL expression over `r` (check_results). */
interface Phase {
  label: string;
  column: string;
}

const timing = (name: string) => `(r.timings->>'${name}')::float8`;

/** URL monitors: the response time and each phase of the exchange. */
const URL_PHASES: Record<string, Phase> = {
  responseTime: { label: 'Response time', column: 'r.response_time' },
  wait: { label: 'Wait', column: timing('wait') },
  dns: { label: 'DNS lookup', column: timing('dns') },
  tcp: { label: 'TCP connect', column: timing('tcp') },
  firstByte: { label: 'Time to first byte', column: timing('firstByte') },
  download: { label: 'Download', column: timing('download') },
};

/**
 * TCP monitors, named as the comparable product names them: the whole
 * exchange, the lookup, the connect, and the data exchanged after it (from
 * the write to the last byte read; null when nothing was measured).
 */
const TCP_PHASES: Record<string, Phase> = {
  total: { label: 'Total', column: 'r.response_time' },
  dns: { label: 'DNS lookup', column: timing('dns') },
  connection: { label: 'Connection', column: timing('tcp') },
  data: {
    label: 'Data',
    column: `(CASE WHEN r.timings->>'firstByte' IS NULL AND r.timings->>'download' IS NULL THEN NULL
              ELSE COALESCE(${timing('firstByte')}, 0) + COALESCE(${timing('download')}, 0) END)`,
  },
};

/** DNS monitors: the time the name server took to answer (TCP connect included over TCP). */
const DNS_PHASES: Record<string, Phase> = {
  responseTime: { label: 'Response time', column: 'r.response_time' },
};

/**
 * ICMP monitors: the average round trip of a run's replies (null when none
 * came back, so a lost run does not read as a fast one) and its packet loss.
 */
const ICMP_PHASES: Record<string, Phase> = {
  latency: { label: 'Latency (average round trip)', column: "(r.details->'latency'->>'avg')::float8" },
  latencyMin: { label: 'Latency (fastest round trip)', column: "(r.details->'latency'->>'min')::float8" },
  latencyMax: { label: 'Latency (slowest round trip)', column: "(r.details->'latency'->>'max')::float8" },
  packetLoss: { label: 'Packet loss (%)', column: "(r.details->>'packetLoss')::float8" },
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
 * Browser checks, named as the comparable product names them. A run may open
 * several pages: each web vital is the average over the pages the run
 * measured (null when it measured none). Errors are counts per run: what the
 * pages logged with console.error, what they threw uncaught, and requests
 * that failed or answered 400 or more. Total blocking time and the check
 * script's own errors are not measured, so they are not offered.
 */
const BROWSER_PHASES: Record<string, Phase> = {
  responseTime: { label: 'Response time', column: 'r.response_time' },
  TTFB: { label: 'Time to first byte', column: pageVital('ttfbMs') },
  FCP: { label: 'First contentful paint', column: pageVital('fcpMs') },
  LCP: { label: 'Largest contentful paint', column: pageVital('lcpMs') },
  CLS: { label: 'Cumulative layout shift', column: pageVital('cls') },
  consoleErrors: { label: 'Console errors', column: itemCount('consoleErrors', "item->>'source' = 'console'") },
  documentErrors: { label: 'Uncaught page errors', column: itemCount('consoleErrors', "item->>'source' = 'pageerror'") },
  networkErrors: { label: 'Failed requests', column: itemCount('failedRequests') },
};

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

const OUTCOME_FAILED = '(r.has_failures OR r.has_errors)';

export interface Metric {
  label: string;
  sql: string;
}

export interface MetricCatalog {
  readonly names: readonly string[];
  metric(name: string): Metric | undefined;
}

function buildCatalog(phases: Record<string, Phase>): MetricCatalog {
  const catalog = new Map<string, Metric>();
  for (const [phase, { label, column }] of Object.entries(phases)) {
    // The bare name is the average, as in the comparable product's charts.
    catalog.set(phase, { label, sql: `avg(${column})` });
    for (const [suffix, aggregate] of Object.entries(AGGREGATES)) {
      catalog.set(`${phase}_${suffix}`, { label: `${label} (${suffix})`, sql: aggregate(column) });
    }
  }
  catalog.set('availability', {
    label: 'Availability (%)',
    sql: `(100.0 * count(*) FILTER (WHERE NOT ${OUTCOME_FAILED}) / NULLIF(count(*), 0))::float8`,
  });
  // Runs again before each final result: retries of failed attempts (each left an
  // ATTEMPT result) and re-runs after an agent vanished mid-run (attempt > 1).
  catalog.set('retries', { label: 'Retries', sql: 'COALESCE(sum(r.retries + r.attempt - 1), 0)::int' });
  return { names: [...catalog.keys()], metric: (name) => catalog.get(name) };
}

/** The check types with analytics, and the catalogue of each. */
export const CATALOGS: Partial<Record<CheckType, MetricCatalog>> = {
  URL: buildCatalog(URL_PHASES),
  // An API check's request is timed phase by phase as a URL monitor's is.
  API: buildCatalog(URL_PHASES),
  BROWSER: buildCatalog(BROWSER_PHASES),
  TCP: buildCatalog(TCP_PHASES),
  DNS: buildCatalog(DNS_PHASES),
  ICMP: buildCatalog(ICMP_PHASES),
};

export const FAILED_CONDITION = OUTCOME_FAILED;
