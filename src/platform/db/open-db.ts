// Opens the service's Db (db.ts): PostgreSQL when DATABASE_URL is set, else
// embedded PGlite in DATA_DIR, locked to this process.
import fs from 'node:fs';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { defaultPoolSize } from '../../config.ts';
import { takeDirectoryLock } from './data-dir.ts';
import type { Db, ServiceState } from './db.ts';
import { PgliteDb } from './pglite-db.ts';
import { parsers, PostgresDb } from './postgres-db.ts';

/** Where the database is and how to reach it (the Config fields of the same names), and what the service owns with it. */
export interface OpenOptions extends ServiceState {
  databaseUrl: string | null;
  dataDir: string;
  /** PostgreSQL only: the pool's size (default: defaultPoolSize()). */
  poolMax?: number;
  /** Issue 32: PostgreSQL itself when databaseUrl is a transaction pooler (see Config.databaseDirectUrl). */
  databaseDirectUrl?: string | null;
  /** Named prepared statements (default: on unless databaseUrl is a pooler). */
  preparedStatements?: boolean;
  /** PGlite only: start from this dumped data directory (tests reuse one migrated template). */
  pgliteTemplate?: Blob;
}

export async function openDb(options: OpenOptions): Promise<Db> {
  if (options.databaseUrl) {
    const db = new PostgresDb(
      options.databaseUrl,
      options.poolMax ?? defaultPoolSize(),
      {
        directUrl: options.databaseDirectUrl,
        prepared: options.preparedStatements,
      },
      options,
    );
    await db.query('SELECT 1');
    return db;
  }
  const inMemory = options.dataDir.startsWith('memory://');
  const lockFile = inMemory ? null : takeDirectoryLock(options.dataDir);
  const pgliteParsers: Record<number, (t: string) => unknown> = { ...parsers, [pgliteTypes.JSON]: JSON.parse, [pgliteTypes.JSONB]: JSON.parse };
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(inMemory ? undefined : options.dataDir, {
      extensions: { pg_trgm },
      parsers: pgliteParsers,
      ...(options.pgliteTemplate ? { loadDataDir: options.pgliteTemplate } : {}),
    });
  } catch (err) {
    if (lockFile) fs.rmSync(lockFile, { force: true });
    // PGlite's file-system errors are bare objects ({name: 'ErrnoError', errno}), not Errors.
    const cause = err instanceof Error ? err.message : JSON.stringify(err);
    throw new Error(
      `DATA_DIR ${options.dataDir}: the embedded database could not open it (${cause}). Check its permissions, or set DATABASE_URL to use PostgreSQL.`,
    );
  }
  await pglite.exec("SET TimeZone = 'UTC'");
  return new PgliteDb(pglite, lockFile, options);
}

/**
 * A PostgreSQL Db that does not try its connection first (a read replica may
 * be down when the service starts); `state`: the primary's, so that reads
 * routed to a replica use the service's cache and keyring.
 */
export function replicaDb(url: string, poolMax: number, options: { prepared?: boolean } = {}, state: ServiceState = {}): Db {
  return new PostgresDb(url, poolMax, { ...options, role: 'replica' }, state);
}

/**
 * Runs `fn` on a session of PostgreSQL itself (migrations: DDL and their lock
 * want no pooler between): `db` when it is direct, else a one-connection Db on
 * databaseDirectUrl, closed after.
 */
export async function onDirectSession<T>(db: Db, options: OpenOptions, fn: (db: Db) => Promise<T>): Promise<T> {
  if (db.kind !== 'postgres' || !options.databaseDirectUrl || options.databaseDirectUrl === options.databaseUrl) return fn(db);
  const direct = new PostgresDb(options.databaseDirectUrl, 1, {}, options);
  try {
    return await fn(direct);
  } finally {
    await direct.close();
  }
}
