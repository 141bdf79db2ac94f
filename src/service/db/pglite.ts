import { PGlite } from '@electric-sql/pglite';
import { createOutageLog, describeError, type OutageLogger } from '../../outage-log.js';
import type { Database, Queryable } from './database.js';

const silent: OutageLogger = { warn: () => undefined, error: () => undefined, info: () => undefined };

/** Embedded PostgreSQL: in memory when no directory is given. It runs in the process, so it cannot become unreachable. */
export async function openPglite(dataDir?: string): Promise<Database> {
  const db = await PGlite.create(dataDir ? { dataDir } : {});
  return {
    kind: 'pglite',
    outage: createOutageLog({ logger: silent, subject: 'the database' }),
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
    async check() {
      const started = Date.now();
      try {
        await db.query('SELECT 1');
        return { reachable: true, ms: Date.now() - started };
      } catch (error) {
        return { reachable: false, error: describeError(error), ms: Date.now() - started };
      }
    },
    async listen(channel: string, onNotify: (payload: string) => void) {
      const stop = await db.listen(channel, onNotify);
      return async () => {
        await stop();
      };
    },
    async close() {
      await db.close();
    },
  };
}
