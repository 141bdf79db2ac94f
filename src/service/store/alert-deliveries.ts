/**
 * Alert deliveries: one row per channel an alert goes to, sent later by
 * delivery rounds that claim rows so no two rounds send the same one.
 */
import type { Queryable } from '../db/database.js';
import type { AlertEvent } from '../alerts/events.js';

export interface NewAlertDelivery {
  id: string;
  accountId: string;
  channelId: number;
  channelType: string;
  event: AlertEvent;
}

export async function insertAlertDelivery(tx: Queryable, delivery: NewAlertDelivery): Promise<void> {
  const { event } = delivery;
  await tx.query(
    `INSERT INTO alert_deliveries (id, account_id, channel_id, channel_type, check_id, check_session_id, event, payload)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      delivery.id,
      delivery.accountId,
      delivery.channelId,
      delivery.channelType,
      event.check.id,
      event.checkSession?.id ?? null,
      event.event,
      JSON.stringify(event),
    ],
  );
}

export interface DueDeliveryRow {
  id: string;
  /** Null once the channel was deleted. */
  channel_id: number | null;
  payload: AlertEvent;
  /** Counting the attempt this claim is for. */
  attempts: number;
}

/**
 * Claims up to `batch` pending deliveries that are due, oldest due first, in
 * one statement: each one's attempt is counted and its next attempt moved
 * `claimSeconds` ahead, so another round takes it only once the claim ran out.
 */
export async function claimDueDeliveries(db: Queryable, batch: number, claimSeconds: number): Promise<DueDeliveryRow[]> {
  return db.query<DueDeliveryRow>(
    `UPDATE alert_deliveries SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
     WHERE id IN (SELECT id FROM alert_deliveries WHERE state = 'pending' AND next_attempt_at <= now()
                  ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING id, channel_id, payload, attempts`,
    [batch, claimSeconds],
  );
}

export async function markDeliveryDelivered(db: Queryable, id: string): Promise<void> {
  await db.query("UPDATE alert_deliveries SET state = 'delivered', delivered_at = now(), last_error = NULL WHERE id = $1", [id]);
}

export interface FailedDeliveryAttempt {
  /** The service's own words: never what the receiver answered. */
  error: string;
  /** Never tried again. */
  giveUp: boolean;
  retryInSeconds: number;
}

export async function markDeliveryFailed(db: Queryable, id: string, attempt: FailedDeliveryAttempt): Promise<void> {
  await db.query(
    `UPDATE alert_deliveries SET last_error = $2, state = CASE WHEN $3 THEN 'failed' ELSE 'pending' END,
       next_attempt_at = now() + make_interval(secs => $4)
     WHERE id = $1`,
    [id, attempt.error, attempt.giveUp, attempt.retryInSeconds],
  );
}
