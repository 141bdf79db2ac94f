import type { Queryable } from '../db/database.js';
import { FAILED_CONDITION, type MetricCatalog } from './metrics.js';

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

const GROUP_COLUMN = { runLocation: 'r.run_location', statusCode: 'r.status_code' } as const;

/**
 * Aggregates stored results in SQL, the same statement on PGlite and
 * PostgreSQL. Time-outs the service recorded (no agent ran the job) carry no
 * measurement and are left out, as are attempts a retry followed (their
 * retries count in the final result). Pagination runs over each series' points.
 */
export async function queryAnalytics(db: Queryable, q: AnalyticsQuery): Promise<Series[]> {
  const params: unknown[] = [q.accountId, q.checkId, q.from, q.to];
  const bucket =
    q.aggregationMinutes === undefined
      ? '$3::timestamptz'
      : `date_bin(make_interval(mins => $${params.push(q.aggregationMinutes)}), r.started_at, $3::timestamptz)`;
  const group = q.groupBy ? GROUP_COLUMN[q.groupBy] : 'NULL';
  const filters: string[] = [];
  if (q.statuses.length === 1) filters.push(q.statuses[0] === 'failure' ? FAILED_CONDITION : `NOT ${FAILED_CONDITION}`);
  const selected = q.metrics.map((name) => `${q.catalog.metric(name)!.sql} AS "${name}"`);
  const offset = (q.page - 1) * q.limit;
  const limitParam = params.push(q.limit);
  const offsetParam = params.push(offset);
  const rows = await db.query<Record<string, unknown> & { grp: string | number | null; bucket: Date }>(
    `WITH points AS (
       SELECT ${group} AS grp, ${bucket} AS bucket, ${selected.join(', ')}
       FROM check_results r
       WHERE r.account_id = $1 AND r.check_id = $2 AND NOT r.timed_out AND r.result_type = 'FINAL'
         AND r.started_at >= $3::timestamptz AND r.started_at < $4::timestamptz
         ${filters.map((filter) => `AND ${filter}`).join(' ')}
       GROUP BY 1, 2
     ), numbered AS (
       SELECT *, row_number() OVER (PARTITION BY grp ORDER BY bucket) AS position FROM points
     )
     SELECT * FROM numbered WHERE position > $${offsetParam} AND position <= $${offsetParam} + $${limitParam}
     ORDER BY grp NULLS FIRST, bucket`,
    params,
  );
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
