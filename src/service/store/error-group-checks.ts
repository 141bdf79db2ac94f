import type { Queryable } from '../db/database.js';

/** The account's checks with a failed, not cancelled result in the last `days` days, most recent failure first. */
export async function checksWithRecentFailures(db: Queryable, accountId: string, days: number): Promise<string[]> {
  const rows = await db.query<{ check_id: string }>(
    `SELECT check_id FROM check_results
      WHERE account_id = $1 AND (has_errors OR has_failures) AND NOT is_cancelled
        AND created_at > now() - make_interval(days => $2)
      GROUP BY check_id ORDER BY max(created_at) DESC`,
    [accountId, days],
  );
  return rows.map((row) => row.check_id);
}
