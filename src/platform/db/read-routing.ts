// Issue 32: where a read runs when DATABASE_READ_URLS names read replicas.
// execute.ts sends an operation's read here and notes its writes here.
//
// Read your writes, across instances and transports: after a write operation
// commits, the primary's WAL position (pg_current_wal_lsn(), at or past the
// commit record, which a synchronous commit has flushed) is kept per account
// in the primary (replica_read_marks, migration 026: unlogged, so a mark costs
// no WAL and no flush). A read of the account first looks its mark up there
// (one primary-key row), then goes to a replica whose replay has passed it:
// every write of the account that was answered before the read began is then
// visible there. A replica not there yet is asked again for up to
// DATABASE_READ_WAIT_MS, and then the primary serves the read. The lookup is
// on the primary rather than in Redis so that a mark is as durable and as
// available as the write it follows: no second system whose outage would have
// to send every read to the primary, or worse, let a read miss a write.
//
// A read that fails on a replica for want of it (connection, recovery
// conflict, database not replayed yet) leaves the replica out and runs again
// on the primary: a read may run twice, a write never runs here.
//
// Issue 38, while the primary is away (a crash, a failover): no write can
// commit, so a replica holds every write it was sent. The account's mark
// cannot be looked up then; the marks of the writes made through this
// instance are kept in memory too and stand in for it, so a client's own
// writes through this instance stay visible to its reads. In a failover
// neither a replica nor the new primary may answer for a moment (the proxy
// notices the change after a check or two): a read is tried again for up to
// FAILOVER_READ_WAIT_MS before it is answered 503.
import type { Db } from './db.ts';
import { isUnavailableError } from './health.ts';
import { replicaFailure, lsnValue, type ReplicaSet, type ReplicaState } from './read-replicas.ts';
import { Counter, Gauge, type Registry } from 'prom-client';

/** The mark of a change that names no account (an operator's change to an order by id): every account's reads wait for it. */
export const EVERY_ACCOUNT = '00000000-0000-0000-0000-000000000000';

const FAILOVER_READ_WAIT_MS = 3_000;
const FAILOVER_READ_PAUSE_MS = 100;
/** Accounts whose last write position this instance keeps in memory (the oldest written is forgotten first). */
const LOCAL_MARKS_MAX = 100_000;

/** A read that found neither a replica nor the primary: a connection failure (08006), answered 503 database_unavailable. */
function nowhereToRead(): Error {
  return Object.assign(new Error('Connection terminated: the primary is unavailable and no read replica could serve the read'), { code: '08006' });
}

export interface ReadRouterLog {
  warn(fields: object, message: string): void;
}

export class ReadRouter {
  private readonly primary: Db;
  private readonly replicas: ReplicaSet;
  private readonly waitMs: number;
  private readonly log: ReadRouterLog;
  private reads: Counter<'target'> | null = null;
  /** The WAL position after each account's last write through this instance: its mark while the primary cannot be asked. */
  private readonly localMarks = new Map<string, bigint>();

  constructor(primary: Db, replicas: ReplicaSet, options: { waitMs: number; log: ReadRouterLog }) {
    this.primary = primary;
    this.replicas = replicas;
    this.waitMs = options.waitMs;
    this.log = options.log;
  }

  /** After a write operation of the account ran (committed or not: a mark too many only sends reads to the primary). */
  async noteWrite(accountId: string): Promise<void> {
    try {
      const { rows } = await this.primary.query<{ lsn: string }>(
        `INSERT INTO replica_read_marks (account_id, lsn) VALUES ($1, pg_current_wal_lsn())
         ON CONFLICT (account_id) DO UPDATE SET lsn = GREATEST(replica_read_marks.lsn, EXCLUDED.lsn)
         RETURNING lsn::text AS lsn`,
        [accountId],
        { prepared: true },
      );
      this.keepLocalMark(accountId, lsnValue(rows[0].lsn));
    } catch (err) {
      // The write is done; failing its answer now would make a client repeat it. Its reads may see a lagging replica.
      this.log.warn({ err, account_id: accountId }, 'could not record a write position for read-your-writes');
    }
  }

