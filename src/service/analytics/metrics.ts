/**
 * The URL monitor metrics of the analytics endpoint: names, labels, and the
 * SQL aggregate each one is. Names are checked against this list before any
 * SQL is built, so no user text ever reaches a query.
 */
const PHASES = {
  responseTime: { label: 'Response time', column: 'r.response_time' },
  wait: { label: 'Wait', column: "(r.timings->>'wait')::float8" },
  dns: { label: 'DNS lookup', column: "(r.timings->>'dns')::float8" },
  tcp: { label: 'TCP connect', column: "(r.timings->>'tcp')::float8" },
  firstByte: { label: 'Time to first byte', column: "(r.timings->>'firstByte')::float8" },
  download: { label: 'Download', column: "(r.timings->>'download')::float8" },
} as const;

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

interface Metric {
  label: string;
  sql: string;
}

function buildCatalog(): Map<string, Metric> {
  const catalog = new Map<string, Metric>();
  for (const [phase, { label, column }] of Object.entries(PHASES)) {
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
  catalog.set('retries', { label: 'Retries', sql: '(count(*) FILTER (WHERE r.attempt > 1))::int' });
  return catalog;
}

const catalog = buildCatalog();

export const METRIC_NAMES: readonly string[] = [...catalog.keys()];

export function metric(name: string): Metric | undefined {
  return catalog.get(name);
}

export const FAILED_CONDITION = OUTCOME_FAILED;
