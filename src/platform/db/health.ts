// Whether the database can be reached (issue 27). A query that fails for
// want of a connection makes the monitor probe at once; while probes fail the
// database is down: requests are answered 503 `unavailable` at once (the
// gate in app.ts), /healthz says so, and the outage is logged twice in all,
// when it starts and when it ends, instead of once per failed request.

/** SQLSTATE classes and codes that mean "no usable connection", not "this statement is wrong". */
const CONNECTION_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** node-postgres raises these without a code when a connection ends or never comes. */
const CONNECTION_MESSAGES = /Connection terminated|connection timeout|not queryable|timeout exceeded when trying to connect|Client was closed/i;

/** The error says the database could not be reached or dropped the connection (the statement may not have run). */
export function isConnectionError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || CONNECTION_STATES.has(code) || SOCKET_CODES.has(code))) return true;
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' && CONNECTION_MESSAGES.test(message);
}

/**
 * 25006 read_only_sql_transaction: the server took the connection but is not
 * the primary (a standby, or a primary just demoted in a failover or a
 * switchover, before the proxy in front of it noticed). For the primary's
 * Db that is as unavailable as no answer at all (issue 38); a read replica's
 * reads are judged apart (read-replicas.ts replicaFailure).
 */
export const NOT_PRIMARY = '25006';

/** No primary can take the statement now: unreachable, dropped, or not the primary. */
export function isUnavailableError(err: unknown): boolean {
  return isConnectionError(err) || (err as { code?: unknown } | null)?.code === NOT_PRIMARY;
}

/** What the primary's probe throws when the server it reached is a standby. */
export function notPrimaryError(): Error {
  return Object.assign(new Error('the server at DATABASE_URL is a standby (in recovery), not the primary'), { code: NOT_PRIMARY });
}

/** A probe's failure after its connection was made: the server answered, then the connection was cut. */
export function probeCut(err: unknown): unknown {
  return err && typeof err === 'object' && isConnectionError(err) ? Object.assign(err, { probeCut: true }) : err;
}

/** Cut after it got in, or told by the server it was ended (57P01 admin_shutdown, in any phase, connecting too). */
function isProbeCut(err: unknown): boolean {
  const { probeCut, code } = (err ?? {}) as { probeCut?: unknown; code?: unknown };
  return probeCut === true || code === '57P01';
}

/** Seconds a client is told to wait (Retry-After) while the database is away. */
export const UNAVAILABLE_RETRY_AFTER_SEC = 2;
const PROBE_EVERY_MS = 500;
/**
 * Probes in flight at once while the database is down. A probe through a
 * proxy with no server up (HAProxy queues the connection) waits out its whole
 * connection timeout, so probes overlap: one starts every PROBE_EVERY_MS, and
 * the first that gets through ends the outage within that interval of the
 * primary being reachable again, not a timeout later (issue 38).
 */
const MAX_PROBES_IN_FLIGHT = 4;

export interface HealthLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

export class DatabaseHealth {
  private down = false;
  private downSince: Date | null = null;
  private lastError = '';
  /** Probes in flight; probes started so far, and the latest started of those that got through. */
  private probes = 0;
  private probesStarted = 0;
  private lastGoodProbe = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private log: HealthLog | null = null;
  private readonly probe: () => Promise<void>;

  /** `probe`: one round trip on a fresh connection; it throws when the database cannot be reached. */
  constructor(probe: () => Promise<void>) {
    this.probe = probe;
  }

  /** Where the two lines of an outage go (the service's logger, once it exists). */
  setLog(log: HealthLog): void {
    this.log = log;
  }

  get isDown(): boolean {
    return this.down;
  }

  state(): { database: 'ok' | 'unavailable'; since?: string; error?: string } {
    if (!this.down) return { database: 'ok' };
    return { database: 'unavailable', since: this.downSince!.toISOString(), error: this.lastError };
  }

  /** A query failed: when it was for want of a connection, find out at once whether the database is down. */
  noticeFailure(err: unknown): void {
    if (this.closed || !isUnavailableError(err)) return;
    this.lastError = (err as Error).message ?? String(err);
    if (!this.down && this.probes === 0) void this.check();
  }

  private async check(): Promise<void> {
    this.probes++;
    const started = ++this.probesStarted;
    try {
      await this.probe().catch((err) => {
        // A connection cut after it got in (an administrator's pg_terminate_backend, a pooler's restart) shows the
        // server was there a moment ago: ask once more on a fresh one. A server going down refuses that one at once.
        if (isProbeCut(err)) return this.probe();
        throw err;
      });
      this.lastGoodProbe = Math.max(this.lastGoodProbe, started);
      if (this.down && !this.closed) this.markUp();
    } catch (err) {
      // A probe that began before one that got through says nothing about now.
      if (this.closed || started < this.lastGoodProbe) return;
      this.lastError = (err as Error).message ?? String(err);
      if (!this.down) this.markDown();
    } finally {
      this.probes--;
    }
  }

  private markDown(): void {
    this.down = true;
    this.downSince = new Date();
    this.log?.warn({ database: 'unavailable', error: this.lastError }, 'the database is unreachable: answering 503 until it is back');
    this.timer = setInterval(() => {
      if (this.probes < MAX_PROBES_IN_FLIGHT) void this.check();
    }, PROBE_EVERY_MS);
    this.timer.unref();
  }

  private markUp(): void {
    const seconds = Math.round((Date.now() - this.downSince!.getTime()) / 100) / 10;
    this.down = false;
    this.downSince = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.log?.info({ database: 'ok', down_sec: seconds }, 'the database is reachable again');
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
  }
}

/**
 * pino's logMethod hook: a failure for want of a database connection is not
 * logged where it happens (every request, every worker pass), since the
 * health monitor logs the outage itself, once when it starts and once when it
 * ends (issue 27: an outage wrote 14 MB of stack traces in 20 s).
 */
export function withoutConnectionErrors(this: unknown, args: unknown[], method: (...args: unknown[]) => void): void {
  const fields = args[0];
  if (fields && typeof fields === 'object' && isUnavailableError((fields as { err?: unknown }).err)) return;
  method.apply(this, args);
}