  /** Runs a read of the account on a replica that has seen the account's writes, or on the primary. */
  async read<T>(accountId: string, run: (db: Db) => Promise<T>): Promise<T> {
    const deadline = Date.now() + FAILOVER_READ_WAIT_MS;
    for (;;) {
      try {
        return await this.readOnce(accountId, run);
      } catch (err) {
        if (!isUnavailableError(err) || Date.now() >= deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, FAILOVER_READ_PAUSE_MS));
      }
    }
  }

  private async readOnce<T>(accountId: string, run: (db: Db) => Promise<T>): Promise<T> {
    const replica = await this.replicas.pick(await this.markOf(accountId), this.waitMs);
    if (!replica) return this.onPrimary(run);
    try {
      const result = await run(replica.db);
      this.reads?.inc({ target: replica.name });
      return result;
    } catch (err) {
      const failure = replicaFailure(err);
      if (!failure) throw err;
      if (failure === 'replica') this.replicas.leaveOut(replica, err);
      return this.onPrimary(run);
    }
  }

  private onPrimary<T>(run: (db: Db) => Promise<T>): Promise<T> {
    if (this.primary.health.isDown) throw nowhereToRead();
    this.reads?.inc({ target: 'primary' });
    return run(this.primary);
  }

  /** The WAL position a replica must have replayed for this account's reads (null: any). */
  private async markOf(accountId: string): Promise<bigint | null> {
    if (!this.primary.health.isDown) {
      try {
        const { rows } = await this.primary.query<{ lsn: string | null }>(
          'SELECT max(lsn)::text AS lsn FROM replica_read_marks WHERE account_id IN ($1, $2)',
          [accountId, EVERY_ACCOUNT],
          { prepared: true },
        );
        return rows[0]?.lsn ? lsnValue(rows[0].lsn) : null;
      } catch (err) {
        if (!isUnavailableError(err)) throw err;
      }
    }
    const own = this.localMarks.get(accountId);
    const every = this.localMarks.get(EVERY_ACCOUNT);
    return own === undefined ? (every ?? null) : every !== undefined && every > own ? every : own;
  }

  private keepLocalMark(accountId: string, lsn: bigint): void {
    const kept = this.localMarks.get(accountId);
    this.localMarks.delete(accountId); // re-inserted last: Map order makes the first key the longest unwritten
    if (this.localMarks.size >= LOCAL_MARKS_MAX) this.localMarks.delete(this.localMarks.keys().next().value!);
    this.localMarks.set(accountId, kept !== undefined && kept > lsn ? kept : lsn);
  }

  states(): ReplicaState[] {
    return this.replicas.states();
  }

  /** merx_db_reads_total{target} and each replica's state and lag, on this service's registry. */
  registerMetrics(registry: Registry): void {
    this.reads = new Counter({
      name: 'merx_db_reads_total',
      help: 'Operation reads by where they ran: primary or replica_N',
      labelNames: ['target'],
      registers: [registry],
    });
    const states = () => this.replicas.states();
    new Gauge({
      name: 'merx_db_replica_up',
      help: 'Whether a read replica serves reads (1) or is left out, lagging or down (0)',
      labelNames: ['replica', 'state'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of states()) this.set({ replica: s.name, state: s.state }, s.state === 'ok' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'merx_db_replica_lag_seconds',
      help: 'How long ago the primary had WAL the replica has not replayed yet (absent while down)',
      labelNames: ['replica'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of states()) if (s.lag_ms !== null) this.set({ replica: s.name }, s.lag_ms / 1000);
      },
    });
    new Gauge({
      name: 'merx_db_replica_lag_bytes',
      help: "Bytes of the primary's WAL the replica has not replayed yet (absent while down)",
      labelNames: ['replica'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of states()) if (s.lag_bytes !== null) this.set({ replica: s.name }, s.lag_bytes);
      },
    });
  }

  close(): Promise<void> {
    return this.replicas.close();
  }
}
