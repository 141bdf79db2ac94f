import type { Queryable } from '../db/database.js';
import type { ResultRow } from './sessions.js';

/** A result with the ids of its stored artifacts, by name (those an agent uploaded and the service kept). */
export interface ResultWithArtifactsRow extends ResultRow {
  artifact_ids: Record<string, string>;
}

export type ResultTypeFilter = 'ALL' | 'FINAL' | 'ATTEMPT';

export interface ResultFilters {
  /** Runs from this instant on (inclusive). */
  from?: Date;
  /** Runs before this instant (exclusive). */
  to?: Date;
  location?: string;
  checkType?: string;
  hasFailures?: boolean;
  resultType: ResultTypeFilter;
}

/**
 * When a result ran: the run's start, or when the service recorded a run that
 * never started (timed out, cancelled). Results are listed newest first by
 * it, then by id; index check_results_check_ran (0013) is on exactly this.
 */
const RAN_AT = 'COALESCE(r.started_at, r.created_at)';

const SELECT_RESULTS = `SELECT r.*,
    COALESCE((SELECT jsonb_object_agg(a.name, a.id) FROM artifacts a WHERE a.job_id = r.job_id), '{}'::jsonb) AS artifact_ids
  FROM check_results r`;

/** The filters as SQL conditions on `r`, their values appended to `params`. */
function conditions(filters: ResultFilters, params: unknown[]): string[] {
  const where: string[] = [];
  if (filters.from) where.push(`${RAN_AT} >= $${params.push(filters.from)}::timestamptz`);
  if (filters.to) where.push(`${RAN_AT} < $${params.push(filters.to)}::timestamptz`);
  if (filters.location !== undefined) where.push(`r.run_location = $${params.push(filters.location)}`);
  if (filters.checkType !== undefined) where.push(`r.check_type = $${params.push(filters.checkType)}`);
  if (filters.hasFailures !== undefined) where.push(`r.has_failures = $${params.push(filters.hasFailures)}`);
  if (filters.resultType !== 'ALL') where.push(`r.result_type = $${params.push(filters.resultType)}`);
  return where;
}

/** One page of a check's results, newest first (page/limit). */
export async function listResultsPage(
  db: Queryable,
  accountId: string,
  checkId: string,
  filters: ResultFilters,
  page: { limit: number; page: number },
): Promise<ResultWithArtifactsRow[]> {
  const params: unknown[] = [accountId, checkId];
  const where = ['r.account_id = $1', 'r.check_id = $2', ...conditions(filters, params)];
  const limit = params.push(page.limit);
  const offset = params.push((page.page - 1) * page.limit);
  return db.query<ResultWithArtifactsRow>(
    `${SELECT_RESULTS} WHERE ${where.join(' AND ')}
     ORDER BY ${RAN_AT} DESC, r.id DESC LIMIT $${limit} OFFSET $${offset}`,
    params,
  );
}

/**
 * Up to `limit` of a check's results, newest first, starting at the result
 * `from` (included) when given: a cursor that stays put while new results
 * arrive, as an offset would not.
 */
export async function listResultsFrom(
  db: Queryable,
  accountId: string,
  checkId: string,
  filters: ResultFilters,
  from: string | undefined,
  limit: number,
): Promise<ResultWithArtifactsRow[]> {
  const params: unknown[] = [accountId, checkId];
  const where = ['r.account_id = $1', 'r.check_id = $2', ...conditions(filters, params)];
  if (from !== undefined) {
    const cursor = params.push(from);
    where.push(
      `(${RAN_AT}, r.id) <= (SELECT COALESCE(c.started_at, c.created_at), c.id FROM check_results c
                              WHERE c.id = $${cursor} AND c.check_id = $2)`,
    );
  }
  const limitParam = params.push(limit);
  return db.query<ResultWithArtifactsRow>(
    `${SELECT_RESULTS} WHERE ${where.join(' AND ')} ORDER BY ${RAN_AT} DESC, r.id DESC LIMIT $${limitParam}`,
    params,
  );
}

/** Whether `resultId` is one of the check's results (a cursor must be). */
export async function isResultOfCheck(db: Queryable, accountId: string, checkId: string, resultId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM check_results WHERE id = $1 AND check_id = $2 AND account_id = $3', [
    resultId,
    checkId,
    accountId,
  ]);
  return rows.length > 0;
}

/** One result of a check of the account. */
export async function getCheckResult(
  db: Queryable,
  accountId: string,
  checkId: string,
  resultId: string,
): Promise<ResultWithArtifactsRow | undefined> {
  const [row] = await db.query<ResultWithArtifactsRow>(
    `${SELECT_RESULTS} WHERE r.account_id = $1 AND r.check_id = $2 AND r.id = $3`,
    [accountId, checkId, resultId],
  );
  return row;
}

/** One result of a session of the account. */
export async function getSessionResult(
  db: Queryable,
  accountId: string,
  sessionId: string,
  resultId: string,
): Promise<ResultWithArtifactsRow | undefined> {
  const [row] = await db.query<ResultWithArtifactsRow>(
    `${SELECT_RESULTS} WHERE r.account_id = $1 AND r.session_id = $2 AND r.id = $3`,
    [accountId, sessionId, resultId],
  );
  return row;
}

/** What alerting reads of a location's result. */
export interface FinalResultSummaryRow {
  run_location: string;
  has_errors: boolean;
  has_failures: boolean;
  is_degraded: boolean;
  is_cancelled: boolean;
  timed_out: boolean;
  response_time: number | null;
  error: { code: string; message: string } | null;
}

/** The session's FINAL result at each location, by location. */
export async function finalResultsOfSession(db: Queryable, sessionId: string): Promise<FinalResultSummaryRow[]> {
  return db.query<FinalResultSummaryRow>(
    `SELECT run_location, has_errors, has_failures, is_degraded, is_cancelled, timed_out, response_time, error
     FROM check_results WHERE session_id = $1 AND result_type = 'FINAL' ORDER BY run_location`,
    [sessionId],
  );
}

/** What an error group reads of a failed result. */
export interface FailedResultRow {
  id: string;
  session_id: string;
  check_id: string;
  run_location: string;
  check_type: string;
  started_at: Date | null;
  stopped_at: Date | null;
  created_at: Date;
  response_time: number | null;
  status_code: number | null;
  timings: Record<string, number | null> | null;
  error: { code: string; message: string } | null;
  assertions: { source: string; property: string; comparison: string; target: string; actual: unknown; passed: boolean }[];
  logs: { level: string; message: string }[];
}

/**
 * Failed (not cancelled) results of one session, or of a check in its last
 * `days` days; newest first, at most `limit`.
 */
export async function failedResultRows(
  db: Queryable,
  accountId: string,
  scope: { checkId: string; days: number } | { checkSessionId: string },
  limit: number,
): Promise<FailedResultRow[]> {
  const bySession = 'checkSessionId' in scope;
  const params: unknown[] = [accountId, bySession ? scope.checkSessionId : scope.checkId, limit];
  return db.query<FailedResultRow>(
    `SELECT id, session_id, check_id, run_location, check_type, started_at, stopped_at, created_at, response_time,
            status_code, timings, error, assertions, logs
     FROM check_results
     WHERE account_id = $1 AND ${bySession ? 'session_id' : 'check_id'} = $2
       AND (has_errors OR has_failures) AND NOT is_cancelled
       ${bySession ? '' : `AND created_at > now() - make_interval(days => $${params.push(scope.days)}::int)`}
     ORDER BY created_at DESC, id LIMIT $3::int`,
    params,
  );
}
