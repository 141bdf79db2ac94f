import type { Queryable } from '../db/database.js';

export interface CodeBundleRow {
  id: string;
  account_id: string;
  sha256: string;
  size: number;
  path: string;
  created_at: Date;
}

export async function insertCodeBundle(
  db: Queryable,
  bundle: { id: string; accountId: string; sha256: string; size: number; path: string },
): Promise<CodeBundleRow> {
  const [row] = await db.query<CodeBundleRow>(
    `INSERT INTO code_bundles (id, account_id, sha256, size, path) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [bundle.id, bundle.accountId, bundle.sha256, bundle.size, bundle.path],
  );
  return normalise(row!);
}

/** The bundle, when it belongs to the account; another account's bundle is as good as missing. */
export async function getCodeBundle(db: Queryable, accountId: string, id: string): Promise<CodeBundleRow | undefined> {
  const [row] = await db.query<CodeBundleRow>('SELECT * FROM code_bundles WHERE id = $1 AND account_id = $2', [id, accountId]);
  return row ? normalise(row) : undefined;
}

// bigint comes back as text from pg.
const normalise = (row: CodeBundleRow): CodeBundleRow => ({ ...row, size: Number(row.size) });
