import type { Queryable } from '../db/database.js';

export interface CheckStatusRow {
  check_id: string;
  name: string;
  created_at: Date;
  /** Null until a run of the check has finished. */
  has_failures: boolean | null;
  has_errors: boolean | null;
  is_degraded: boolean | null;
  last_result_id: string | null;
  last_run_location: string | null;
  last_stopped_at: Date | null;
  longest_run: number | null;
  shortest_run: number | null;
  ssl_days_remaining: number | null;
}

/**
 * Runs that say nothing about a check's health: test runs and those meant
 * not to be recorded (the same ones alerting leaves alone).
 */
const QUIET_SOURCES = ['TEST_NO_RECORD', 'TEST_RECORD', 'TRIGGER_NO_RECORD', 'EDITOR'];

/**
 * The status of each check (or of one), from its stored results, in one
 * statement whose cost grows with the number of checks, not of results:
 *
 * - the flags, location and result id come from the check's latest finished
 *   session (a cancelled session, or a test run, is passed over): failed,
 *   errored or degraded anywhere in that run; its latest result;
 * - longest and shortest runs are over every stored result that ran
 *   (check_results_check_response_time: two index probes);
 * - the days left on the certificate are counted from now to the validTo of
 *   the latest result that carried one (check_results_check_tls).
 */
export async function listCheckStatuses(db: Queryable, accountId: string, checkId?: string): Promise<CheckStatusRow[]> {
  const params: unknown[] = [accountId, QUIET_SOURCES];
  const only = checkId === undefined ? '' : `AND c.id = $${params.push(checkId)}`;
  return db.query<CheckStatusRow>(
    `SELECT c.id AS check_id, c.name, c.created_at,
            run.has_failures, run.has_errors, run.is_degraded,
            last.id AS last_result_id, last.run_location AS last_run_location, session.stopped_at AS last_stopped_at,
            (SELECT max(r.response_time) FROM check_results r
              WHERE r.check_id = c.id AND r.response_time IS NOT NULL AND NOT r.has_errors) AS longest_run,
            (SELECT min(r.response_time) FROM check_results r
              WHERE r.check_id = c.id AND r.response_time IS NOT NULL AND NOT r.has_errors) AS shortest_run,
            (SELECT floor(extract(epoch FROM ((r.details -> 'tls' ->> 'validTo')::timestamptz - now())) / 86400)::int
               FROM check_results r
              WHERE r.check_id = c.id AND (r.details -> 'tls') IS NOT NULL
              ORDER BY r.created_at DESC LIMIT 1) AS ssl_days_remaining
       FROM checks c
       LEFT JOIN LATERAL (
         SELECT s.id, s.stopped_at FROM check_sessions s
          WHERE s.check_id = c.id AND s.status IN ('PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT')
            AND NOT (s.run_source = ANY($2::text[]))
          ORDER BY s.started_at DESC, s.id DESC LIMIT 1
       ) session ON true
       LEFT JOIN LATERAL (
         SELECT bool_or(r.has_failures) AS has_failures, bool_or(r.has_errors) AS has_errors,
                bool_or(r.is_degraded) AS is_degraded
           FROM check_results r WHERE r.session_id = session.id AND NOT r.is_cancelled AND r.result_type = 'FINAL'
       ) run ON true
       LEFT JOIN LATERAL (
         SELECT r.id, r.run_location FROM check_results r
          WHERE r.session_id = session.id AND NOT r.is_cancelled
          ORDER BY COALESCE(r.stopped_at, r.created_at) DESC, r.id DESC LIMIT 1
       ) last ON true
      WHERE c.account_id = $1 ${only}
      ORDER BY c.created_at, c.id`,
    params,
  );
}
