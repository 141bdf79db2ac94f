import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseRefusedError, DatabaseUnavailableError } from '../../errors/index.js';
import type { Logger } from '../../logging.js';
import { connectionErrorCode, isDatabaseOutage } from './connection-errors.js';
import type { Database } from './database.js';
import { migrate } from './migrate.js';
import { openPglite } from './pglite.js';
import { openPostgres, type PostgresOptions } from './postgres.js';

export interface DatabaseOptions {
  /** postgres://… selects a real PostgreSQL; unset means embedded PGlite. */
  databaseUrl?: string | undefined;
  /** PGlite data directory; unset means in memory. */
  pgliteDir?: string | undefined;
  /** Where waiting for the database, and its outages later, are told; silent unless given. */
  logger?: Logger | undefined;
  /**
   * For how long an unreachable PostgreSQL is waited for at start, in seconds
   * (DATABASE_CONNECT_TIMEOUT_SECONDS); 0 or unset: fail at the first failure.
   */
  connectTimeoutSeconds?: number | undefined;
  /** Pool and retry settings; tests shorten them. */
  postgres?: Omit<PostgresOptions, 'logger'> | undefined;
}

/** Answers of a PostgreSQL that is up but will not have the service, by SQLSTATE: what to check. */
const REFUSALS: Record<string, string> = {
  '28P01': 'check the user and password in DATABASE_URL',
  '28000': 'check the user in DATABASE_URL and pg_hba.conf',
  '3D000': 'create the database or fix its name in DATABASE_URL',
  '42501': 'the user in DATABASE_URL lacks a privilege the service needs (it creates its tables)',
};

const FIRST_WAIT_MS = 500;
const MAX_WAIT_MS = 5000;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (!options.databaseUrl) {
    const db = await openPglite(options.pgliteDir);
    try {
      await migrate(db);
    } catch (error) {
      await db.close().catch(() => undefined);
      throw error;
    }
    return db;
  }
  const db = openPostgres(options.databaseUrl, { ...options.postgres, logger: options.logger });
  try {
    await waitAndMigrate(db, options.databaseUrl, options);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  return db;
}

/**
 * Migrates, waiting for PostgreSQL as long as allowed when it cannot be
 * reached: in a deployment the service often starts before its database.
 * One line when the waiting starts, one when it ends; an error naming the
 * address and the reason when time is up. Migrations are safe to repeat.
 */
async function waitAndMigrate(db: Database, url: string, options: DatabaseOptions): Promise<void> {
  const started = Date.now();
  const limitMs = Math.max(0, options.connectTimeoutSeconds ?? 0) * 1000;
  const address = databaseAddress(url);
  let pause = FIRST_WAIT_MS;
  let waiting = false;
  for (;;) {
    try {
      await migrate(db);
      if (waiting) {
        options.logger?.info({ address, waitedSeconds: Math.round((Date.now() - started) / 1000) }, `the database at ${address} answers; starting`);
      }
      return;
    } catch (error) {
      const refusal = REFUSALS[(error as { code?: string }).code ?? ''];
      if (refusal) {
        throw new DatabaseRefusedError(
          `PostgreSQL at ${address} refused the service: ${(error as Error).message}; ${refusal}`,
          { cause: error },
        );
      }
      if (!isDatabaseOutage(error)) throw error;
      const code = connectionErrorCode(error.cause);
      const elapsed = Date.now() - started;
      if (elapsed >= limitMs) {
        const waited = limitMs > 0 ? ` after waiting ${Math.round(elapsed / 1000)} s` : '';
        throw new DatabaseUnavailableError(
          `The database at ${address} is unreachable (${code})${waited}; check DATABASE_URL and that PostgreSQL is running` +
            (limitMs > 0 ? ', or wait longer with DATABASE_CONNECT_TIMEOUT_SECONDS' : ''),
          { cause: error },
        );
      }
      if (!waiting) {
        waiting = true;
        options.logger?.warn(
          { address, code },
          `waiting for the database at ${address} (${code}); retrying for up to ${Math.round(limitMs / 1000)} s (DATABASE_CONNECT_TIMEOUT_SECONDS)`,
        );
      }
      await sleep(Math.min(pause, limitMs - elapsed));
      pause = Math.min(pause * 2, MAX_WAIT_MS);
    }
  }
}

/** "db.example.com:5432" from a connection string, without its credentials; a socket directory when it names one. */
export function databaseAddress(url: string): string {
  try {
    const parsed = new URL(url);
    const socket = parsed.searchParams.get('host');
    const host = socket ?? (decodeURIComponent(parsed.hostname) || 'localhost');
    const port = parsed.port || parsed.searchParams.get('port') || '5432';
    if (host.startsWith('/')) return `${host} (port ${port})`;
    return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
  } catch {
    return 'DATABASE_URL';
  }
}
