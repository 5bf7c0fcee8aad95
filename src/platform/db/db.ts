// One Db interface over a node-postgres pool (DATABASE_URL) or embedded PGlite
// (DATA_DIR). Same SQL, same migrations, same value types on both; open-db.ts
// opens one, postgres-db.ts and pglite-db.ts implement it.
import type { Readable } from 'node:stream';
import type { DatabaseHealth } from './health.ts';
import type { EventReactions } from './event-reactions.ts';
import type { DocumentCache } from '../read-path/document-cache.ts';
import type { Keyring } from '../edge/secret-box.ts';

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
  readonly reactions: EventReactions<Sql>;
  /** The documents this service's reads were answered with (document-cache.ts): the same object through every wrapper and transaction of one Db. */
  readonly documentCache: DocumentCache;
  /** This service's keys for secrets sealed at rest (secret-box.ts), likewise. */
  readonly keyring: Keyring;
  /**
   * PostgreSQL transactions only: `COPY (...) TO STDOUT` as a byte stream,
   * read as fast as the reader takes it (backpressure). The statement takes
   * no parameters: values are written in with sqlWithLiterals (sql-literals.ts).
   */
  copyOut?(text: string): Readable;
}

/**
 * What one service owns beside its connections (issue 43), made in the
 * composition root and handed to its Db, so that two services in one process
 * share neither; a Db opened without them (a CLI command, a migration's
 * session) makes its own.
 */
export interface ServiceState {
  documentCache?: DocumentCache;
  keyring?: Keyring;
}

export interface TxOptions {
  readOnly?: boolean;
  /** One snapshot for every statement of the transaction (an export's rows and its events cursor, EXTENSIONS 8). */
  repeatableRead?: boolean;
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
