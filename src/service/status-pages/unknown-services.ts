import type { Queryable } from '../db/database.js';
import { serviceNames } from '../store/status-pages.js';

/** Fields naming services that are not the account's, as `field.index`. */
export async function unknownServices(
  db: Queryable,
  accountId: string,
  lists: Record<string, readonly string[]>,
): Promise<Record<string, string>> {
  const known = await serviceNames(db, accountId, Object.values(lists).flat());
  const problems: Record<string, string> = {};
  for (const [field, ids] of Object.entries(lists)) {
    ids.forEach((id, index) => {
      if (!known.has(id)) problems[`${field}.${index}`] = 'unknown status page service';
    });
  }
  return problems;
}
