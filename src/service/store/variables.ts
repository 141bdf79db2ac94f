import type { Database, Queryable } from '../db/database.js';
import type { EnvironmentVariable } from '../check-types/environment-variables.js';

/** Every run of a script check carries all of them to the agent, so the list stays short. */
export const MAX_ACCOUNT_VARIABLES = 100;

const COLUMNS = 'key, value, locked, secret';

export async function listVariables(
  db: Queryable,
  accountId: string,
  page: { limit: number; page: number },
): Promise<EnvironmentVariable[]> {
  return db.query<EnvironmentVariable>(
    `SELECT ${COLUMNS} FROM environment_variables WHERE account_id = $1 ORDER BY key LIMIT $2 OFFSET $3`,
    [accountId, page.limit, (page.page - 1) * page.limit],
  );
}

/** All of them, in key order: what a run starts with. */
export async function allVariables(db: Queryable, accountId: string): Promise<EnvironmentVariable[]> {
  return db.query<EnvironmentVariable>(
    `SELECT ${COLUMNS} FROM environment_variables WHERE account_id = $1 ORDER BY key`,
    [accountId],
  );
}

export async function getVariable(db: Queryable, accountId: string, key: string): Promise<EnvironmentVariable | undefined> {
  const [row] = await db.query<EnvironmentVariable>(
    `SELECT ${COLUMNS} FROM environment_variables WHERE account_id = $1 AND key = $2`,
    [accountId, key],
  );
  return row;
}

export type CreateOutcome = { created: EnvironmentVariable } | { refused: 'exists' | 'full' };

/**
 * Creates a variable unless the key is taken or the account is at its cap.
 * The account row is locked first, so two concurrent creates cannot both
 * take the last free place.
 */
export async function createVariable(
  db: Database,
  accountId: string,
  variable: EnvironmentVariable,
): Promise<CreateOutcome> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    if (await getVariable(tx, accountId, variable.key)) return { refused: 'exists' };
    const [count] = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM environment_variables WHERE account_id = $1',
      [accountId],
    );
    if (count!.n >= MAX_ACCOUNT_VARIABLES) return { refused: 'full' };
    const [row] = await tx.query<EnvironmentVariable>(
      `INSERT INTO environment_variables (account_id, key, value, locked, secret) VALUES ($1, $2, $3, $4, $5)
       RETURNING ${COLUMNS}`,
      [accountId, variable.key, variable.value, variable.locked, variable.secret],
    );
    return { created: row! };
  });
}

export async function updateVariable(
  db: Queryable,
  accountId: string,
  variable: EnvironmentVariable,
): Promise<EnvironmentVariable | undefined> {
  const [row] = await db.query<EnvironmentVariable>(
    `UPDATE environment_variables SET value = $3, locked = $4, secret = $5, updated_at = now()
     WHERE account_id = $1 AND key = $2 RETURNING ${COLUMNS}`,
    [accountId, variable.key, variable.value, variable.locked, variable.secret],
  );
  return row;
}

export async function deleteVariable(db: Queryable, accountId: string, key: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM environment_variables WHERE account_id = $1 AND key = $2 RETURNING key', [
    accountId,
    key,
  ]);
  return rows.length > 0;
}
