// The Db over node-postgres pools (DATABASE_URL): the pools (requests,
// prepared statements on their generic plans, background bookkeeping), the
// value parsers both databases share, and transactions with their
// after-commit tasks. db.ts holds the interface and openDb.
import crypto from 'node:crypto';
import pg from 'pg';
import { copyOutOf } from './copy-out.ts';
import { DatabaseHealth, isUnavailableError, notPrimaryError, probeCut } from './health.ts';
import { EventReactions } from './event-reactions.ts';
import type { Db, ListenState, QueryOptions, QueryResult, ServiceState, Sql, TxOptions } from './db.ts';
import { DocumentCache } from '../read-path/document-cache.ts';
import { Keyring } from '../edge/secret-box.ts';

const BACKGROUND_POOL_MAX = 3;

const OID = { int8: 20, numeric: 1700, timestamptz: 1184, timestamp: 1114, date: 1082 };

/** Postgres prints timestamptz as "2026-11-22 03:01:40.12+00" with TimeZone=UTC; the API speaks ISO 8601 with Z. */
export function isoFromPg(text: string): string {
  return new Date(text).toISOString();
}

export const parsers: Record<number, (text: string) => unknown> = {
  [OID.int8]: (t) => Number(t),
  [OID.numeric]: (t) => Number(t),
  [OID.timestamptz]: isoFromPg,
  [OID.timestamp]: (t) => new Date(`${t}Z`).toISOString(),
  [OID.date]: (t) => t,
};

const statementNames = new Map<string, string>();

/** The same name for the same text, in every connection of every pool. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `merx_${crypto.createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    statementNames.set(text, name);
  }
  return name;
}

function pgQuery(text: string, params: unknown[], options?: QueryOptions, prepare = true): pg.QueryConfig {
  return options?.prepared && prepare ? { name: statementName(text), text, values: params as any[] } : { text, values: params as any[] };
}

function runCommitted(tasks: Array<() => void>): void {
  for (const task of tasks) task();
}

const pgTypes = {
  getTypeParser: (oid: number, format?: any) => parsers[oid] ?? (pg.types.getTypeParser as any)(oid, format),
};

/**
 * How long a request waits for a connection (a free one of the pool, or a new
 * one) before it is answered 503: never forever, when the database hangs.
 */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The class of every client the service creates (pools, LISTEN sessions,
 * health probes). Issue 38: a connection that PostgreSQL ends (a FATAL such as
 * pg_terminate_backend's 57P01, a restart) is an 'error' event on its client,
 * and an EventEmitter with no 'error' listener throws it, ending the process.
 * pg-pool listens only while it holds a client idle, and a query's own
 * listener only while the query runs, so a FATAL arriving between two owners
 * found none. This listener is attached in the constructor and never removed:
 * no timing can leave a client bare. The owners' own listeners still decide
 * what becomes of the client (pg-pool drops it, a transaction releases it as
 * broken); this one tells the health monitor.
 *
 * `setTimeZone`: through a transaction pooler there is no session of ours to
 * set at connect (PgBouncer refuses the startup parameter), so TimeZone is SET
 * once connected, before the pool hands the client out: a setting PgBouncer
 * tracks and puts on whichever server connection serves the client next.
 */
function clientClass(onError: (err: Error) => void, setTimeZone = false): typeof pg.Client {
  return class ServiceClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.on('error', onError);
    }

    // pg-pool calls connect(callback); the promise form is kept for anyone else.
    override connect(callback?: any): any {
      if (!setTimeZone) return super.connect(callback);
      const connected = super
        .connect()
        .then(() => this.query("SET TimeZone = 'UTC'"))
        .then(() => this as pg.Client);
      if (!callback) return connected;
      connected.then(
        (client) => callback(null, client),
        (err: Error) => callback(err),
      );
    }
  };
}

/**
 * `options` are session settings sent at connect (`-c name=value`); through a
 * transaction pooler (`pooled`) they are left out (see clientClass), and so
 * are the others (generic plans).
 */
