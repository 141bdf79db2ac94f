/**
 * Each check's alert state: whether it is failing, whether that was alerted
 * and how many reminders followed, and the incident its alerts opened.
 */
import type { Queryable } from '../db/database.js';

export interface AlertStateRow {
  state: 'PASSING' | 'DEGRADED' | 'FAILING';
  consecutive_failures: number;
  alerted: boolean;
  reminders_sent: number;
  alerted_at: Date | null;
  incident_id: string | null;
}

/**
 * The check's state (PASSING when it has none yet), locked until the
 * transaction ends so one check's runs are judged one at a time.
 */
export async function lockAlertState(tx: Queryable, checkId: string): Promise<AlertStateRow> {
  await tx.query(`INSERT INTO check_alert_states (check_id, state) VALUES ($1, 'PASSING') ON CONFLICT DO NOTHING`, [checkId]);
  const [state] = await tx.query<AlertStateRow>('SELECT * FROM check_alert_states WHERE check_id = $1 FOR UPDATE', [checkId]);
  return state!;
}

/** Everything but the incident, which follows the alerts after the transaction. */
export async function saveAlertState(tx: Queryable, checkId: string, state: Omit<AlertStateRow, 'incident_id'>): Promise<void> {
  await tx.query(
    `UPDATE check_alert_states SET state = $2, consecutive_failures = $3, alerted = $4, alerted_at = $5, reminders_sent = $6,
       updated_at = now() WHERE check_id = $1`,
    [checkId, state.state, state.consecutive_failures, state.alerted, state.alerted_at, state.reminders_sent],
  );
}

export async function setAlertStateIncident(db: Queryable, checkId: string, incidentId: string | null): Promise<void> {
  await db.query('UPDATE check_alert_states SET incident_id = $2 WHERE check_id = $1', [checkId, incidentId]);
}

export interface AlertedFailingRow {
  check_id: string;
  account_id: string;
  alerted_at: Date;
  reminders_sent: number;
  consecutive_failures: number;
}

/** Checks still failing after their failure alert: the ones reminders are for. */
export async function alertedFailingChecks(db: Queryable): Promise<AlertedFailingRow[]> {
  return db.query<AlertedFailingRow>(
    `SELECT s.check_id, c.account_id, s.alerted_at, s.reminders_sent, s.consecutive_failures
     FROM check_alert_states s JOIN checks c ON c.id = s.check_id
     WHERE s.alerted AND s.state = 'FAILING'`,
  );
}

/**
 * Counts the next reminder if `remindersSent` is still the count and the
 * check still alerted; false when another tick counted it first.
 */
export async function claimReminder(tx: Queryable, checkId: string, remindersSent: number): Promise<boolean> {
  const claimed = await tx.query(
    `UPDATE check_alert_states SET reminders_sent = reminders_sent + 1 WHERE check_id = $1 AND alerted AND reminders_sent = $2
     RETURNING check_id`,
    [checkId, remindersSent],
  );
  return claimed.length > 0;
}
