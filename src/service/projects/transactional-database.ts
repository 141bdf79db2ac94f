import type { Database, Queryable } from '../db/database.js';

/**
 * The service's database seen through one open transaction: code written for
 * a Database (the check routes' validation) reads and writes inside the
 * deploy's transaction, and a transaction it opens is that same one. PGlite
 * runs one transaction at a time, so a read outside it would wait forever.
 */
export function transactionalDatabase(db: Database, tx: Queryable): Database {
  return {
    kind: db.kind,
    outage: db.outage,
    query: (sql, params) => tx.query(sql, params),
    transaction: (work) => work(tx),
    check: (timeoutMs) => db.check(timeoutMs),
    listen: (channel, onNotify) => db.listen(channel, onNotify),
    close: () => Promise.reject(new Error('a transaction cannot close the database')),
  };
}
