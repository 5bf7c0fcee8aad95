// One Db interface over a node-postgres pool (DATABASE_URL) or embedded PGlite
// (DATA_DIR). Same SQL, same migrations, same value types on both.
import fs from 'node:fs';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { defaultPoolSize } from '../config.ts';
import { takeDirectoryLock } from './data-dir.ts';
import type { DatabaseHealth } from './db-health.ts';
import type { EventReactions } from './events.ts';
import { PgliteDb } from './pglite-db.ts';
import { parsers, PostgresDb } from './postgres-db.ts';

export { PgliteDb };

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface QueryOptions {
  /**
   * A hot statement (issue 12): on PostgreSQL it is prepared once per
   * connection under a name derived from its text, so later runs skip parsing
   * and planning, and outside a transaction it always runs on its generic
   * plan (see PostgresDb.preparedPool). Only for statements whose text comes
   * from a bounded set, and whose generic plan is right for every value
   * (bench:explain shows it); others are planned per request.
   */
  prepared?: boolean;
}

/** Anything that runs SQL: the pool itself or an open transaction. */
export interface Sql {
  query<T = any>(text: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<T>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
  /**
   * Inside a transaction: runs `task` once it has committed (never if it rolls
   * back). Outside one the statement already committed, so `task` runs at once.
   */
  afterCommit(task: () => void): void;
  /** Who reacts to the events emitted here: the same object through every wrapper and transaction of one Db. */
  readonly reactions: EventReactions;
}

export interface TxOptions {
  readOnly?: boolean;
}

/** Who needs to know whether notifications can be missed (a cache that must not outlive one): see listen(). */
export interface ListenState {
  /** The connection broke: notifications may be missed until onReady runs again. */
  onLost(): void;
  /** Listening (again): from now on no notification is missed. */
  onReady(): void;
}

export interface Db extends Sql {
  readonly kind: 'postgres' | 'pglite';
  /** Whether the database can be reached now (issue 27): the 503 gate and /healthz read it. */
  readonly health: DatabaseHealth;
  tx<T>(fn: (tx: Sql) => Promise<T>, options?: TxOptions): Promise<T>;
  /**
   * LISTEN on a channel: PostgreSQL on a dedicated connection (reconnected if
   * it drops), PGlite in process. `SELECT pg_notify(channel, payload)` from
   * any instance reaches every listener. Returns the way to stop listening.
   */
  listen(channel: string, onNotify: (payload: string) => void, state?: ListenState): Promise<() => Promise<void>>;
  /**
   * Where background bookkeeping runs (the webhook engine's batched claims and
   * outcomes): on PostgreSQL a small pool of its own, so that it never holds
   * the connections requests wait for, with asynchronous commit, so that its
   * commits never wait for the WAL flush. Only for writes whose loss in a
   * database crash is harmless: a lost outcome or claim leaves the delivery
   * due, and it is sent again (SPEC: at least once). PGlite: the database itself.
   */
  background(): Sql;
  close(): Promise<void>;
}

/** Connections of the background pool (see Db.background): the engine batches, so a few carry its whole load. */
export interface OpenOptions {
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
    const db = new PostgresDb(options.databaseUrl, options.poolMax ?? defaultPoolSize(), {
      directUrl: options.databaseDirectUrl,
      prepared: options.preparedStatements,
    });
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
    throw new Error(`DATA_DIR ${options.dataDir}: the embedded database could not open it (${cause}). Check its permissions, or set DATABASE_URL to use PostgreSQL.`);
  }
  await pglite.exec("SET TimeZone = 'UTC'");
  return new PgliteDb(pglite, lockFile);
}

/** A PostgreSQL Db that does not try its connection first (a read replica may be down when the service starts). */
export function postgresDb(url: string, poolMax: number, options: { prepared?: boolean } = {}): Db {
  return new PostgresDb(url, poolMax, options);
}

/**
 * Runs `fn` on a session of PostgreSQL itself (migrations: DDL and their lock
 * want no pooler between): `db` when it is direct, else a one-connection Db on
 * databaseDirectUrl, closed after.
 */
export async function onDirectSession<T>(db: Db, options: OpenOptions, fn: (db: Db) => Promise<T>): Promise<T> {
  if (db.kind !== 'postgres' || !options.databaseDirectUrl || options.databaseDirectUrl === options.databaseUrl) return fn(db);
  const direct = new PostgresDb(options.databaseDirectUrl, 1);
  try {
    return await fn(direct);
  } finally {
    await direct.close();
  }
}
