import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { Analysis, AnalysisInput } from '../rca/provider.js';
import type { ErrorGroup } from '../rca/error-groups.js';

export interface AnalysisRecord {
  id: string;
  status: 'PENDING' | 'COMPLETED';
  subject: AnalysisInput['subject'];
  checkId: string | null;
  checkSessionId: string | null;
  errorGroup: ErrorGroup;
  provider: string | null;
  model: string | null;
  analysis: Analysis | null;
  userContext: string | null;
  created_at: string;
  completed_at: string | null;
}

interface AnalysisRow {
  id: string;
  status: 'PENDING' | 'COMPLETED';
  subject: AnalysisInput['subject'];
  check_id: string | null;
  check_session_id: string | null;
  error_group: ErrorGroup;
  provider: string | null;
  model: string | null;
  analysis: Analysis | null;
  user_context: string | null;
  created_at: Date;
  completed_at: Date | null;
}

const COLUMNS = `id, status, subject, check_id, check_session_id, error_group, provider, model, analysis,
  input->>'userContext' AS user_context, created_at, completed_at`;

const analysisRecord = (row: AnalysisRow): AnalysisRecord => ({
  id: row.id,
  status: row.status,
  subject: row.subject,
  checkId: row.check_id,
  checkSessionId: row.check_session_id,
  errorGroup: row.error_group,
  provider: row.provider,
  model: row.model,
  analysis: row.analysis,
  userContext: row.user_context,
  created_at: row.created_at.toISOString(),
  completed_at: row.completed_at?.toISOString() ?? null,
});

/** A PENDING analysis of what `input` holds, kept as it is now. */
export async function createAnalysis(db: Queryable, accountId: string, input: AnalysisInput): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO root_cause_analyses (id, account_id, subject, check_id, check_session_id, error_group, input, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'PENDING')`,
    [
      id,
      accountId,
      input.subject,
      input.check.id,
      input.errorGroup.checkSessionId,
      JSON.stringify(input.errorGroup),
      JSON.stringify(input),
    ],
  );
  return id;
}

export async function getAnalysis(db: Queryable, accountId: string, id: string): Promise<AnalysisRecord | undefined> {
  const [row] = await db.query<AnalysisRow>(`SELECT ${COLUMNS} FROM root_cause_analyses WHERE account_id = $1 AND id = $2`, [
    accountId,
    id,
  ]);
  return row && analysisRecord(row);
}

/** The completed analyses of any of the error groups, newest first. */
export async function completedAnalysesOf(db: Queryable, accountId: string, groupIds: readonly string[]): Promise<AnalysisRecord[]> {
  if (groupIds.length === 0) return [];
  const rows = await db.query<AnalysisRow>(
    `SELECT ${COLUMNS} FROM root_cause_analyses
     WHERE account_id = $1 AND status = 'COMPLETED' AND error_group->>'id' = ANY($2::text[])
     ORDER BY completed_at DESC, id`,
    [accountId, [...new Set(groupIds)]],
  );
  return rows.map(analysisRecord);
}

/** When the check last passed before `before`, within the error groups' window. */
export async function lastPassedBefore(db: Queryable, accountId: string, checkId: string, before: string): Promise<string | null> {
  const [row] = await db.query<{ at: Date | null }>(
    `SELECT max(COALESCE(stopped_at, created_at)) AS at FROM check_results
     WHERE account_id = $1 AND check_id = $2 AND NOT has_errors AND NOT has_failures AND NOT is_cancelled
       AND COALESCE(stopped_at, created_at) < $3`,
    [accountId, checkId, before],
  );
  return row?.at?.toISOString() ?? null;
}

export interface ClaimedAnalysisRow {
  id: string;
  input: AnalysisInput;
  /** Counting the attempt this claim is for. */
  attempts: number;
}

/**
 * Claims the oldest PENDING analysis no generator holds, if any: its attempt
 * is counted and it is this generator's for `claimSeconds`.
 */
export async function claimNextPendingAnalysis(db: Queryable, claimSeconds: number): Promise<ClaimedAnalysisRow | undefined> {
  const [claimed] = await db.query<ClaimedAnalysisRow>(
    `UPDATE root_cause_analyses SET attempts = attempts + 1, claimed_until = now() + make_interval(secs => $1)
     WHERE id = (SELECT id FROM root_cause_analyses
                 WHERE status = 'PENDING' AND (claimed_until IS NULL OR claimed_until <= now())
                 ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING id, input, attempts`,
    [claimSeconds],
  );
  return claimed;
}

/** Holds a PENDING analysis back for `seconds` before a generator tries it again. */
export async function retryAnalysisIn(db: Queryable, id: string, seconds: number): Promise<void> {
  await db.query('UPDATE root_cause_analyses SET claimed_until = now() + make_interval(secs => $2) WHERE id = $1', [id, seconds]);
}

export async function completeAnalysis(db: Queryable, id: string, analysis: Analysis, by: { provider: string; model: string }): Promise<void> {
  await db.query(
    `UPDATE root_cause_analyses SET status = 'COMPLETED', analysis = $2, provider = $3, model = $4, completed_at = now(),
       claimed_until = NULL
     WHERE id = $1`,
    [id, JSON.stringify(analysis), by.provider, by.model],
  );
}
