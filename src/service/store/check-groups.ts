import type { Database, Queryable } from '../db/database.js';
import type { GroupDefinition } from '../check-groups/schema.js';
import type { CheckRow } from './checks.js';

export interface GroupRow {
  id: number;
  account_id: string;
  name: string;
  activated: boolean;
  tags: string[];
  definition: GroupDefinition;
  created_at: Date;
  updated_at: Date | null;
}

export async function createGroup(db: Queryable, accountId: string, definition: GroupDefinition): Promise<GroupRow> {
  const [row] = await db.query<GroupRow>(
    `INSERT INTO check_groups (account_id, name, activated, tags, definition) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [accountId, definition.name, definition.activated, JSON.stringify(definition.tags), JSON.stringify(definition)],
  );
  return row!;
}

export async function getGroup(db: Queryable, accountId: string, id: number): Promise<GroupRow | undefined> {
  const [row] = await db.query<GroupRow>('SELECT * FROM check_groups WHERE account_id = $1 AND id = $2', [accountId, id]);
  return row;
}

/** Oldest first; `tags` keeps groups with any of them, `names` those named exactly one of them. */
export async function listGroups(
  db: Queryable,
  accountId: string,
  query: { limit: number; page: number; tags: readonly string[]; names: readonly string[] },
): Promise<GroupRow[]> {
  return db.query<GroupRow>(
    `SELECT * FROM check_groups WHERE account_id = $1
       AND (cardinality($2::text[]) = 0 OR tags ?| $2::text[])
       AND (cardinality($3::text[]) = 0 OR name = ANY($3::text[]))
     ORDER BY id LIMIT $4 OFFSET $5`,
    [accountId, query.tags, query.names, query.limit, (query.page - 1) * query.limit],
  );
}

export async function updateGroup(
  db: Queryable,
  accountId: string,
  id: number,
  definition: GroupDefinition,
): Promise<GroupRow | undefined> {
  const [row] = await db.query<GroupRow>(
    `UPDATE check_groups SET name = $3, activated = $4, tags = $5, definition = $6, updated_at = now()
     WHERE account_id = $1 AND id = $2 RETURNING *`,
    [accountId, id, definition.name, definition.activated, JSON.stringify(definition.tags), JSON.stringify(definition)],
  );
  return row;
}

export type DeleteGroupOutcome = 'deleted' | 'not-found' | 'has-checks';

/** A group that still holds checks stays: deleting it would leave them pointing nowhere. */
export async function deleteGroup(db: Database, accountId: string, id: number): Promise<DeleteGroupOutcome> {
  return db.transaction(async (tx) => {
    const [group] = await tx.query<{ id: number }>(
      'SELECT id FROM check_groups WHERE account_id = $1 AND id = $2 FOR UPDATE',
      [accountId, id],
    );
    if (!group) return 'not-found';
    const [members] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM checks WHERE group_id = $1', [id]);
    if (members!.n > 0) return 'has-checks';
    await tx.query('DELETE FROM check_groups WHERE id = $1', [id]);
    return 'deleted';
  });
}

/** The group's checks in run order: groupOrder, those without one last, then oldest first. */
export async function groupChecks(db: Queryable, accountId: string, groupId: number): Promise<CheckRow[]> {
  return db.query<CheckRow>(
    `SELECT * FROM checks WHERE account_id = $1 AND group_id = $2
     ORDER BY (definition->>'groupOrder')::float8 NULLS LAST, created_at, id`,
    [accountId, groupId],
  );
}

export async function groupOfCheck(db: Queryable, check: CheckRow): Promise<GroupRow | undefined> {
  if (check.group_id === null || check.group_id === undefined) return undefined;
  return getGroup(db, check.account_id, check.group_id);
}
