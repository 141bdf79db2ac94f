/**
 * Everything the service stores, read back whole so a test can search it for
 * what must never be there: every row of every table of its database, as
 * JSON, and every file under its artifacts directory, zips opened entry by
 * entry (names included).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Queryable } from '../../src/service/db/database.js';
import { spellingsFound } from './secret-spellings.js';
import { readZip } from './zip.js';

export interface StoredItem {
  /** `table <name>` for a row, the path under the artifacts directory for a file, `path!entry` for a zip entry. */
  where: string;
  data: Buffer;
}

/**
 * Every row of every table of the service's own schema, as JSON text. Check
 * variables marked secret are stored as their check's definition and its
 * jobs' payloads must carry them to an agent: their values (objects
 * `{ key, value, secret: true }`) are left out, and anything else holding
 * them counts as a leak.
 */
export async function databaseRows(db: Queryable): Promise<StoredItem[]> {
  const tables = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const items: StoredItem[] = [];
  for (const { table_name: table } of tables) {
    const rows = await db.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${table.replace(/"/g, '""')}" t`);
    rows.forEach(({ row }, index) => {
      items.push({ where: `table ${table} row ${index}`, data: Buffer.from(JSON.stringify(withoutStoredSecretValues(JSON.parse(row))), 'utf8') });
    });
  }
  return items;
}

function withoutStoredSecretValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutStoredSecretValues);
  if (value === null || typeof value !== 'object') return value;
  const fields = value as Record<string, unknown>;
  if (fields.secret === true && typeof fields.value === 'string' && typeof fields.key === 'string') {
    return { ...fields, value: '<a check variable stored as secret>' };
  }
  return Object.fromEntries(Object.entries(fields).map(([key, inner]) => [key, withoutStoredSecretValues(inner)]));
}

/** Every file under `directory` (its path too), and each entry of those that are zips, by name and content. */
export async function artifactFiles(directory: string): Promise<StoredItem[]> {
  const items: StoredItem[] = [];
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const where = relative(directory, path);
    const data = await readFile(path);
    items.push({ where: `file name ${where}`, data: Buffer.from(where, 'utf8') }, { where, data });
    if (data.subarray(0, 4).equals(Buffer.from('PK\x03\x04', 'latin1'))) {
      try {
        for (const zipped of await readZip(path)) {
          items.push({ where: `${where}!name`, data: Buffer.from(zipped.name, 'utf8') }, { where: `${where}!${zipped.name}`, data: zipped.data });
        }
      } catch (error) {
        items.push({ where: `${where}!unreadable`, data: Buffer.from((error as Error).message, 'utf8') });
      }
    }
  }
  return items;
}

/** For each item holding one of the secrets (in any of the spellings given): where, and which. */
export function leaksIn(items: StoredItem[], secrets: Record<string, string[]>): string[] {
  const found: string[] = [];
  for (const item of items) {
    for (const [what, spellings] of Object.entries(secrets)) {
      const spelled = spellingsFound(item.data, spellings);
      if (spelled.length > 0) found.push(`${item.where}: ${what} (${spelled.length} spelling${spelled.length > 1 ? 's' : ''})`);
    }
  }
  return found;
}
