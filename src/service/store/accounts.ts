import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { hashKey, maskKey } from '../keys.js';

export async function ensureAccount(db: Queryable, accountId: string, name: string): Promise<void> {
  await db.query('INSERT INTO accounts (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [accountId, name]);
}

export async function ensureApiKey(db: Queryable, accountId: string, rawKey: string): Promise<void> {
  await db.query(
    `INSERT INTO api_keys (id, account_id, key_hash, masked_key) VALUES ($1, $2, $3, $4)
     ON CONFLICT (key_hash) DO NOTHING`,
    [randomUUID(), accountId, hashKey(rawKey), maskKey(rawKey)],
  );
}

/** The account an API key belongs to, or undefined for an unknown key. */
export async function accountForApiKey(db: Queryable, rawKey: string): Promise<string | undefined> {
  const rows = await db.query<{ account_id: string }>('SELECT account_id FROM api_keys WHERE key_hash = $1', [
    hashKey(rawKey),
  ]);
  return rows[0]?.account_id;
}
