import type { Queryable } from '../db/database.js';

export interface WindowCount {
  /** Hits in the window, this one included. */
  hits: number;
  /** Milliseconds until the window resets. */
  ttlMs: number;
}

/**
 * Counts one hit of `key` in one statement: a window that has run out starts
 * again at 1 with `windowMs` to go. Row locking orders concurrent hits from
 * every instance, so none is lost.
 */
export async function countHit(db: Queryable, key: string, windowMs: number): Promise<WindowCount> {
  const [row] = await db.query<WindowCount>(
    `INSERT INTO rate_limit_windows AS w (key, hits, resets_at)
     VALUES ($1, 1, clock_timestamp() + make_interval(secs => $2::float8 / 1000))
     ON CONFLICT (key) DO UPDATE SET
       hits = CASE WHEN w.resets_at <= clock_timestamp() THEN 1 ELSE w.hits + 1 END,
       resets_at = CASE WHEN w.resets_at <= clock_timestamp() THEN EXCLUDED.resets_at ELSE w.resets_at END
     RETURNING hits, greatest(0, ceil(extract(epoch FROM resets_at - clock_timestamp()) * 1000))::int AS "ttlMs"`,
    [key, windowMs],
  );
  return row!;
}

/** The count of `key` without counting; zero hits when its window has run out or never began. */
export async function readHits(db: Queryable, key: string): Promise<WindowCount> {
  const [row] = await db.query<WindowCount>(
    `SELECT hits, greatest(0, ceil(extract(epoch FROM resets_at - clock_timestamp()) * 1000))::int AS "ttlMs"
     FROM rate_limit_windows WHERE key = $1 AND resets_at > clock_timestamp()`,
    [key],
  );
  return row ?? { hits: 0, ttlMs: 0 };
}

/** Forgets windows that ran out; answers how many. */
export async function pruneWindows(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    'WITH gone AS (DELETE FROM rate_limit_windows WHERE resets_at < now() RETURNING 1) SELECT count(*)::int AS n FROM gone',
  );
  return row?.n ?? 0;
}
