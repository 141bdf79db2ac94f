import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { hashKey, maskKey } from '../keys.js';

export type MemberRole = 'OWNER' | 'ADMIN' | 'READ_WRITE' | 'READ_ONLY';

export async function ensureAccount(db: Queryable, accountId: string, name: string): Promise<void> {
  await db.query('INSERT INTO accounts (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [accountId, name]);
}

/** A service key for the account, as automation (and the bootstrap setting) uses. */
export async function ensureApiKey(db: Queryable, accountId: string, rawKey: string): Promise<void> {
  await db.query(
    `INSERT INTO api_keys (id, account_id, key_hash, masked_key, kind, name) VALUES ($1, $2, $3, $4, 'SERVICE', 'bootstrap')
     ON CONFLICT (key_hash) DO NOTHING`,
    [randomUUID(), accountId, hashKey(rawKey), maskKey(rawKey)],
  );
}

/** Who a key acts as: its account, and for a user key its member's role. */
export interface KeyHolder {
  accountId: string;
  keyId: string;
  kind: 'USER' | 'SERVICE';
  /** undefined for a service key, which is not limited by a role. */
  role: MemberRole | undefined;
  memberId: string | undefined;
}

/** The holder of an API key, or undefined for an unknown or revoked key. */
export async function holderOfApiKey(db: Queryable, rawKey: string): Promise<KeyHolder | undefined> {
  const [row] = await db.query<{
    account_id: string;
    id: string;
    kind: 'USER' | 'SERVICE';
    member_id: string | null;
    role: MemberRole | null;
  }>(
    `SELECT k.account_id, k.id, k.kind, k.member_id, m.role FROM api_keys k LEFT JOIN members m ON m.id = k.member_id
     WHERE k.key_hash = $1`,
    [hashKey(rawKey)],
  );
  return (
    row && {
      accountId: row.account_id,
      keyId: row.id,
      kind: row.kind,
      role: row.role ?? undefined,
      memberId: row.member_id ?? undefined,
    }
  );
}

export interface AccountRecord {
  id: string;
  name: string;
}

export async function getAccount(db: Queryable, accountId: string): Promise<AccountRecord | undefined> {
  const [row] = await db.query<AccountRecord>('SELECT id, name FROM accounts WHERE id = $1', [accountId]);
  return row;
}
