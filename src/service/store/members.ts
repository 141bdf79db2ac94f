import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { generateKey, hashKey, maskKey } from '../keys.js';
import type { MemberRole } from './accounts.js';

export interface MemberRecord {
  id: string;
  email: string;
  name: string;
  role: MemberRole;
  created_at: string;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  kind: 'USER' | 'SERVICE';
  memberId: string | null;
  maskedKey: string;
  created_at: string;
}

interface MemberRow {
  id: string;
  email: string;
  name: string;
  role: MemberRole;
  created_at: Date;
}

interface KeyRow {
  id: string;
  name: string;
  kind: 'USER' | 'SERVICE';
  member_id: string | null;
  masked_key: string;
  created_at: Date;
}

const member = (row: MemberRow): MemberRecord => ({ ...row, created_at: row.created_at.toISOString() });
const apiKey = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  kind: row.kind,
  memberId: row.member_id,
  maskedKey: row.masked_key,
  created_at: row.created_at.toISOString(),
});

export async function listMembers(db: Queryable, accountId: string): Promise<MemberRecord[]> {
  const rows = await db.query<MemberRow>(
    'SELECT id, email, name, role, created_at FROM members WHERE account_id = $1 ORDER BY created_at, id',
    [accountId],
  );
  return rows.map(member);
}

export async function getMember(db: Queryable, accountId: string, memberId: string): Promise<MemberRecord | undefined> {
  const [row] = await db.query<MemberRow>(
    'SELECT id, email, name, role, created_at FROM members WHERE account_id = $1 AND id = $2',
    [accountId, memberId],
  );
  return row && member(row);
}

/** Undefined when the address is already a member's (compared without case). */
export async function createMember(
  db: Queryable,
  accountId: string,
  input: { email: string; name: string; role: MemberRole },
): Promise<MemberRecord | undefined> {
  const [row] = await db.query<MemberRow>(
    `INSERT INTO members (id, account_id, email, name, role) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING RETURNING id, email, name, role, created_at`,
    [randomUUID(), accountId, input.email, input.name, input.role],
  );
  return row && member(row);
}

export type RemoveOutcome = 'removed' | 'not-found' | 'last-owner';

/**
 * Removes a member and, with them, their API keys. An account keeps at least
 * one owner; the account row is locked so two removals cannot both pass that
 * test and leave none.
 */
export async function removeMember(db: Database, accountId: string, memberId: string): Promise<RemoveOutcome> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    const target = await getMember(tx, accountId, memberId);
    if (!target) return 'not-found';
    if (target.role === 'OWNER') {
      const [owners] = await tx.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM members WHERE account_id = $1 AND role = 'OWNER'",
        [accountId],
      );
      if (owners!.n <= 1) return 'last-owner';
    }
    await tx.query('DELETE FROM members WHERE account_id = $1 AND id = $2', [accountId, memberId]);
    return 'removed';
  });
}

export type RoleChangeOutcome = { updated: MemberRecord } | 'not-found' | 'last-owner';

/**
 * Gives a member another role. The last owner cannot stop being one; the
 * account row is locked, as for a removal, so two changes cannot both pass
 * that test and leave no owner.
 */
export async function changeMemberRole(
  db: Database,
  accountId: string,
  memberId: string,
  role: MemberRole,
): Promise<RoleChangeOutcome> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    const target = await getMember(tx, accountId, memberId);
    if (!target) return 'not-found';
    if (target.role === 'OWNER' && role !== 'OWNER') {
      const [owners] = await tx.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM members WHERE account_id = $1 AND role = 'OWNER'",
        [accountId],
      );
      if (owners!.n <= 1) return 'last-owner';
    }
    const [row] = await tx.query<MemberRow>(
      'UPDATE members SET role = $3 WHERE account_id = $1 AND id = $2 RETURNING id, email, name, role, created_at',
      [accountId, memberId, role],
    );
    return { updated: member(row!) };
  });
}

export async function listApiKeys(db: Queryable, accountId: string): Promise<ApiKeyRecord[]> {
  const rows = await db.query<KeyRow>(
    'SELECT id, name, kind, member_id, masked_key, created_at FROM api_keys WHERE account_id = $1 ORDER BY created_at, id',
    [accountId],
  );
  return rows.map(apiKey);
}

export async function getApiKey(db: Queryable, accountId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  const [row] = await db.query<KeyRow>(
    'SELECT id, name, kind, member_id, masked_key, created_at FROM api_keys WHERE account_id = $1 AND id = $2',
    [accountId, keyId],
  );
  return row && apiKey(row);
}

/** A new key; its raw form exists only in this answer, the database keeps a digest. */
export async function createApiKey(
  db: Queryable,
  accountId: string,
  input: { name: string; memberId: string | null },
): Promise<ApiKeyRecord & { rawKey: string }> {
  const rawKey = generateKey('ok_');
  const [row] = await db.query<KeyRow>(
    `INSERT INTO api_keys (id, account_id, key_hash, masked_key, kind, member_id, name) VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING id, name, kind, member_id, masked_key, created_at`,
    [randomUUID(), accountId, hashKey(rawKey), maskKey(rawKey), input.memberId ? 'USER' : 'SERVICE', input.memberId, input.name],
  );
  return { ...apiKey(row!), rawKey };
}

export async function deleteApiKey(db: Queryable, accountId: string, keyId: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM api_keys WHERE account_id = $1 AND id = $2 RETURNING id', [accountId, keyId]);
  return rows.length > 0;
}
