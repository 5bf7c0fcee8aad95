// EXTENSIONS 9: what an attempt's answer does to its subscription's flow,
// before the next attempt of the subscription may start: a Retry-After on a
// 429 or 503 holds the others until then (back-pressure), and with the
// circuit breaker on, 10 failures in a row open the circuit (one email to the
// merchant per opening) and a success of any trigger closes it (the held
// deliveries drain, at the rate if one is set).
import type { Db, Sql } from '../../../platform/db/db.ts';
import type { Notifier } from '../../../notify/notifier.ts';
import type { AttemptOutcome } from './https-sender.ts';
import type { ClaimedDelivery } from './deliveries.ts';
import { backPressureUntil, recordBackPressure, releaseHeld } from './flow.ts';
import { FIRST_PROBE_SEC } from './flow-rate.ts';

/** Failed attempts in a row (of any trigger) that open the circuit. */
export const OPEN_AFTER_FAILURES = 10;

const succeeded = (o: AttemptOutcome) => o.statusCode !== null && o.statusCode >= 200 && o.statusCode < 300;

export class FlowOutcomes {
  /**
   * Subscriptions this instance was told to wait for (Retry-After), until when (ms): its lanes
   * hand their queued first attempts to the worker instead of sending them (the database holds the same time
   * for every instance's claims).
   */
  readonly backPressure = new Map<string, number>();
  private readonly db: Db;
  private readonly notifier: Notifier;
  /** Tells every instance's worker that deliveries may start at a time (DueAnnouncer). */
  private readonly announce: (at: number) => void;

  constructor(db: Db, notifier: Notifier, announce: (at: number) => void) {
    this.db = db;
    this.notifier = notifier;
    this.announce = announce;
  }

  /** Notes an answered (or timed-out) attempt; a flowless subscription costs nothing here but the Retry-After check. */
  async note(delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
    const until = backPressureUntil(outcome.statusCode, outcome.responseHeaders, Date.now());
    if (until) {
      this.backPressure.set(delivery.webhook_id, Math.max(until.getTime(), this.backPressure.get(delivery.webhook_id) ?? 0));
      await recordBackPressure(this.db, delivery.account_id, delivery.webhook_id, until);
      this.announce(until.getTime());
    }
    if (!delivery.circuit_breaker) return;
    const ok = succeeded(outcome);
    // The usual answer, a success with no failure counted and the circuit closed, changes nothing: one read, no lock, no transaction.
    if (ok && !(await circuitToReset(this.db, delivery.webhook_id))) return;
    if ((await this.db.tx((tx) => noteCircuit(tx, this.notifier, delivery, ok))) === 'closed') this.announce(Date.now());
  }
}

/**
 * Whether a success has anything to reset on the circuit: failures counted,
 * or the circuit open. Read without a lock: a failure counted just after the
 * read comes after this success in the row's order, as it would under the lock.
 */
async function circuitToReset(db: Db, webhookId: string): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM webhook_flows WHERE webhook_id = $1 AND circuit_breaker AND (failures_in_a_row > 0 OR circuit_opened_at IS NOT NULL)',
    [webhookId],
  );
  return rows.length > 0;
}

/**
 * Counts one outcome on the subscription's circuit (its flow row locked, so
 * instances count one after the other): the 10th failure in a row opens it,
 * with the first probe FIRST_PROBE_SEC later and the merchant's email, in
 * this transaction; a success resets the count and, when open, closes it and
 * lets the held deliveries go, oldest event first.
 */
export async function noteCircuit(tx: Sql, notifier: Notifier, delivery: ClaimedDelivery, ok: boolean): Promise<'opened' | 'closed' | null> {
  const { rows } = await tx.query<{ failures_in_a_row: number; open: boolean }>(
    `SELECT failures_in_a_row, circuit_opened_at IS NOT NULL AS open FROM webhook_flows WHERE webhook_id = $1 AND circuit_breaker FOR UPDATE`,
    [delivery.webhook_id],
  );
  const flow = rows[0];
  if (!flow) return null;
  if (ok) {
    if (flow.failures_in_a_row === 0 && !flow.open) return null;
    await tx.query(
      `UPDATE webhook_flows SET failures_in_a_row = 0, circuit_opened_at = NULL, next_probe_at = NULL, probe_interval_sec = NULL, updated_at = now() WHERE webhook_id = $1`,
      [delivery.webhook_id],
    );
    if (!flow.open) return null;
    await releaseHeld(tx, delivery.webhook_id);
    return 'closed';
  }
  const opens = !flow.open && flow.failures_in_a_row + 1 >= OPEN_AFTER_FAILURES;
  await tx.query(
    `UPDATE webhook_flows SET failures_in_a_row = failures_in_a_row + 1, updated_at = now(),
            circuit_opened_at = CASE WHEN $2 THEN now() ELSE circuit_opened_at END,
            next_probe_at = CASE WHEN $2 THEN now() + make_interval(secs => $3) ELSE next_probe_at END,
            probe_interval_sec = CASE WHEN $2 THEN $3 ELSE probe_interval_sec END
      WHERE webhook_id = $1`,
    [delivery.webhook_id, opens, FIRST_PROBE_SEC],
  );
  if (!opens) return null;
  await notifier.send(tx, {
    accountId: delivery.account_id,
    channel: 'email',
    to: delivery.merchant_email,
    subject: 'A Merx webhook endpoint is paused by its circuit breaker',
    body:
      `Hello ${delivery.merchant_name},\n\n${delivery.url} failed ${OPEN_AFTER_FAILURES} attempts in a row, so its circuit breaker opened. ` +
      `Its deliveries are held, none dropped and no attempt spent: Merx tries the oldest one in ${FIRST_PROBE_SEC} seconds, ` +
      'then less and less often (at most every 15 minutes), and sends them all as soon as one attempt succeeds. ' +
      'You can see the circuit on the webhook flow, and switch the breaker off there.\n\nMerx',
    kind: 'webhook_circuit_open',
  });
  return 'opened';
}
