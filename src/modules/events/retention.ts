// EXTENSIONS 1, retention: the feed keeps 30 days of events. The hourly
// retention job deletes older events (their webhook deliveries go with them:
// every attempt of a delivery falls within its first day) and remembers, per
// account, the newest feed position it deleted, so that a cursor from before
// it is told it missed events (cursor_expired) instead of skipping them.
import type { Db } from '../../platform/db/db.ts';

export const EVENT_RETENTION_DAYS = 30;
const BATCH = 1000;

/** Deletes events older than the retention as if the clock read `now`; returns how many. */
export async function pruneEvents(db: Db, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - EVENT_RETENTION_DAYS * 86_400_000).toISOString();
  let pruned = 0;
  for (;;) {
    const count = await db.tx(async (tx) => {
      const { rows } = await tx.query<{ n: number }>(
        `WITH doomed AS (
           SELECT id FROM events WHERE created_at < $1::timestamptz ORDER BY created_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED
         ), gone AS (
           DELETE FROM events e USING doomed WHERE e.id = doomed.id RETURNING e.account_id, e.xid, e.seq
         ), newest AS (
           SELECT DISTINCT ON (account_id) account_id, xid, seq FROM gone ORDER BY account_id, xid DESC, seq DESC
         ), moved AS (
           INSERT INTO event_feed_horizons AS h (account_id, xid, seq)
           SELECT account_id, xid, seq FROM newest
           ON CONFLICT (account_id) DO UPDATE SET xid = excluded.xid, seq = excluded.seq, pruned_at = now()
            WHERE (h.xid, h.seq) < (excluded.xid, excluded.seq)
         )
         SELECT count(*)::int AS n FROM gone`,
        [cutoff],
      );
      return rows[0].n;
    });
    pruned += count;
    if (count < BATCH) return pruned;
  }
}
