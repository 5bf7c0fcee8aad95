// Wakes the delivery worker when a delivery falls due, instead of polling:
// the timer is set to the earliest next_attempt_at of any pending delivery,
// and whoever schedules an earlier one (a new delivery's grace period, a retry,
// a lease) announces it with NOTIFY (PostgreSQL: every instance hears it;
// PGlite: this process). After each pass the timer is set from the database
// again, so an instance that died with attempts in flight is covered when
// their leases run out.
import type { Db } from '../../../platform/db/db.ts';
import { flowTakesOver } from './flow.ts';

export const DUE_CHANNEL = 'merx_webhook_due';
/** A safety net, not the mechanism: a pass at least this often even if a notification was missed. */
const LONGEST_SLEEP_MS = 5 * 60_000;
/** Announcements of due times are coalesced: at most one NOTIFY per this interval. */
const NOTIFY_EVERY_MS = 250;

/** Tells every instance's worker (this one's included) that a delivery falls due at a time; coalesced. */
export class DueAnnouncer {
  private db: Db;
  private onError: (err: unknown) => void;
  private toAnnounce = Infinity;
  private timer: NodeJS.Timeout | null = null;
  private lastAnnounced = 0;
  private stopped = false;

  constructor(db: Db, onError: (err: unknown) => void) {
    this.db = db;
    this.onError = onError;
  }

  announce(at: number): void {
    if (this.stopped || at >= this.toAnnounce) return;
    this.toAnnounce = at;
    if (this.timer) return;
    const wait = Math.max(0, this.lastAnnounced + NOTIFY_EVERY_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      const earliest = this.toAnnounce;
      this.toAnnounce = Infinity;
      this.lastAnnounced = Date.now();
      this.db.query('SELECT pg_notify($1, $2)', [DUE_CHANNEL, new Date(earliest).toISOString()]).catch(this.onError);
    }, wait);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** The worker's alarm clock: listens for announced due times and runs a pass when the earliest arrives. */
export class DueTimer {
  private db: Db;
  private pass: () => Promise<unknown>;
  private onError: (err: unknown) => void;
  private timer: NodeJS.Timeout | null = null;
  private armedFor = Infinity;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(db: Db, pass: () => Promise<unknown>, onError: (err: unknown) => void) {
    this.db = db;
    this.pass = pass;
    this.onError = onError;
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.unlisten = await this.db.listen(DUE_CHANNEL, (payload) => {
      const at = Date.parse(payload);
      if (Number.isFinite(at)) this.arm(at);
    });
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.unlisten?.().catch(() => {});
  }

  private arm(at: number): void {
    if (this.stopped) return;
    const when = Math.min(at, Date.now() + LONGEST_SLEEP_MS);
    if (this.timer && when >= this.armedFor) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = when;
    this.timer = setTimeout(() => this.wake(), Math.max(0, when - Date.now()) + 20);
    this.timer.unref();
  }

  private wake(): void {
    this.timer = null;
    this.armedFor = Infinity;
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.pass().catch(this.onError);
      } while (this.again && !this.stopped);
      if (this.stopped) return;
      const next = await this.nextDue().catch((err) => (this.onError(err), Date.now() + 60_000));
      this.running = null;
      this.arm(next ?? Date.now() + LONGEST_SLEEP_MS);
    })();
  }

  private async nextDue(): Promise<number | null> {
    // EXTENSIONS 9: not a held delivery (it would wake the worker for nothing, again and again); the end of a
    // Retry-After instead, a metered subscription's next free start or its circuit's probe; a resume, a new rate
    // and a closed circuit wake the workers themselves.
    const { rows } = await this.db.query<{ at: string | null }>(
      `SELECT least((SELECT min(d.next_attempt_at) FROM webhook_deliveries d WHERE d.status = 'pending' AND NOT ${flowTakesOver('d.webhook_id')}),
                    (SELECT min(greatest(m.due, f.rate_free_at, CASE WHEN f.circuit_opened_at IS NOT NULL THEN f.next_probe_at END))
                       FROM webhook_flows f
                       CROSS JOIN LATERAL (SELECT min(d.next_attempt_at) AS due FROM webhook_deliveries d WHERE d.webhook_id = f.webhook_id AND d.status = 'pending') m
                      WHERE (f.rate_per_second IS NOT NULL OR f.circuit_opened_at IS NOT NULL) AND NOT f.paused AND m.due IS NOT NULL
                        AND (f.retry_after_until IS NULL OR f.retry_after_until <= now())),
                    (SELECT min(retry_after_until) FROM webhook_flows WHERE retry_after_until > now())) AS at`,
    );
    return rows[0]?.at ? Date.parse(rows[0].at) : null;
  }
}
