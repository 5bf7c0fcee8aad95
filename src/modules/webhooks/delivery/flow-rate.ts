// EXTENSIONS 9, the rate and the circuit's probe: the attempts of a metered
// subscription start only through here, counted across every instance.
//
// The subscription's flow row is the meter: every instance locks it (FOR
// UPDATE) before it lets an attempt start, reads the database's clock once
// under that lock, counts the starts recorded within the last window, and
// records the ones it lets go at that same instant. The lock orders the
// instances and the database's clock is the one they share, so the recorded
// starts never number more than rate_per_second within any window, whoever
// made them; each claimed attempt is then sent at once.
//
// What the receiver sees is when each request arrives, not when its start
// was recorded. The window is longer than a second by a margin, and a granted
// attempt whose request cannot begin within START_BUDGET_MS of its grant (a
// busy event loop, the sender thread behind, a slow commit) is not sent on
// that grant: the request is not written (https-sender.ts), and the row goes
// back, due, on the attempt it was (giveBack), to wait for a fresh turn. So
// arrivals stay within the margin of their recorded starts, and no second of
// the receiver's clock sees more than the rate, however late an instance runs.
import type { Db, Sql } from '../../../platform/db/db.ts';
import type { Faults } from '../../../platform/edge/auth.ts';
import { CLAIMED_COLUMNS, contextOf, LEASE_SEC, type ClaimedDelivery } from './deliveries.ts';
import { startClock } from './https-sender.ts';

/**
 * The window the rate counts starts in. Over a second by a margin: an attempt
 * reaches the receiver some time after its start is recorded, and not always
 * the same time, so that the receiver's own clock must see no more than the
 * rate within any second either. A start that would come later than the
 * margin allows is not made on its grant (START_BUDGET_MS); the price of the
 * margin is a drain a little under the rate (rate / 1.2 s).
 */
export const RATE_WINDOW_MS = 1_200;
/**
 * How long after its grant a metered request may still begin (be written to
 * its connection). The rest of the window's margin over a second is left for
 * the request's travel to the receiver and the receiver's reading of it.
 */
export const START_BUDGET_MS = RATE_WINDOW_MS - 1_000 - 50;
/**
 * A claim grants a subscription at most this many starts, the rest of its
 * room going to the next claims of the same pass: each claim's requests are
 * then written soon after their grant, within START_BUDGET_MS, instead of the
 * tail of a large batch always missing it.
 */
const STARTS_PER_CLAIM = 20;
/** The operator's late_next fault: that claim's attempts begin this long after their grant. */
const LATE_FAULT_MS = 500;
/** The circuit's probes: the first this long after opening, then doubling after each failed probe, up to LONGEST_PROBE_SEC. */
export const FIRST_PROBE_SEC = 60;
export const LONGEST_PROBE_SEC = 900;

const WINDOW = `make_interval(secs => ${RATE_WINDOW_MS / 1000})`;

/** SQL: the starts of flow row `f` still in the window at instant `at`, oldest first. */
const recentStarts = (at: string) => `array(SELECT s FROM unnest(f.rate_starts) s WHERE s > ${at} - ${WINDOW} ORDER BY s)`;

/** SQL: when the next start is allowed, given the starts (oldest first) and the rate (null: now). */
const freeAt = (starts: string, rate: string) =>
  `CASE WHEN cardinality(${starts}) >= ${rate} THEN (${starts})[cardinality(${starts}) - ${rate} + 1] + ${WINDOW} END`;

/**
 * SQL over flow row `f`: its subscription's attempts start only through
 * claimMetered now (the job's clock $1): a rate with a start free, or the
 * circuit open and its probe due; not held by a pause or a Retry-After; a
 * delivery due.
 */
const METERED_NOW = `(CASE WHEN f.circuit_opened_at IS NOT NULL THEN f.next_probe_at <= $1::timestamptz ELSE f.rate_per_second IS NOT NULL END)
  AND NOT f.paused AND (f.retry_after_until IS NULL OR f.retry_after_until <= $1::timestamptz)
  AND (f.rate_free_at IS NULL OR f.rate_free_at <= clock_timestamp())
  AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = f.webhook_id AND d.status = 'pending' AND d.next_attempt_at <= $1::timestamptz)`;

/**
 * The worker's claim for metered subscriptions, beside claimDue: as many due
 * deliveries of each as its rate has room for now (the earliest due first),
 * or the circuit's one probe (the oldest held delivery; the next probe is
 * pushed back at once, so no other instance sends a second). Their starts are
 * recorded in the same transaction, and the next free start (rate_free_at),
 * which wakes the workers (due-timer.ts). One cheap statement when no
 * subscription is metered; a subscription another instance is claiming now is
 * left to it (SKIP LOCKED).
 */
