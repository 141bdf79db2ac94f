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
  created_at: Date;
  completed_at: Date | null;
}

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
  const [row] = await db.query<AnalysisRow>(
    `SELECT id, status, subject, check_id, check_session_id, error_group, provider, model, analysis, created_at, completed_at
     FROM root_cause_analyses WHERE account_id = $1 AND id = $2`,
    [accountId, id],
  );
  return (
    row && {
      id: row.id,
      status: row.status,
      subject: row.subject,
      checkId: row.check_id,
      checkSessionId: row.check_session_id,
      errorGroup: row.error_group,
      provider: row.provider,
      model: row.model,
      analysis: row.analysis,
      created_at: row.created_at.toISOString(),
      completed_at: row.completed_at?.toISOString() ?? null,
    }
  );
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
