/**
 * The analytics endpoints' one query: stored results aggregated per time
 * bucket (and per location or status code), the same statement on PGlite and
 * PostgreSQL.
 */
import type { Queryable } from '../db/database.js';
import { FAILED_CONDITION, metricExpression, type AnalyticsCheckType } from './analytics-metrics.js';

export interface ResultAggregation {
  accountId: string;
  checkId: string;
  /** Whose metrics `metrics` are: each one is a metric of this type. */
  checkType: AnalyticsCheckType;
  from: Date;
  to: Date;
  metrics: readonly string[];
  /** Bucket width; undefined for one bucket over the whole window. */
  aggregationMinutes: number | undefined;
  statuses: readonly ('success' | 'failure')[];
  groupBy: 'runLocation' | 'statusCode' | undefined;
  /** Points per series, and the page of them (from 1). */
  limit: number;
  page: number;
}

/** One point: `grp` is the series' location or status code (null when not grouped), and one column per metric. */
export type AggregatedPointRow = Record<string, unknown> & { grp: string | number | null; bucket: Date };

const GROUP_COLUMN = { runLocation: 'r.run_location', statusCode: 'r.status_code' } as const;

/**
 * Time-outs the service recorded (no agent ran the job) carry no measurement
 * and are left out, as are attempts a retry followed (their retries count in
 * the final result). Pagination runs over each series' points; rows come in
 * series order (ungrouped first), then time.
 */
export async function aggregateCheckResults(db: Queryable, q: ResultAggregation): Promise<AggregatedPointRow[]> {
  const params: unknown[] = [q.accountId, q.checkId, q.from, q.to];
  const bucket =
    q.aggregationMinutes === undefined
      ? '$3::timestamptz'
      : `date_bin(make_interval(mins => $${params.push(q.aggregationMinutes)}), r.started_at, $3::timestamptz)`;
  const group = q.groupBy ? GROUP_COLUMN[q.groupBy] : 'NULL';
  const filters: string[] = [];
  if (q.statuses.length === 1) filters.push(q.statuses[0] === 'failure' ? FAILED_CONDITION : `NOT ${FAILED_CONDITION}`);
  const selected = q.metrics.map((name) => `${expressionOf(q.checkType, name)} AS "${name}"`);
  const offset = (q.page - 1) * q.limit;
  const limitParam = params.push(q.limit);
  const offsetParam = params.push(offset);
  return db.query<AggregatedPointRow>(
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
}

function expressionOf(checkType: AnalyticsCheckType, name: string): string {
  const sql = metricExpression(checkType, name);
  // Callers check names against the catalogue first; anything else is a bug, never user text in SQL.
  if (sql === undefined) throw new Error(`No metric ${name} for ${checkType} checks`);
  return sql;
}
