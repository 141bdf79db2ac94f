import type { OutageLog } from '../../outage-log.js';

/**
 * The one seam between the service and PostgreSQL. Two implementations, the
 * machine's PostgreSQL (pg) and embedded PGlite, run the same SQL.
 */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** Whether the database answered a `SELECT 1` in time, and if not, why. */
export interface DatabaseCheck {
  reachable: boolean;
  /** Why not, when not reachable: "DATABASE_UNAVAILABLE: … ← ECONNREFUSED: …" or "no answer within 2000 ms". */
  error?: string;
  /** How long it took. */
  ms: number;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** One `SELECT 1` within `timeoutMs`, without retries: for readiness and /health. Never throws. */
  check(timeoutMs: number): Promise<DatabaseCheck>;
  /**
   * One outage log for the whole service: work that failed because the
   * database was unreachable reports there (`failed`); every statement that
   * succeeds ends the outage (`recovered`), so an outage is one line when it
   * starts and one when it ends.
   */
  readonly outage: OutageLog;
  /**
   * Hears NOTIFY on `channel` (PostgreSQL's LISTEN) until the answer's stop
   * is called. PostgreSQL listens on a connection of its own, outside the
   * pool, and connects again after losing it; what is sent while it is away
   * is not heard (listeners must not depend on every notification). Resolves
   * once listening, or, when the first connection fails, once it is being retried.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
