// Issue 32: the streaming read replicas of DATABASE_READ_URLS, watched. Every
// POLL_MS the primary's WAL position is sampled and each replica's replay
// position read; a replica's lag is how long ago the primary had WAL the
// replica has not replayed yet (0 when it has replayed all it was sent). A
// replica that cannot be reached, or lags past DATABASE_READ_MAX_LAG_MS, is
// left out of the rotation at once and taken back by the first poll that finds
// it healthy. /healthz and /metrics show each one (states()).
import type { Db } from './db.ts';
import { isConnectionError } from './health.ts';

const POLL_MS = 200;
/** Samples of the primary's position kept for measuring lag: a little more than the lag bound needs. */
const MAX_SAMPLES = 4096;

export type ReplicaHealth = 'ok' | 'lagging' | 'down';

export interface ReplicaState {
  /** replica_1, replica_2, ... in the order of DATABASE_READ_URLS (an address is not for a public page). */
  name: string;
  state: ReplicaHealth;
  /** How far its replay is behind the primary; null until first measured or while down. */
  lag_ms: number | null;
  lag_bytes: number | null;
  /** While down: why. */
  error?: string;
}

/** pg_lsn text ("16/B374D848") as a number of bytes. */
export function lsnValue(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

export class Replica {
  readonly name: string;
  readonly db: Db;
  replay: bigint | null = null;
  health: ReplicaHealth = 'down';
  lagMs: number | null = null;
  lagBytes: number | null = null;
  error = 'not polled yet';

  constructor(name: string, db: Db) {
    this.name = name;
    this.db = db;
  }

  get inRotation(): boolean {
    return this.health === 'ok';
  }

  /** Its replay position now, straight from the replica. */
  async replayPosition(): Promise<bigint> {
    const { rows } = await this.db.query<{ lsn: string | null }>('SELECT pg_last_wal_replay_lsn()::text AS lsn', [], { prepared: true });
    if (!rows[0]?.lsn) throw new Error('not a streaming replica (pg_last_wal_replay_lsn() is null)');
    return lsnValue(rows[0].lsn);
  }
}

/**
 * A failure on a replica that the primary would not have, so the read runs
 * there instead: 'replica' when the replica is at fault (left out until a
 * check finds it healthy), 'read-only' when the read wrote (25006: a
 * handler that records something as it reads), null for any other error.
 */
export function replicaFailure(err: unknown): 'replica' | 'read-only' | null {
  if (isConnectionError(err)) return 'replica';
  const code = (err as { code?: unknown } | null)?.code;
  // 40001: canceled for a conflict with recovery; 3D000: the database is not there (yet).
  if (code === '40001' || code === '3D000') return 'replica';
  return code === '25006' ? 'read-only' : null;
}

export interface ReplicaLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

export class ReplicaSet {
  readonly replicas: Replica[];
  private readonly primary: Db;
  private readonly maxLagMs: number;
  private samples: Array<{ at: number; lsn: bigint }> = [];
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private next = 0;
  private log: ReplicaLog | null;

  constructor(primary: Db, replicas: Db[], options: { maxLagMs: number; log?: ReplicaLog }) {
    this.primary = primary;
    this.replicas = replicas.map((db, i) => new Replica(`replica_${i + 1}`, db));
    this.maxLagMs = options.maxLagMs;
    this.log = options.log ?? null;
  }

  /** Polls once now (so a healthy replica serves from the first request), then every POLL_MS. */
  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => {
      this.polling ??= this.poll().finally(() => (this.polling = null));
    }, POLL_MS);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    try {
      const { rows } = await this.primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn', [], { prepared: true });
      this.samples.push({ at: Date.now(), lsn: lsnValue(rows[0].lsn) });
      if (this.samples.length > MAX_SAMPLES) this.samples.splice(0, this.samples.length - MAX_SAMPLES);
    } catch {
      // The primary's own monitor tells its outage; the replicas' lag is measured again once it is back.
      return;
    }
    await Promise.all(this.replicas.map((replica) => this.check(replica)));
  }

  private async check(replica: Replica): Promise<void> {
    try {
      const replay = await replica.replayPosition();
      this.observe(replica, replay);
    } catch (err) {
      this.leaveOut(replica, err);
    }
  }

  /** Records a replay position read from the replica and decides whether it serves. */
  private observe(replica: Replica, replay: bigint): void {
    replica.replay = replica.replay !== null && replica.replay > replay ? replica.replay : replay;
    const latest = this.samples[this.samples.length - 1];
    const behind = this.samples.find((s) => s.lsn > replay);
    replica.lagMs = behind ? Date.now() - behind.at : 0;
    replica.lagBytes = latest && latest.lsn > replay ? Number(latest.lsn - replay) : 0;
    const health: ReplicaHealth = replica.lagMs > this.maxLagMs ? 'lagging' : 'ok';
    if (health !== replica.health) {
      if (health === 'ok') this.log?.info({ replica: replica.name, lag_ms: replica.lagMs }, 'read replica back in rotation');
      else this.log?.warn({ replica: replica.name, lag_ms: replica.lagMs }, 'read replica lags past DATABASE_READ_MAX_LAG_MS: left out');
    }
    replica.health = health;
    replica.error = '';
  }

  /** A replica failed a read or a poll: out of the rotation at once, until a poll finds it healthy. */
  leaveOut(replica: Replica, err: unknown): void {
    if (replica.health !== 'down') this.log?.warn({ replica: replica.name, error: (err as Error)?.message }, 'read replica unreachable: left out');
    replica.health = 'down';
    replica.lagMs = null;
    replica.lagBytes = null;
    replica.error = (err as Error)?.message ?? String(err);
  }

  /**
   * A replica in rotation whose replay has passed `mark` (null: any), taking
   * turns. When some serve but none has reached the mark yet, their replay
   * position is asked again every 10 ms for up to `waitMs`; null: use the primary.
   */
  async pick(mark: bigint | null, waitMs: number): Promise<Replica | null> {
    const serving = this.replicas.filter((r) => r.inRotation);
    if (serving.length === 0) return null;
    const start = this.next++ % serving.length;
    const order = [...serving.slice(start), ...serving.slice(0, start)];
    const ready = order.find((r) => mark === null || (r.replay !== null && r.replay >= mark));
    if (ready) return ready;
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(10, Math.max(1, deadline - Date.now()))));
      for (const replica of order) {
        if (!replica.inRotation) continue;
        try {
          const replay = await replica.replayPosition();
          replica.replay = replica.replay !== null && replica.replay > replay ? replica.replay : replay;
          if (replay >= mark!) return replica;
        } catch (err) {
          this.leaveOut(replica, err);
        }
      }
    }
    return null;
  }

  states(): ReplicaState[] {
    return this.replicas.map((r) => ({
      name: r.name,
      state: r.health,
      lag_ms: r.lagMs,
      lag_bytes: r.lagBytes,
      ...(r.health === 'down' ? { error: r.error } : {}),
    }));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.polling?.catch(() => {});
    await Promise.all(this.replicas.map((r) => r.db.close()));
  }
}