export async function claimMetered(db: Db, now: string, limit: number, faults?: Faults): Promise<ClaimedDelivery[]> {
  const candidates = await db.query<{ webhook_id: string }>(`SELECT f.webhook_id FROM webhook_flows f WHERE ${METERED_NOW} LIMIT $2`, [now, limit]);
  if (!candidates.rows.length) return [];
  let startBy = 0;
  const rows = await db.tx(async (tx) => {
    const locked = await tx.query<{ webhook_id: string }>(
      `SELECT f.webhook_id FROM webhook_flows f WHERE f.webhook_id = ANY($2::uuid[]) AND ${METERED_NOW} ORDER BY f.webhook_id FOR UPDATE SKIP LOCKED`,
      [now, candidates.rows.map((r) => r.webhook_id)],
    );
    if (!locked.rows.length) return [];
    // The grant is made after this instant, whatever the two clocks say: counted from here, the budget is never too long.
    startBy = startClock() + START_BUDGET_MS;
    return (
      await tx.query<ClaimedDelivery>(CLAIM_METERED, [
        now,
        locked.rows.map((r) => r.webhook_id),
        LEASE_SEC,
        FIRST_PROBE_SEC,
        LONGEST_PROBE_SEC,
        STARTS_PER_CLAIM,
      ])
    ).rows;
  });
  for (const d of rows) {
    d.metered = true;
    d.startBy = startBy;
  }
  if (rows.length && faults?.lateNextMeteredStart) {
    faults.lateNextMeteredStart = false;
    await new Promise((resolve) => setTimeout(resolve, LATE_FAULT_MS));
  }
  return rows;
}

/**
 * A metered attempt that did not begin within its budget (nothing was sent)
 * goes back as it was before its claim: on the attempt it was due for, due
 * since its event (so the next claim takes it first, as releaseHeld orders
 * them), its turn in the window spent. The circuit's probe among them falls
 * due again at once: it never reached the receiver.
 */
export async function giveBack(db: Db, delivery: ClaimedDelivery): Promise<void> {
  await db.tx(async (tx) => {
    const { rowCount } = await tx.query(
      `UPDATE webhook_deliveries SET attempt = attempt - 1, next_attempt_at = created_at, updated_at = now()
        WHERE id = $1 AND attempt = $2 AND status = 'pending'`,
      [delivery.id, delivery.attempt],
    );
    if (rowCount) {
      await tx.query(
        `UPDATE webhook_flows SET next_probe_at = least(next_probe_at, now()), updated_at = now() WHERE webhook_id = $1 AND circuit_opened_at IS NOT NULL`,
        [delivery.webhook_id],
      );
    }
  });
}

/**
 * $1 the job's clock, $2 the locked subscriptions, $3 the lease, $4 and $5
 * the probe intervals, $6 the starts a claim grants. `clock.at`, the database's clock read once under the
 * locks, is both the instant the room is counted at and the recorded start.
 */
