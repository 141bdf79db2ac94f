import { PGlite } from '@electric-sql/pglite';
import type { Database, Queryable } from './database.js';

/** Embedded PostgreSQL: in memory when no directory is given. */
export async function openPglite(dataDir?: string): Promise<Database> {
  const db = await PGlite.create(dataDir ? { dataDir } : {});
  return {
    kind: 'pglite',
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      const result = await db.query<Row>(sql, params as unknown[]);
      return result.rows;
    },
    async transaction<T>(work: (tx: Queryable) => Promise<T>) {
      return db.transaction(async (inner) => {
        const tx: Queryable = {
          async query<Row>(sql: string, params: readonly unknown[] = []) {
            const result = await inner.query<Row>(sql, params as unknown[]);
            return result.rows;
          },
        };
        return work(tx);
      });
    },
    async close() {
      await db.close();
    },
  };
}
