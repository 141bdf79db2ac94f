import type { Queryable } from '../db/database.js';

/**
 * The secret stored under `name`, stored as `candidate` first if there is
 * none yet: every service instance sharing the database ends up with the
 * same value, whichever started first.
 */
export async function sharedSecret(db: Queryable, name: string, candidate: string): Promise<string> {
  await db.query('INSERT INTO service_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, candidate]);
  const [row] = await db.query<{ value: string }>('SELECT value FROM service_secrets WHERE name = $1', [name]);
  return row!.value;
}
