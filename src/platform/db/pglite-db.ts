// The embedded database behind the Db interface (db.ts): PGlite in process,
// one connection, so no pool, no outage and no WAL flush to wait for.
import fs from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import type { Db, ListenState, QueryResult, ServiceState, Sql, TxOptions } from './db.ts';
import { DocumentCache } from '../read-path/document-cache.ts';
import { Keyring } from '../edge/secret-box.ts';
import { DatabaseHealth } from './health.ts';
import { EventReactions } from './event-reactions.ts';

export class PgliteDb implements Db {
  readonly kind = 'pglite' as const;
  /** In process: nothing between the service and its database can drop. */
  readonly health = new DatabaseHealth(async () => {});
  private pglite: PGlite;
  private lockFile: string | null;
  readonly documentCache: DocumentCache;
  readonly keyring: Keyring;

  constructor(pglite: PGlite, lockFile: string | null, state: ServiceState = {}) {
    this.pglite = pglite;
    this.lockFile = lockFile;
    this.documentCache = state.documentCache ?? new DocumentCache();
    this.keyring = state.keyring ?? new Keyring();
  }

  async query<T>(text: string, params: unknown[] = []): Promise<QueryResult<T>> {
    const res = await this.pglite.query<T>(text, params as any[]);
    return { rows: res.rows, rowCount: res.rows.length || res.affectedRows || 0 };
  }

  async exec(script: string): Promise<void> {
    await this.pglite.exec(script);
  }

  afterCommit(task: () => void): void {
    task();
  }

  readonly reactions = new EventReactions<Sql>();

  /** One connection in process: background work shares it (and PGlite has no WAL flush to wait for across processes). */
  background(): Sql {
    return this;
  }

  async tx<T>(fn: (tx: Sql) => Promise<T>, options: TxOptions = {}): Promise<T> {
    const committed: Array<() => void> = [];
    const result = await this.pglite.transaction(async (t) => {
      if (options.repeatableRead) await t.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      if (options.readOnly) await t.query('SET TRANSACTION READ ONLY');
      return fn({
        afterCommit: (task) => committed.push(task),
        reactions: this.reactions,
        documentCache: this.documentCache,
        keyring: this.keyring,
        query: async <R>(text: string, params: unknown[] = []) => {
          const res = await t.query<R>(text, params as any[]);
          return { rows: res.rows, rowCount: res.rows.length || res.affectedRows || 0 };
        },
        exec: async (script: string) => {
          await t.exec(script);
        },
      });
    });
    for (const task of committed) task();
    return result;
  }

  async listen(channel: string, onNotify: (payload: string) => void, state?: ListenState): Promise<() => Promise<void>> {
    const unlisten = await this.pglite.listen(channel, onNotify);
    // In process: nothing in between can drop a notification.
    state?.onReady();
    return async () => {
      if (!this.pglite.closed) await unlisten();
    };
  }

  /** A tarball of the whole data directory, loadable with openDb({pgliteTemplate}). */
  async dump(): Promise<Blob> {
    return this.pglite.dumpDataDir('none');
  }

  async close(): Promise<void> {
    await this.pglite.close();
    if (this.lockFile) fs.rmSync(this.lockFile, { force: true });
  }
}
