import type { Database } from './database.js';
import { migrate } from './migrate.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';

export interface DatabaseOptions {
  /** postgres://… selects a real PostgreSQL; unset means embedded PGlite. */
  databaseUrl?: string | undefined;
  /** PGlite data directory; unset means in memory. */
  pgliteDir?: string | undefined;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const db = options.databaseUrl ? openPostgres(options.databaseUrl) : await openPglite(options.pgliteDir);
  try {
    await migrate(db);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  return db;
}
