import type { Queryable } from '../db/database.js';
import { aggregateCheckResults } from '../store/analytics.js';
import type { MetricCatalog } from './metrics.js';

export interface AnalyticsQuery {
  accountId: string;
  checkId: string;
  /** The check type's metrics; every name in `metrics` is one of them. */
  catalog: MetricCatalog;
  from: Date;
  to: Date;
  metrics: readonly string[];
  aggregationMinutes: number | undefined;
  statuses: readonly ('success' | 'failure')[];
  groupBy: 'runLocation' | 'statusCode' | undefined;
  limit: number;
  page: number;
}

export interface Series {
  runLocation?: string;
  statusCode?: number | null;
  data: Record<string, number | string | null>[];
}

/** Stored results aggregated (store/analytics.ts), as one series per location or status code, or one in all. */
export async function queryAnalytics(db: Queryable, q: AnalyticsQuery): Promise<Series[]> {
  const { catalog, ...aggregation } = q;
  const rows = await aggregateCheckResults(db, { ...aggregation, checkType: catalog.checkType });
  const series = new Map<string, Series>();
  for (const row of rows) {
    const key = String(row.grp);
    let entry = series.get(key);
    if (!entry) {
      entry = { data: [] };
      if (q.groupBy === 'runLocation') entry.runLocation = row.grp as string;
      if (q.groupBy === 'statusCode') entry.statusCode = row.grp === null ? null : Number(row.grp);
      series.set(key, entry);
    }
    const point: Record<string, number | string | null> = { timestamp: row.bucket.toISOString() };
    for (const name of q.metrics) point[name] = row[name] === null ? null : Number(row[name]);
    entry.data.push(point);
  }
  return [...series.values()];
}
