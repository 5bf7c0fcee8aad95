// Numbered .sql files in ./migrations, applied in order inside one transaction
// and recorded in schema_migrations. The stored views' upkeep is among them,
// generated from the declarations and checked in (view-migrations.ts). The
// advisory lock lets several instances (or parallel test processes) start
// against one database safely.
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from './db.ts';
import { MIGRATIONS_DIR, migrationFiles } from './view-migrations.ts';

const LOCK_ID = 7_390_211;

export async function migrate(db: Db): Promise<string[]> {
  const files = migrationFiles();
  return db.tx(async (tx) => {
    if (db.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.exec(fs.readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8'));
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
      applied.push(file);
    }
    return applied;
  });
}
