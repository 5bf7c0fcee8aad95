// node --test's global setup: builds merx-client's dist when a fresh clone
// has none (tests use it as its users get it), and on PostgreSQL migrates the
// stage's database once, so that each test file's own database
// (test/setup/own-database.ts) is a copy of a migrated one; at the end drops
// those copies.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { openDb } from '../../src/platform/db/open-db.ts';
import { migrateDatabase } from '../../src/views.ts';
import { fileDatabasePattern, renameDatabase } from './database-names.ts';

function stageDirect(): string | null {
  const stage = process.env.DATABASE_URL;
  return stage ? (process.env.DATABASE_DIRECT_URL ?? stage) : null;
}

const ROOT = path.join(import.meta.dirname, '../..');

export async function globalSetup(): Promise<void> {
  if (!fs.existsSync(path.join(ROOT, 'packages/client/dist/index.js'))) {
    execFileSync('npm', ['run', '-s', 'build:client'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const direct = stageDirect();
  if (!direct) return;
  // The migrations only (no secrets: each test service brings its own keys); closed after, as a template must have no session.
  const db = await openDb({ databaseUrl: direct, dataDir: '' });
  try {
    await migrateDatabase(db);
  } finally {
    await db.close();
  }
  // A template must have no session: a pooler may still hold an idle one to it (PgBouncer keeps its server connections).
  const admin = new pg.Client({ connectionString: renameDatabase(direct, 'postgres') });
  await admin.connect();
  try {
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
      new URL(direct).pathname.slice(1),
    ]);
  } finally {
    await admin.end();
  }
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
