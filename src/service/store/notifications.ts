import type { Queryable } from '../db/database.js';

/** Sends each payload as one NOTIFY on `channel`; PostgreSQL delivers them to every connection that LISTENs there. */
export async function notifyAll(db: Queryable, channel: string, payloads: readonly string[]): Promise<void> {
  if (payloads.length === 0) return;
  await db.query('SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload', [channel, payloads]);
}