function newPool(connectionString: string, max: number, options: string, health: DatabaseHealth, pooled = false): pg.Pool {
  const Client = clientClass((err) => health.noticeFailure(err), pooled);
  const config = { connectionString, types: pgTypes, max, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, Client, ...(pooled ? {} : { options }) };
  const pool = new pg.Pool(config);
  // An idle client that errors is dropped by the pool, which then emits this.
  pool.on('error', (err) => health.noticeFailure(err));
  return pool;
}

export class PostgresDb implements Db {
  readonly kind = 'postgres' as const;
  private pool: pg.Pool;
  /**
   * Where prepared statements run outside a transaction: sessions that take
   * a prepared statement's generic plan at once and for good. Left to choose
   * (plan_cache_mode auto), PostgreSQL keeps planning a statement anew while
   * the generic plan's estimate looks dearer than the plans made for the
   * values, and that estimate turns on how the table's rows spread over
   * accounts: with a second account of 100k orders beside one of 1M, page 200
   * of the larger one's cursor walk was planned on every request, for the
   * same plan (bench/RESULTS-read-path.md). The generic plan is the one whose every request is the same work;
   * a statement whose best plan depends on its values is not prepared
   * (read-sql.ts Filter.planPerValue), and those, as every statement in a
   * transaction, run on the other pool, planned per request as before.
   */
  private preparedPool: pg.Pool;
  private connectionString: string;
  /** PostgreSQL itself, for what needs a session (LISTEN, the background pool's settings); DATABASE_URL unless that is a pooler. */
  private directUrl: string;
  /** Named prepared statements on this pool (off through a transaction pooler: the next transaction may be on another server). */
  private readonly prepares: boolean;
  private backgroundPool: pg.Pool | null = null;

  readonly health: DatabaseHealth;
  readonly reactions = new EventReactions<Sql>();
  readonly documentCache: DocumentCache;
  readonly keyring: Keyring;

  /** The primary, or a read replica (DATABASE_READ_URLS): a probe of the primary also asks that it is not a standby. */
  private readonly role: 'primary' | 'replica';

  constructor(
    connectionString: string,
    poolMax: number,
    topology: { directUrl?: string | null; prepared?: boolean; role?: 'primary' | 'replica' } = {},
    state: ServiceState = {},
  ) {
    this.documentCache = state.documentCache ?? new DocumentCache();
    this.keyring = state.keyring ?? new Keyring();
    this.connectionString = connectionString;
    this.role = topology.role ?? 'primary';
    this.directUrl = topology.directUrl ?? connectionString;
    const pooled = this.directUrl !== connectionString;
    this.prepares = topology.prepared ?? !pooled;
    this.health = new DatabaseHealth(() => this.probe());
    this.pool = newPool(connectionString, poolMax, '-c TimeZone=UTC', this.health, pooled);
    this.preparedPool = this.prepares
      ? newPool(connectionString, poolMax, '-c TimeZone=UTC -c plan_cache_mode=force_generic_plan', this.health, pooled)
      : this.pool;
  }

