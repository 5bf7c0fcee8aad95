// Numbered .sql files in ./migrations, applied in order inside one transaction
// and recorded in schema_migrations. The stored views' upkeep is among them,
// generated from the declarations and checked in (view-migrations.ts). The
// advisory lock lets several instances (or parallel test processes) start
// against one database safely.
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from './db.ts';

export const MIGRATIONS_DIR = path.join(import.meta.dirname, 'migrations');

const LOCK_ID = 7_390_211;

/**
 * What identifies a migration: its number, with the letter of a lettered
 * one (`009_a_events_feed.sql` -> `009_a`), never the words after it. A
 * migration is applied once per key, so a file renamed for a better
 * description is recognised as applied; schema_migrations keeps the name
 * each was applied under (what databases recorded before keys, too).
 */
export function migrationKey(file: string): string {
  const key = /^(\d{3})(_[a-z](?=_))?/.exec(file);
  if (!key) throw new Error(`migration ${file}: its name does not start with a three-digit number`);
  return key[0];
}

/** The migration files of `dir` in the order they apply; two with one key are a mistake refused before anything runs. */
export function migrationFiles(dir = MIGRATIONS_DIR): string[] {
  const files = fs
    .readdirSync(dir)
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort();
  const byKey = new Map<string, string>();
  for (const file of files) {
    const other = byKey.get(migrationKey(file));
    if (other) throw new Error(`migrations ${other} and ${file} share the key ${migrationKey(file)}: give one another number`);
    byKey.set(migrationKey(file), file);
  }
  return files;
}

/** `dir`: tests only. */
export async function migrate(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = migrationFiles(dir);
  return db.tx(async (tx) => {
    if (db.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => migrationKey(r.version)));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(migrationKey(file))) continue;
      await tx.exec(fs.readFileSync(path.join(dir, file), 'utf8'));
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
      applied.push(file);
    }
    return applied;
  });
}
