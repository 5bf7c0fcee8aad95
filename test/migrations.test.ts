// Migrations are keyed by their number (src/platform/db/migrate.ts): a file
// renamed after it was applied is recognised as applied and never runs twice,
// whatever name the database recorded; two files with one number are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isolatedDatabase } from './helpers/webhooks.ts';
import { openDb } from '../src/platform/db/open-db.ts';
import { migrate, migrationFiles, migrationKey } from '../src/platform/db/migrate.ts';

const MIGRATIONS = path.join(import.meta.dirname, '../src/platform/db/migrations');

/** A copy of the migrations in a temp dir, with `renames` (old name -> new name) and `added` files. */
function migrationsCopy(renames: Record<string, string>, added: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-migrations-'));
  for (const file of fs.readdirSync(MIGRATIONS)) fs.copyFileSync(path.join(MIGRATIONS, file), path.join(dir, renames[file] ?? file));
  for (const [file, sql] of Object.entries(added)) fs.writeFileSync(path.join(dir, file), sql);
  return dir;
}

test('a migration key is its number and letter, not its words', () => {
  assert.equal(migrationKey('001_spine.sql'), '001');
  assert.equal(migrationKey('009_a_events_feed.sql'), '009_a');
  assert.equal(migrationKey('009_b_idempotency_keys.sql'), '009_b');
  assert.equal(migrationKey('019_customer_key.sql'), '019');
  assert.equal(migrationKey('021_s_views.sql'), '021_s');
  assert.throws(() => migrationKey('spine.sql'), /three-digit number/);
  // Every migration of the service has a key of its own.
  const keys = migrationFiles().map(migrationKey);
  assert.equal(new Set(keys).size, keys.length);
});

test('a migration renamed after it was applied is not applied again; a new one still is', async () => {
  const database = await isolatedDatabase();
  const db = await openDb({
    databaseUrl: database.env.DATABASE_URL ?? null,
    databaseDirectUrl: database.env.DATABASE_DIRECT_URL,
    dataDir: 'memory://',
  });
  const dir = migrationsCopy(
    // 001 and 032 create tables without IF NOT EXISTS: running either twice would fail the whole migration.
    { '001_spine.sql': '001_accounts_and_keys.sql', '009_b_idempotency_keys.sql': '009_b_idempotency.sql', '032_oauth.sql': '032_oauth_clients.sql' },
    { '999_probe.sql': 'CREATE TABLE migration_probe (id int PRIMARY KEY);' },
  );
  try {
    const first = await migrate(db);
    assert.deepEqual(
      first.filter((x) => !x.startsWith('view ')),
      migrationFiles(),
    );
    const recorded = async () =>
      (await db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
    const before = await recorded();

    assert.deepEqual(await migrate(db, dir), ['999_probe.sql'], 'only the new migration runs; the renamed ones were applied under their old names');
    assert.deepEqual(await recorded(), [...before, '999_probe.sql'], 'the renamed ones keep the names they were applied under');
    assert.equal((await db.query('SELECT count(*)::int AS n FROM migration_probe')).rows[0].n, 0);
    assert.deepEqual(await migrate(db, dir), [], 'and nothing runs a second time');
    assert.deepEqual(await migrate(db), [], 'back under the old names: nothing runs either');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await db.close();
    await database.drop();
  }
});

test('two migrations with one key are refused before anything runs', async () => {
  const dir = migrationsCopy({}, { '036_another_simulator.sql': 'CREATE TABLE never_made (id int);' });
  try {
    assert.throws(() => migrationFiles(dir), /migrations 036_another_simulator\.sql and 036_courier_simulator\.sql share the key 036/);
    const database = await isolatedDatabase();
    const db = await openDb({
      databaseUrl: database.env.DATABASE_URL ?? null,
      databaseDirectUrl: database.env.DATABASE_DIRECT_URL,
      dataDir: 'memory://',
    });
    try {
      await assert.rejects(migrate(db, dir), /share the key 036/);
      assert.equal((await db.query("SELECT to_regclass('schema_migrations') AS t")).rows[0].t, null, 'nothing ran');
    } finally {
      await db.close();
      await database.drop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
