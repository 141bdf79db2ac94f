import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { ErrorEventFields, StoredException } from '../error-events/event-fields.js';

/** Per private location: older events make way for new ones. */
export const KEPT_ERROR_EVENTS = 500;

export interface ErrorEventRecord {
  id: string;
  eventId: string;
  occurredAt: string;
  receivedAt: string;
  release: string | null;
  platform: string | null;
  runtime: string | null;
  message: string | null;
  exceptions: StoredException[];
}

interface Row {
  id: string;
  event_id: string;
  occurred_at: Date;
  received_at: Date;
  release: string | null;
  platform: string | null;
  runtime: string | null;
  message: string | null;
  exceptions: StoredException[];
}

/** Stores the event once (an agent may send it again after a lost answer) and trims the location's oldest. */
export async function recordErrorEvent(db: Queryable, privateLocationId: string, event: ErrorEventFields): Promise<void> {
  await db.query(
    `INSERT INTO agent_error_events (id, private_location_id, event_id, occurred_at, release, platform, runtime, message, exceptions)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (private_location_id, event_id) DO NOTHING`,
    [
      randomUUID(),
      privateLocationId,
      event.eventId,
      event.occurredAt,
      event.release,
      event.platform,
      event.runtime,
      event.message,
      JSON.stringify(event.exceptions),
    ],
  );
  await db.query(
    `DELETE FROM agent_error_events WHERE private_location_id = $1 AND id IN (
       SELECT id FROM agent_error_events WHERE private_location_id = $1
       ORDER BY received_at DESC, id OFFSET $2)`,
    [privateLocationId, KEPT_ERROR_EVENTS],
  );
}

export async function listErrorEvents(db: Queryable, privateLocationId: string, limit: number): Promise<ErrorEventRecord[]> {
  const rows = await db.query<Row>(
    `SELECT id, event_id, occurred_at, received_at, release, platform, runtime, message, exceptions
       FROM agent_error_events WHERE private_location_id = $1 ORDER BY received_at DESC, id LIMIT $2`,
    [privateLocationId, limit],
  );
  return rows.map((row) => ({
    id: row.id,
    eventId: row.event_id,
    occurredAt: row.occurred_at.toISOString(),
    receivedAt: row.received_at.toISOString(),
    release: row.release,
    platform: row.platform,
    runtime: row.runtime,
    message: row.message,
    exceptions: row.exceptions,
  }));
}
