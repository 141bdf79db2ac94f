import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';

export interface SubscriptionRecord {
  id: string;
  type: 'EMAIL';
  address: string;
  status: 'PENDING' | 'VERIFIED';
  created_at: string;
  updated_at: string;
}

interface SubscriptionRow {
  id: string;
  status_page_id: string;
  type: 'EMAIL';
  address: string;
  status: 'PENDING' | 'VERIFIED';
  unsubscribe_token: string;
  created_at: Date;
  updated_at: Date;
}

const record = (row: SubscriptionRow): SubscriptionRecord => ({
  id: row.id,
  type: row.type,
  address: row.address,
  status: row.status,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

const digest = (token: string) => createHash('sha256').update(token).digest('hex');
const token = () => randomBytes(24).toString('base64url');

/**
 * A PENDING subscription and the token its verification link carries; only
 * the token's digest is stored. Undefined when the address is already on the
 * page's list (compared without case).
 */
export async function createSubscription(
  db: Queryable,
  statusPageId: string,
  address: string,
): Promise<{ subscription: SubscriptionRecord; verifyToken: string } | undefined> {
  const verifyToken = token();
  const [row] = await db.query<SubscriptionRow>(
    `INSERT INTO status_page_subscriptions (id, status_page_id, address, status, verify_token_hash, unsubscribe_token)
     VALUES ($1, $2, $3, 'PENDING', $4, $5) ON CONFLICT DO NOTHING RETURNING *`,
    [randomUUID(), statusPageId, address, digest(verifyToken), token()],
  );
  return row && { subscription: record(row), verifyToken };
}

export async function listSubscriptions(db: Queryable, statusPageId: string): Promise<SubscriptionRecord[]> {
  const rows = await db.query<SubscriptionRow>(
    'SELECT * FROM status_page_subscriptions WHERE status_page_id = $1 ORDER BY created_at, id',
    [statusPageId],
  );
  return rows.map(record);
}

export async function deleteSubscription(db: Queryable, statusPageId: string, id: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM status_page_subscriptions WHERE status_page_id = $1 AND id = $2 RETURNING id', [
    statusPageId,
    id,
  ]);
  return rows.length > 0;
}

/** The subscription the link's token names on this page, now VERIFIED; undefined for a token that names none. */
export async function verifySubscription(db: Queryable, statusPageId: string, verifyToken: string): Promise<SubscriptionRecord | undefined> {
  const [row] = await db.query<SubscriptionRow>(
    `UPDATE status_page_subscriptions SET status = 'VERIFIED', updated_at = CASE WHEN status = 'VERIFIED' THEN updated_at ELSE now() END
     WHERE status_page_id = $1 AND verify_token_hash = $2 RETURNING *`,
    [statusPageId, digest(verifyToken)],
  );
  return row && record(row);
}

export async function unsubscribe(db: Queryable, statusPageId: string, unsubscribeToken: string): Promise<boolean> {
  const rows = await db.query(
    'DELETE FROM status_page_subscriptions WHERE status_page_id = $1 AND unsubscribe_token = $2 RETURNING id',
    [statusPageId, unsubscribeToken],
  );
  return rows.length > 0;
}

export interface Subscriber {
  address: string;
  pageName: string;
  pageUrl: string;
  unsubscribeToken: string;
}

/**
 * VERIFIED subscribers of the account's pages, one per address and page,
 * with what their e-mail needs: of every page, or with `serviceIds` of the
 * pages that show any of them.
 */
export async function verifiedSubscribers(db: Queryable, accountId: string, serviceIds?: readonly string[]): Promise<Subscriber[]> {
  return db.query<Subscriber>(
    `SELECT s.address, p.name AS "pageName", p.url AS "pageUrl", s.unsubscribe_token AS "unsubscribeToken"
     FROM status_page_subscriptions s JOIN status_pages p ON p.id = s.status_page_id
     WHERE p.account_id = $1 AND s.status = 'VERIFIED'
       AND ($2::text[] IS NULL OR EXISTS (SELECT 1 FROM jsonb_array_elements(p.cards) card WHERE card->'services' ?| $2::text[]))
     ORDER BY p.url, s.address`,
    [accountId, serviceIds ?? null],
  );
}