const CLAIM_METERED = contextOf(
  `UPDATE webhook_deliveries w SET attempt = w.attempt + 1, next_attempt_at = $1::timestamptz + make_interval(secs => $3), updated_at = now()
     FROM due WHERE w.id = due.id AND due.n <= least(due.slots, $6) AND w.status = 'pending' AND w.next_attempt_at <= $1::timestamptz
   RETURNING ${CLAIMED_COLUMNS.split(', ')
     .map((c) => `w.${c}`)
     .join(', ')}`,
  `clock AS MATERIALIZED (SELECT clock_timestamp() AS at),
   room AS (
     SELECT f.webhook_id, f.rate_per_second AS rate, f.circuit_opened_at IS NOT NULL AS probing, f.probe_interval_sec,
            CASE WHEN f.rate_per_second IS NULL THEN '{}'::timestamptz[] ELSE ${recentStarts('clock.at')} END AS recent
       FROM webhook_flows f, clock WHERE f.webhook_id = ANY($2::uuid[])
   ),
   free AS (
     SELECT room.*, greatest(0, CASE WHEN probing THEN least(1, coalesce(rate - cardinality(recent), 1)) ELSE rate - cardinality(recent) END) AS slots FROM room
   ),
   due AS (
     SELECT d.id, free.slots,
            row_number() OVER (PARTITION BY d.webhook_id ORDER BY CASE WHEN free.probing THEN d.created_at ELSE d.next_attempt_at END, d.id) AS n
       FROM webhook_deliveries d JOIN free ON free.webhook_id = d.webhook_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= $1::timestamptz AND free.slots > 0
   ),`,
  `, taken AS (
     SELECT free.*, coalesce(n.taken, 0) AS taken,
            CASE WHEN free.rate IS NULL THEN '{}' ELSE free.recent || array_fill(clock.at, ARRAY[coalesce(n.taken, 0)]) END AS starts
       FROM free CROSS JOIN clock LEFT JOIN (SELECT webhook_id, count(*)::int AS taken FROM claimed GROUP BY webhook_id) n ON n.webhook_id = free.webhook_id
   ), started AS (
     UPDATE webhook_flows f
        SET rate_starts = taken.starts, rate_free_at = ${freeAt('taken.starts', 'taken.rate')},
            next_probe_at = CASE WHEN taken.probing AND taken.taken > 0 THEN $1::timestamptz + make_interval(secs => least(coalesce(taken.probe_interval_sec, $4) * 2, $5)) ELSE f.next_probe_at END,
            probe_interval_sec = CASE WHEN taken.probing AND taken.taken > 0 THEN least(coalesce(taken.probe_interval_sec, $4) * 2, $5) ELSE f.probe_interval_sec END
       FROM taken WHERE f.webhook_id = taken.webhook_id
   )`,
);

/**
 * A start outside the worker's claim (a retry, a test, a recovery's attempt)
 * takes its turn in the rate: the next start the window allows, now or
 * later, recorded at once. A turn later than now is a reservation: it is
 * counted by every claim made before it (a claim counts every start after its
 * window's beginning, future ones too), so the worker cannot take it back,
 * and it is never earlier than a start already recorded, so the window after
 * it counts right. `waitMs`: how long until the turn; `startBy`: the request
 * must begin by then, as a claimed one must. No rate: neither.
 */
export async function takeStart(db: Db, webhookId: string): Promise<{ startBy?: number; waitMs?: number }> {
  return db.tx(async (tx: Sql) => {
    const locked = await tx.query('SELECT 1 FROM webhook_flows WHERE webhook_id = $1 AND rate_per_second IS NOT NULL FOR UPDATE', [webhookId]);
    if (!locked.rows.length) return {};
    // As in claimMetered: the turn is taken after this instant, so the budget counted from here is never too long.
    const before = startClock();
    const { rows } = await tx.query<{ wait_ms: number }>(
      `WITH c AS MATERIALIZED (SELECT clock_timestamp() AS at),
       room AS (SELECT f.webhook_id, f.rate_per_second AS rate, ${recentStarts('c.at')} AS recent FROM webhook_flows f, c WHERE f.webhook_id = $1),
       turn AS (
         SELECT room.*, greatest(c.at, room.recent[cardinality(room.recent)], ${freeAt('room.recent', 'room.rate')}) AS at FROM room, c
       ),
       taken AS (
         UPDATE webhook_flows f SET rate_starts = turn.recent || turn.at, rate_free_at = ${freeAt('(turn.recent || turn.at)', 'turn.rate')}
           FROM turn WHERE f.webhook_id = turn.webhook_id
         RETURNING f.webhook_id
       )
       SELECT extract(epoch FROM turn.at - c.at)::float8 * 1000 AS wait_ms FROM turn, c, taken`,
      [webhookId],
    );
    const waitMs = Math.max(0, Math.ceil(Number(rows[0].wait_ms)));
    return { startBy: before + waitMs + START_BUDGET_MS, waitMs };
  });
}

/**
 * A retry, test or recovery's attempt on a flowed subscription: it waits for
 * its turn in the rate (takeStart), and `send` must begin within that turn's
 * budget, or nothing is sent and it takes the next turn, so that its request
 * reaches the receiver within the window its start was counted in, as a
 * claimed attempt's does. `late`: nothing was sent, the budget had passed.
 */
export async function sendInTurn<T>(db: Db, webhookId: string, send: (startBy?: number) => Promise<T>, late: (sent: T) => boolean): Promise<T> {
  for (;;) {
    const turn = await takeStart(db, webhookId);
    // Counted from after the turn was recorded: the wait cannot end before the turn's instant on the database's clock.
    if (turn.waitMs) await new Promise((resolve) => setTimeout(resolve, turn.waitMs));
    const sent = await send(turn.startBy);
    if (turn.startBy === undefined || !late(sent)) return sent;
  }
}
