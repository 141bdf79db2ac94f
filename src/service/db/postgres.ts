import pg from 'pg';
import type { Database, Queryable } from './database.js';

/** Deadlock and serialization failure: PostgreSQL aborted one side, and running it again is safe. */
const RETRYABLE = new Set(['40P01', '40001']);
const ATTEMPTS = 3;

// timestamptz as Date and jsonb as objects are pg's defaults; counts are cast to int in SQL.
export function openPostgres(connectionString: string): Database {
  const pool = new pg.Pool({ connectionString, max: 10 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);

  async function once<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const tx: Queryable = {
        async query<Row>(sql: string, params: readonly unknown[] = []) {
          const result = await client.query(sql, params as unknown[]);
          return result.rows as Row[];
        },
      };
      const value = await work(tx);
      await client.query('COMMIT');
      return value;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  return {
    kind: 'postgres',
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      const result = await pool.query(sql, params as unknown[]);
      return result.rows as Row[];
    },
    async transaction<T>(work: (tx: Queryable) => Promise<T>) {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await once(work);
        } catch (error) {
          const code = (error as { code?: string }).code;
          if (attempt >= ATTEMPTS || !code || !RETRYABLE.has(code)) throw error;
        }
      }
    },
    async close() {
      await pool.end();
    },
  };
}
