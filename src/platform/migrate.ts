// Numbered .sql files in ./migrations, applied in order inside one transaction
// and recorded in schema_migrations, then the upkeep of the stored views
// (view-upkeep.ts) in the same transaction. The advisory lock lets several
// instances (or parallel test processes) start against one database safely.
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from './db.ts';
import type { View } from './stored-view.ts';
import { installViewUpkeep } from './view-upkeep.ts';

const MIGRATIONS_DIR = path.join(import.meta.dirname, 'migrations');
const LOCK_ID = 7_390_211;

/** `views`: every view of the service (the composition root's list); the stored ones get their upkeep. */
export async function migrate(db: Db, views: readonly View[]): Promise<string[]> {
  const files = fs.readdirSync(MIGRATIONS_DIR).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
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
    for (const view of await installViewUpkeep(tx, views)) applied.push(`view ${view}`);
    return applied;
  });
}
