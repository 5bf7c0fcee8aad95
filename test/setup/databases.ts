// node --test's global setup: on PostgreSQL, migrates the stage's database
// once, so that each test file's own database (test/setup/own-database.ts) is
// a copy of a migrated one; at the end drops those copies.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { fileDatabasePattern, renameDatabase } from './database-names.ts';

const ROOT = path.join(import.meta.dirname, '../..');

function stageDirect(): string | null {
  const stage = process.env.DATABASE_URL;
  return stage ? (process.env.DATABASE_DIRECT_URL ?? stage) : null;
}

export async function globalSetup(): Promise<void> {
  if (!stageDirect()) return;
  // The service's own migration command, on the stage's database; it leaves no session open (a template must have none).
  execFileSync(process.execPath, ['src/cli.ts', 'migrate'], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'error' }, stdio: ['ignore', 'ignore', 'inherit'] });
}

export async function globalTeardown(): Promise<void> {
  const direct = stageDirect();
  if (!direct) return;
  const template = new URL(direct).pathname.slice(1);
  const admin = new pg.Client({ connectionString: renameDatabase(direct, 'postgres') });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [fileDatabasePattern(template)]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
