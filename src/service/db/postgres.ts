import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createOutageLog, describeError, type OutageLogger } from '../../outage-log.js';
import {
  classifyConnectionFailure,
  databaseError,
  isConnectionError,
  type ConnectionFailure,
  type FailurePhase,
} from './connection-errors.js';
import type { Database, DatabaseCheck, Queryable } from './database.js';
import { listenOnOwnConnection } from './pg-listener.js';

/** Deadlock and serialization failure: PostgreSQL aborted one side, and running it again is safe. */
const RETRYABLE = new Set(['40P01', '40001']);
const ATTEMPTS = 3;

export interface PostgresOptions {
  /** Where the database's outage log writes; silent unless given. */
  logger?: OutageLogger;
  /**
   * For how long work that never reached the database (or a transaction whose
   * connection broke before COMMIT) is tried again before the caller hears of
   * it. Attempts start only within it; one may then take up to `connectTimeoutMs`.
   */
  retryWindowMs?: number;
  /** How long getting a connection may take: a database that does not answer must not hold requests for ever. */
  connectTimeoutMs?: number;
  max?: number;
}

const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 800;

const silent: OutageLogger = { warn: () => undefined, error: () => undefined, info: () => undefined };

/** A connection failure on its way to the retry loop, with what it means for the work. */
class ConnectionFailed extends Error {
  constructor(
    readonly failure: ConnectionFailure,
    readonly phase: FailurePhase,
    readonly original: unknown,
  ) {
    super('connection failed', { cause: original });
  }
}

