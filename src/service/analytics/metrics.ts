/**
 * The metrics of the analytics endpoints, one catalogue per check type:
 * names and labels. Names are checked against the catalogue before any SQL
 * is built (store/analytics.ts), so no user text ever reaches a query.
 */
import type { CheckType } from '../../protocol/enums.js';
import {
  AGGREGATE_SUFFIXES,
  type AnalyticsCheckType,
  type PhaseName,
  type ResultMetricName,
} from '../store/analytics-metrics.js';

/** The label of each measured quantity of a check type, in the order they are listed. */
type PhaseLabels<T extends AnalyticsCheckType> = Record<PhaseName<T>, string>;

/** URL monitors: the response time and each phase of the exchange. */
const URL_LABELS: PhaseLabels<'URL'> = {
  responseTime: 'Response time',
  wait: 'Wait',
  dns: 'DNS lookup',
  tcp: 'TCP connect',
  firstByte: 'Time to first byte',
  download: 'Download',
};

/** TCP monitors, named as the comparable product names them. */
const TCP_LABELS: PhaseLabels<'TCP'> = {
  total: 'Total',
  dns: 'DNS lookup',
  connection: 'Connection',
  data: 'Data',
};

const DNS_LABELS: PhaseLabels<'DNS'> = {
  responseTime: 'Response time',
  // The same time under the name the checkly CLI asks DNS monitors for.
  total: 'Total',
};

const ICMP_LABELS: PhaseLabels<'ICMP'> = {
  latency: 'Latency (average round trip)',
  // The same average under the name the checkly CLI asks ICMP monitors for.
  latencyAvg: 'Latency (average round trip)',
  latencyMin: 'Latency (fastest round trip)',
  latencyMax: 'Latency (slowest round trip)',
  packetLoss: 'Packet loss (%)',
};

/**
 * Browser checks, named as the comparable product names them. Total blocking
 * time and the check script's own errors are not measured, so they are not offered.
 */
const BROWSER_LABELS: PhaseLabels<'BROWSER'> = {
  responseTime: 'Response time',
  TTFB: 'Time to first byte',
  FCP: 'First contentful paint',
  LCP: 'Largest contentful paint',
  CLS: 'Cumulative layout shift',
  consoleErrors: 'Console errors',
  documentErrors: 'Uncaught page errors',
  networkErrors: 'Failed requests',
};

const RESULT_LABELS: Record<ResultMetricName, string> = {
  availability: 'Availability (%)',
  retries: 'Retries',
};

export interface Metric {
  label: string;
}

export interface MetricCatalog {
  /** Whose metrics these are, as the query knows them (an API check's are a URL monitor's). */
  readonly checkType: AnalyticsCheckType;
  readonly names: readonly string[];
  metric(name: string): Metric | undefined;
}

function buildCatalog<T extends AnalyticsCheckType>(checkType: T, phases: PhaseLabels<T>): MetricCatalog {
  const catalog = new Map<string, Metric>();
  for (const [phase, label] of Object.entries<string>(phases)) {
    // The bare name is the average, as in the comparable product's charts.
    catalog.set(phase, { label });
    for (const suffix of AGGREGATE_SUFFIXES) catalog.set(`${phase}_${suffix}`, { label: `${label} (${suffix})` });
  }
  for (const [name, label] of Object.entries(RESULT_LABELS)) catalog.set(name, { label });
  return { checkType, names: [...catalog.keys()], metric: (name) => catalog.get(name) };
}

/** The check types with analytics, and the catalogue of each. */
export const CATALOGS: Partial<Record<CheckType, MetricCatalog>> = {
  URL: buildCatalog('URL', URL_LABELS),
  // An API check's request is timed phase by phase as a URL monitor's is.
  API: buildCatalog('API', URL_LABELS),
  BROWSER: buildCatalog('BROWSER', BROWSER_LABELS),
  TCP: buildCatalog('TCP', TCP_LABELS),
  DNS: buildCatalog('DNS', DNS_LABELS),
  ICMP: buildCatalog('ICMP', ICMP_LABELS),
};