  /** One round trip on a connection of its own: the pools' may all be broken at once. */
  private async probe(): Promise<void> {
    const Client = clientClass(() => {});
    const client = new Client({ connectionString: this.connectionString, connectionTimeoutMillis: 2000, application_name: 'merx-health' });
    try {
      await client.connect();
      // Issue 38: after a failover the old address may reach a standby for a while; writes there fail 25006.
      const { rows } = await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby').catch((err) => {
        throw probeCut(err);
      });
      if (this.role === 'primary' && rows[0]?.standby) throw notPrimaryError();
    } finally {
      await client.end().catch(() => {});
    }
  }

  /** Runs a query on a pool; a failure for want of a connection is told to the health monitor. */
  private async run(pool: pg.Pool, config: pg.QueryConfig | string): Promise<pg.QueryResult> {
    try {
      return await pool.query(config);
    } catch (err) {
      this.health.noticeFailure(err);
      throw err;
    }
  }

  background(): Sql {
    // On PostgreSQL itself even behind a pooler: asynchronous commit is a session setting, and a pooler would hand it on.
    this.backgroundPool ??= newPool(this.directUrl, BACKGROUND_POOL_MAX, '-c TimeZone=UTC -c synchronous_commit=off', this.health);
    const pool = this.backgroundPool;
    return {
      reactions: this.reactions,
      documentCache: this.documentCache,
      keyring: this.keyring,
      afterCommit: (task) => task(),
      query: async <R>(text: string, params: unknown[] = [], options?: QueryOptions) => {
        const res = await this.run(pool, pgQuery(text, params, options, true));
        return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
      },
      exec: async (script: string) => {
        await this.run(pool, script);
      },
    };
  }

  async query<T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<QueryResult<T>> {
    const res = await this.run(options?.prepared ? this.preparedPool : this.pool, pgQuery(text, params, options, this.prepares));
    return { rows: res.rows as T[], rowCount: res.rowCount ?? 0 };
  }

  async exec(script: string): Promise<void> {
    await this.run(this.pool, script);
  }

  afterCommit(task: () => void): void {
    task();
  }

  async tx<T>(fn: (tx: Sql) => Promise<T>, options: TxOptions = {}): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      this.health.noticeFailure(err);
      throw err;
    }
    // Issue 27: a checked-out client whose connection ends (pg_terminate_backend, a restart) emits 'error';
    // without a listener that ended the process. The client is then destroyed on release, not pooled again.
    let broken: Error | undefined;
    const onError = (err: Error) => {
      broken = err;
      this.health.noticeFailure(err);
    };
    client.on('error', onError);
    const committed: Array<() => void> = [];
    try {
      await client.query(`BEGIN${options.repeatableRead ? ' ISOLATION LEVEL REPEATABLE READ' : ''}${options.readOnly ? ' READ ONLY' : ''}`);
      const tx: Sql = {
        afterCommit: (task) => committed.push(task),
        reactions: this.reactions,
        documentCache: this.documentCache,
        keyring: this.keyring,
        query: async <R>(text: string, params: unknown[] = [], options?: QueryOptions) => {
          const res = await client.query(pgQuery(text, params, options, this.prepares));
          return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
        },
        exec: async (script: string) => {
          await client.query(script);
        },
        copyOut: (text: string) => copyOutOf(client, text, (err) => (broken ??= err)),
      };
      const result = await fn(tx);
      await client.query('COMMIT');
      runCommitted(committed);
      return result;
    } catch (err) {
      this.health.noticeFailure(err);
      // A connection to a server that is no longer the primary would fail every write it is given again: not pooled again.
      if (isUnavailableError(err)) broken ??= err as Error;
      await client.query('ROLLBACK').catch((rollbackErr: Error) => (broken ??= rollbackErr));
      throw err;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  async listen(channel: string, onNotify: (payload: string) => void, state?: ListenState): Promise<() => Promise<void>> {
    let stopped = false;
    let client: pg.Client | null = null;
    let retry: NodeJS.Timeout | null = null;
    const connect = async (): Promise<void> => {
      // A session of its own on PostgreSQL itself: through a transaction pooler LISTEN would hear nothing.
      // A dropped listening connection (server restart) reconnects after a pause instead of crashing the process.
      const reconnect = () => {
        if (stopped || client !== next) return;
        client = null;
        state?.onLost();
        next.end().catch(() => {});
        retry = setTimeout(() => void connect().catch(() => {}), 1000);
        retry.unref();
      };
      const next = new (clientClass(reconnect))({ connectionString: this.directUrl, application_name: `merx-listen-${channel}` });
      next.on('end', reconnect);
      next.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      client = next;
      try {
        await next.connect();
        await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
        if (!stopped) state?.onReady();
      } catch (err) {
        reconnect();
        throw err;
      }
    };
    await connect().catch((err) => {
      stopped = true;
      if (retry) clearTimeout(retry);
      throw err;
    });
    return async () => {
      stopped = true;
      if (retry) clearTimeout(retry);
      const current = client;
      client = null;
      await current?.end().catch(() => {});
    };
  }

  async close(): Promise<void> {
    this.health.close();
    await Promise.all([this.pool.end(), this.preparedPool === this.pool ? null : this.preparedPool.end(), this.backgroundPool?.end()]);
  }
}