// timestamptz as Date and jsonb as objects are pg's defaults; counts are cast to int in SQL.
export function openPostgres(connectionString: string, options: PostgresOptions = {}): Database {
  const retryWindowMs = options.retryWindowMs ?? 2500;
  const poolSize = options.max ?? 10;
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    idleTimeoutMillis: 10_000,
    // A peer that vanished without a word (a failover, a cut network) is found out by TCP keep-alive.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client losing its server must not crash the process; the pool drops it and the next
  // checkout connects anew. Checked-out clients have their own listener (see `checkout`).
  pool.on('error', () => undefined);
  const outage = createOutageLog({ logger: options.logger ?? silent, subject: 'the database' });
  const listeners = new Set<() => Promise<void>>();

  /**
   * A client with an 'error' listener for as long as it is checked out (a
   * client without one crashes the process when its connection breaks), and
   * a release that makes the pool discard it when it failed.
   */
  async function checkout(): Promise<{ client: pg.PoolClient; lost: () => unknown; release: (error?: unknown) => void }> {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      const failure = classifyConnectionFailure(error, 'connect');
      if (!failure) throw error;
      // Waiting for one of `max` busy connections is not the database being away: say which it was.
      const busy = pool.totalCount >= poolSize && /^timeout exceeded/.test((error as Error).message);
      const why = busy
        ? Object.assign(new Error(`timeout exceeded when trying to connect: all ${poolSize} connections stayed busy`, { cause: error }), {
            code: 'POOL_EXHAUSTED',
          })
        : error;
      throw new ConnectionFailed(failure, 'connect', why);
    }
    let lostWith: unknown;
    const onError = (error: Error) => {
      lostWith ??= error;
    };
    client.on('error', onError);
    return {
      client,
      lost: () => lostWith,
      release: (error?: unknown) => {
        client.off('error', onError);
        // The pool discards a client released with an error, and keeps one released without.
        const broken = lostWith !== undefined || (error !== undefined && isConnectionError(error));
        client.release(broken ? new Error('connection broken') : undefined);
      },
    };
  }

  function failed(error: unknown, phase: FailurePhase, lost: unknown): unknown {
    const failure = classifyConnectionFailure(error, phase, lost !== undefined);
    return failure ? new ConnectionFailed(failure, phase, error) : error;
  }

  async function once<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const { client, lost, release } = await checkout();
    let phase: FailurePhase = 'transaction';
    let failure: unknown;
    try {
      await client.query('BEGIN');
      const tx: Queryable = {
        async query<Row>(sql: string, params: readonly unknown[] = []) {
          const result = await client.query(sql, params as unknown[]);
          return result.rows as Row[];
        },
      };
      const value = await work(tx);
      phase = 'commit';
      await client.query('COMMIT');
      return value;
    } catch (error) {
      failure = error;
      if (phase === 'transaction' && lost() === undefined && !isConnectionError(error)) {
        await client.query('ROLLBACK').catch(() => undefined);
      }
      throw failed(error, phase, lost());
    } finally {
      release(failure);
    }
  }

  async function statement<Row>(sql: string, params: readonly unknown[]): Promise<Row[]> {
    const { client, lost, release } = await checkout();
    let failure: unknown;
    try {
      const result = await client.query(sql, params as unknown[]);
      return result.rows as Row[];
    } catch (error) {
      failure = error;
      throw failed(error, 'statement', lost());
    } finally {
      release(failure);
    }
  }

  /**
   * Runs `attempt` until it succeeds, retrying connection failures that left
   * nothing saved (for `retryWindowMs`, with doubling pauses) and, `deadlocks`
   * times, deadlocks and serialization failures. A failure that may have been
   * saved is surfaced at once.
   */
  async function retrying<T>(attempt: () => Promise<T>, deadlockAttempts: number): Promise<T> {
    const started = Date.now();
    let delay = FIRST_DELAY_MS;
    for (let deadlocks = 1; ; ) {
      try {
        const value = await attempt();
        outage.recovered();
        return value;
      } catch (error) {
        if (error instanceof ConnectionFailed) {
          const pause = delay / 2 + Math.random() * (delay / 2);
          if (error.failure === 'ambiguous' || Date.now() - started + pause > retryWindowMs) {
            throw databaseError(error.original, error.failure, error.phase);
          }
          await sleep(pause);
          delay = Math.min(delay * 2, MAX_DELAY_MS);
          continue;
        }
        const code = (error as { code?: string }).code;
        if (deadlocks >= deadlockAttempts || !code || !RETRYABLE.has(code)) throw error;
        deadlocks += 1;
      }
    }
  }

  /**
   * SELECT 1 until it answers or fails to get a connection: clients left in
   * the pool by a connection that died unseen fail one after the other, and
   * running SELECT 1 again is always safe.
   */
  async function probe(): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await statement('SELECT 1', []);
        return;
      } catch (error) {
        if (!(error instanceof ConnectionFailed) || error.phase === 'connect' || attempt >= poolSize) throw error;
      }
    }
  }

  return {
    kind: 'postgres',
    outage,
    query<Row>(sql: string, params: readonly unknown[] = []) {
      return retrying(() => statement<Row>(sql, params), 1);
    },
    transaction<T>(work: (tx: Queryable) => Promise<T>) {
      return retrying(() => once(work), ATTEMPTS);
    },
    async check(timeoutMs: number): Promise<DatabaseCheck> {
      const started = Date.now();
      const stop = new AbortController();
      const answer = probe().then(
        (): Omit<DatabaseCheck, 'ms'> => {
          outage.recovered();
          return { reachable: true };
        },
        (error: unknown): Omit<DatabaseCheck, 'ms'> => {
          return { reachable: false, error: describeError(error instanceof ConnectionFailed ? error.original : error) };
        },
      );
      const late = sleep(timeoutMs, undefined, { signal: stop.signal }).then(
        (): Omit<DatabaseCheck, 'ms'> => ({ reachable: false, error: `no answer within ${timeoutMs} ms` }),
        () => ({ reachable: false }),
      );
      const result = await Promise.race([answer, late]);
      stop.abort();
      return { ...result, ms: Date.now() - started };
    },
    async listen(channel: string, onNotify: (payload: string) => void) {
      const stop = await listenOnOwnConnection(connectionString, channel, onNotify, {
        connectTimeoutMs: options.connectTimeoutMs ?? 2000,
        logger: options.logger ?? silent,
      });
      listeners.add(stop);
      return async () => {
        listeners.delete(stop);
        await stop();
      };
    },
    async close() {
      await Promise.all([...listeners].map((stop) => stop()));
      listeners.clear();
      await pool.end();
    },
  };
}
