import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type DbKind = 'pglite' | 'postgres';
/** Every service test runs once on each: the two must behave the same. */
export const DB_KINDS: readonly DbKind[] = ['pglite', 'postgres'];

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  /** undefined for PGlite: the service then runs it embedded, in memory. */
  url: string | undefined;
  drop(): Promise<void>;
}

/** A fresh database per test file on the machine's PostgreSQL, dropped afterwards. */
export async function createTestDatabase(kind: DbKind): Promise<TestDatabase> {
  if (kind === 'pglite') return { url: undefined, drop: async () => undefined };
  const name = `outpost_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
