// The stored views' upkeep (stored-view.ts upkeepSql) as checked-in
// migrations, so that the PL/pgSQL the database runs is SQL a reviewer reads
// in the diff. Each view's upkeep sits in a migration between markers:
//
//   -- merx:view order begin
//   ...the SQL its declaration generates...
//   -- merx:view order end
//
// A changed declaration gets a new migration (`npm run views:migration`)
// holding the new upkeep of the views that changed: CREATE OR REPLACE of
// their functions and triggers, and a reset of their backfill. The latest
// block of each view, in migration order, is its definition in force;
// test/view-migrations.test.ts proves it equals what the declaration
// generates now. Older blocks are history and are never edited.
import fs from 'node:fs';
import path from 'node:path';
import type { View } from './stored-view.ts';
import { MIGRATIONS_DIR, migrationFiles } from '../db/migrate.ts';

export const VIEW_MIGRATION_COMMAND = 'npm run views:migration';

const BLOCK = /^-- merx:view (\w+) begin\n([\s\S]*?)\n-- merx:view \1 end$/gm;

/** A view's upkeep as it stands in a migration. */
export function viewBlock(view: View): string {
  return `-- merx:view ${view.name} begin\n${view.upkeepSql}\n-- merx:view ${view.name} end`;
}

/** Each view's upkeep in force: its block in the latest migration that has one, and that file. */
export function latestViewBlocks(dir = MIGRATIONS_DIR): Map<string, { file: string; sql: string }> {
  const latest = new Map<string, { file: string; sql: string }>();
  for (const file of migrationFiles(dir)) {
    for (const match of fs.readFileSync(path.join(dir, file), 'utf8').matchAll(BLOCK)) latest.set(match[1], { file, sql: match[2] });
  }
  return latest;
}

/** The stored views whose declaration generates other SQL than the migrations hold. */
export function outdatedViews(views: readonly View[], dir = MIGRATIONS_DIR): View[] {
  const latest = latestViewBlocks(dir);
  return views.filter((v) => v.stored && latest.get(v.name)?.sql !== v.upkeepSql);
}

/** Writes the next numbered migration with the upkeep of `changed`; returns its file name. */
export function writeViewMigration(changed: readonly View[], dir = MIGRATIONS_DIR): string {
  const last = migrationFiles(dir).at(-1);
  const number = String(Number(last?.slice(0, 3) ?? 0) + 1).padStart(3, '0');
  const file = `${number}_stored_views_${changed.map((v) => v.name).join('_')}.sql`;
  const header = [
    `-- The upkeep of the stored views ${changed.map((v) => v.name).join(', ')}, generated from their declarations`,
    `-- by \`${VIEW_MIGRATION_COMMAND}\` (src/platform/read-path/view-migrations.ts). Do not edit: change the declaration and`,
    '-- generate a new migration. Each view rewrites its rows after the instances listen (view-upkeep.ts).',
  ];
  fs.writeFileSync(path.join(dir, file), `${[...header, '', ...changed.map(viewBlock)].join('\n')}\n`);
  return file;
}
