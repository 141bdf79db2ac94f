/**
 * Headline numbers of many checks at once, as the checkly CLI's `checks
 * stats` reads them: availability and response times for the types that
 * time a response, latency and packet loss for ICMP. A number a check type
 * does not measure, or a window without results, is null.
 */
import type { Queryable } from '../db/database.js';
import type { CheckRow } from '../store/checks.js';
import { CATALOGS, type MetricCatalog } from './metrics.js';
import { queryAnalytics } from './query.js';

const FIELDS = [
  'availability',
  'responseTime_avg',
  'responseTime_p50',
  'responseTime_p95',
  'responseTime_p99',
  'latency_avg',
  'latency_p50',
  'latency_p95',
  'latency_p99',
  'packetLoss_avg',
  'packetLoss_p95',
  'packetLoss_p99',
  'hopCount_avg',
] as const;
type Field = (typeof FIELDS)[number];

export type CheckStats = { checkId: string; checkType: string } & Record<Field, number | null>;

/** The answer's field each catalogue metric fills: a TCP monitor's whole exchange is its response time. */
function metricsFor(checkType: string, catalog: MetricCatalog): Map<Field, string> {
  const wanted = new Map<Field, string>();
  for (const field of FIELDS) {
    const name = checkType === 'TCP' ? field.replace(/^responseTime_/, 'total_') : field;
    if (catalog.metric(name)) wanted.set(field, name);
  }
  return wanted;
}

export async function statsOfChecks(
  db: Queryable,
  accountId: string,
  checks: readonly CheckRow[],
  window: { from: Date; to: Date },
): Promise<CheckStats[]> {
  const answers: CheckStats[] = [];
  for (const check of checks) {
    const stats = { checkId: check.id, checkType: check.check_type } as CheckStats;
    for (const field of FIELDS) stats[field] = null;
    // Availability is the same measure for every type; types without a catalogue of their own get just that.
    const catalog = CATALOGS[check.check_type] ?? CATALOGS.URL!;
    const wanted = CATALOGS[check.check_type] ? metricsFor(check.check_type, catalog) : new Map<Field, string>([['availability', 'availability']]);
    const [series] = await queryAnalytics(db, {
      accountId,
      checkId: check.id,
      catalog,
      from: window.from,
      to: window.to,
      metrics: [...wanted.values()],
      aggregationMinutes: undefined,
      statuses: [],
      groupBy: undefined,
      limit: 1,
      page: 1,
    });
    const point = series?.data[0];
    if (point) {
      for (const [field, name] of wanted) {
        const value = point[name];
        stats[field] = typeof value === 'number' ? value : null;
      }
    }
    answers.push(stats);
  }
  return answers;
}
