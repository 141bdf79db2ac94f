import type { Queryable } from '../db/database.js';

/**
 * Takes this sweep's turn and records it, in the caller's transaction: the
 * row stays locked until it ends, so instances sweep one at a time. Answers
 * the milliseconds since the last sweep of any instance; undefined before the first.
 */
export async function takeSweepTurn(tx: Queryable): Promise<number | undefined> {
  const [row] = await tx.query<{ gap_ms: number | null }>(
    'SELECT (extract(epoch FROM now() - last_at) * 1000)::float8 AS gap_ms FROM lease_sweeps WHERE id FOR UPDATE',
  );
  // A turn that waited for another's lock started before that one finished: time never goes back.
  await tx.query('UPDATE lease_sweeps SET last_at = GREATEST(last_at, now()) WHERE id');
  return row?.gap_ms ?? undefined;
}
