import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/service/db/migrate.js';
import { openDatabase } from '../../src/service/db/open.js';
import { migrations } from '../../src/service/db/migrations/index.js';
import { ensureAccount } from '../../src/service/store/accounts.js';
import { createTestDatabase, DB_KINDS } from '../support/databases.js';

describe.each(DB_KINDS)('database on %s', (kind) => {
  it('applies every migration once, and again is a no-op', async () => {
    const database = await createTestDatabase(kind);
    const db = await openDatabase({ databaseUrl: database.url });
    try {
      const applied = await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
      expect(applied.map((row) => row.name)).toEqual(migrations.map((migration) => migration.name));
      expect(await migrate(db)).toEqual([]);
    } finally {
      await db.close();
      await database.drop();
    }
  });

  it('rolls a failed transaction back whole', async () => {
    const database = await createTestDatabase(kind);
    const db = await openDatabase({ databaseUrl: database.url });
    try {
      await expect(
        db.transaction(async (tx) => {
          await ensureAccount(tx, '00000000-0000-4000-8000-0000000000aa', 'kept?');
          await tx.query('SELECT * FROM no_such_table');
        }),
      ).rejects.toThrow(/no_such_table/);
      expect(await db.query('SELECT * FROM accounts')).toEqual([]);
    } finally {
      await db.close();
      await database.drop();
    }
  });
});

describe('embedded PGlite with a data directory', () => {
  it('keeps its data across restarts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'outpost-pglite-'));
    try {
      const first = await openDatabase({ pgliteDir: dir });
      await ensureAccount(first, '00000000-0000-4000-8000-0000000000bb', 'persisted');
      await first.close();
      const second = await openDatabase({ pgliteDir: dir });
      const rows = await second.query<{ name: string }>('SELECT name FROM accounts');
      await second.close();
      expect(rows).toEqual([{ name: 'persisted' }]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
