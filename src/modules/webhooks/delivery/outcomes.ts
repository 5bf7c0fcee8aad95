// What an attempt's outcome does to its delivery (SPEC Webhook delivery
// status): the settlement, and the statements that record it, one outcome
// at a time or the routine ones many at once (deliveries.ts claims the rows).
import type { Db, Sql } from '../../../platform/db/db.ts';
import type { Notifier } from '../../../notify/notifier.ts';
import type { AttemptOutcome } from './https-sender.ts';
import { ATTEMPT_COLUMNS, ATTEMPT_RECORD, insertAttempts, type AttemptRow } from '../attempts/log.ts';
import { BACKOFF_SEC, MAX_ATTEMPTS, type ClaimedDelivery } from './deliveries.ts';

export type Settlement = 'delivered' | 'retry_later' | 'dead' | 'gone' | 'failed';

/** What an attempt's outcome does to the delivery (SPEC state table; GAPS `failed`). */
export function settle(delivery: ClaimedDelivery, outcome: AttemptOutcome, manual: boolean): Settlement {
  const code = outcome.statusCode;
  if (code !== null && code >= 200 && code < 300) return 'delivered';
  if (code === 410) return 'gone';
  if (manual && delivery.status !== 'pending') return delivery.status as 'dead' | 'failed';
  return delivery.attempt >= MAX_ATTEMPTS ? 'dead' : 'retry_later';
}

export async function recordOutcome(tx: Sql, delivery: ClaimedDelivery, outcome: AttemptOutcome, settlement: Settlement, now: string) {
  const status = settlement === 'retry_later' ? 'pending' : settlement === 'gone' ? 'dead' : settlement;
  const delay = BACKOFF_SEC[Math.min(delivery.attempt, BACKOFF_SEC.length) - 1] ?? 0;
  const { rowCount } = await tx.query(
    `UPDATE webhook_deliveries
        SET status = $2, last_status_code = $3, last_error = $4, response_body = $5,
            delivered_at = CASE WHEN $2 = 'delivered' THEN now() ELSE delivered_at END,
            next_attempt_at = CASE WHEN $2 = 'pending' THEN $6::timestamptz + make_interval(secs => $7) ELSE next_attempt_at END,
            updated_at = now()
      WHERE id = $1`,
    [delivery.id, status, outcome.statusCode, outcome.error, outcome.responseBody, now, delay],
  );
  return rowCount > 0;
}

/** An attempt's outcome that changes nothing but the delivery row and its subscription's last_* fields. */
export interface RoutineOutcome {
  delivery: ClaimedDelivery;
  outcome: AttemptOutcome;
  settlement: 'delivered' | 'retry_later';
  /** The clock of the attempt (a job run may pass one ahead): the retry delay counts from it. */
  now: string;
  /** The attempt log's row (EXTENSIONS 6), written by the same statement. */
  log: AttemptRow;
}

/**
 * Records many routine outcomes in one statement: the delivery rows (as
 * recordOutcome does) and, per subscription, last_triggered_at, the status
 * code of its latest outcome in the batch, and dead_notified_at cleared when
 * one was delivered. An outcome is recorded only while its row is still on
 * that attempt: one that a manual retry or a job run took meanwhile records its
 * own. Returns, in order, whether each outcome was recorded.
 */
export async function recordRoutineOutcomes(sql: Sql, outcomes: RoutineOutcome[]): Promise<boolean[]> {
  const { text, values } = routineOutcomesStatement(outcomes);
  const { rows } = await sql.query<{ id: string }>(text, values);
  const recorded = new Set(rows.map((r) => r.id));
  return outcomes.map((o) => recorded.has(o.delivery.id));
}

/**
 * The statement of recordRoutineOutcomes. The rows are found by the id list
 * (`w.id = ANY($2)`), not only by the join with the batch: PostgreSQL guesses
 * 100 rows for any json_to_recordset, and with a young table's statistics it
 * hash-joined that guess against a scan of every delivery, each batch
 * (measured in bench:webhooks: 3.3 ms a batch of 8, growing with the table).
 */
export function routineOutcomesStatement(outcomes: RoutineOutcome[]): { text: string; values: unknown[] } {
  const records = outcomes.map((o, seq) => ({
    seq,
    id: o.delivery.id,
    attempt: o.delivery.attempt,
    webhook_id: o.delivery.webhook_id,
    status: o.settlement === 'delivered' ? 'delivered' : 'pending',
    code: o.outcome.statusCode,
    error: o.outcome.error,
    body: o.outcome.responseBody,
    base: o.now,
    delay: BACKOFF_SEC[Math.min(o.delivery.attempt, BACKOFF_SEC.length) - 1] ?? 0,
  }));
  return {
    text: `WITH o AS (
       SELECT * FROM json_to_recordset($1::json)
         AS o(seq int, id uuid, attempt int, webhook_id uuid, status text, code int, error text, body text, base timestamptz, delay int)
     ), logged AS (
       INSERT INTO webhook_attempts (${ATTEMPT_COLUMNS})
       SELECT ${ATTEMPT_COLUMNS} FROM json_to_recordset($3::json) AS a(${ATTEMPT_RECORD})
     ), d AS (
       UPDATE webhook_deliveries w
          SET status = o.status, last_status_code = o.code, last_error = o.error, response_body = o.body,
              delivered_at = CASE WHEN o.status = 'delivered' THEN now() ELSE w.delivered_at END,
              next_attempt_at = CASE WHEN o.status = 'pending' THEN o.base + make_interval(secs => o.delay) ELSE w.next_attempt_at END,
              updated_at = now()
         FROM o WHERE w.id = ANY($2::uuid[]) AND w.id = o.id AND w.attempt = o.attempt
       RETURNING w.id
     ), latest AS (
       SELECT DISTINCT ON (o.webhook_id) o.webhook_id, o.code, bool_or(o.status = 'delivered') OVER (PARTITION BY o.webhook_id) AS delivered
         FROM o JOIN d ON d.id = o.id
        ORDER BY o.webhook_id, o.seq DESC
     ), s AS (
       UPDATE webhook_subscriptions s
          SET last_triggered_at = now(), last_status_code = latest.code,
              dead_notified_at = CASE WHEN latest.delivered THEN NULL ELSE s.dead_notified_at END, updated_at = now()
         FROM latest WHERE s.id = latest.webhook_id
       RETURNING s.id
     )
     SELECT d.id FROM d`,
    values: [JSON.stringify(records), records.map((r) => r.id), JSON.stringify(outcomes.map((o) => o.log))],
  };
}

/** A delivery that cannot be sent at all (policy re-check failed, subscription inactive). */
export async function markFailed(tx: Sql, deliveryId: string, error: string) {
  await tx.query(`UPDATE webhook_deliveries SET status = 'failed', last_error = $2, updated_at = now() WHERE id = $1`, [deliveryId, error]);
}

/** Outcomes beyond the routine (dead, gone, manual retries): one transaction each, with the email and deactivation. */
export async function recordWithSideEffects(
  db: Db,
  notifier: Notifier,
  {
    delivery,
    outcome,
    settlement,
    now,
    log,
  }: { delivery: ClaimedDelivery; outcome: AttemptOutcome; settlement: Settlement; now: Date; log: AttemptRow },
): Promise<void> {
  await db.tx(async (tx) => {
    await insertAttempts(tx, [log]);
    if (!(await recordOutcome(tx, delivery, outcome, settlement, now.toISOString()))) return;
    await tx.query(
      `UPDATE webhook_subscriptions SET last_triggered_at = now(), last_status_code = $2,
                dead_notified_at = CASE WHEN $3 THEN NULL ELSE dead_notified_at END,
                active = CASE WHEN $4 THEN false ELSE active END, updated_at = now()
          WHERE id = $1`,
      [delivery.webhook_id, outcome.statusCode, settlement === 'delivered', settlement === 'gone'],
    );
    // SPEC Receiver rules 5: one email per subscription until a delivery succeeds again.
    if (settlement === 'dead' && delivery.status === 'pending') {
      const { rowCount } = await tx.query(
        'UPDATE webhook_subscriptions SET dead_notified_at = now() WHERE id = $1 AND dead_notified_at IS NULL RETURNING id',
        [delivery.webhook_id],
      );
      if (rowCount) {
        await notifier.send(tx, {
          accountId: delivery.account_id,
          channel: 'email',
          to: delivery.merchant_email,
          subject: 'A Merx webhook endpoint keeps failing',
          body:
            `Hello ${delivery.merchant_name},\n\nthe ${delivery.event} event ${delivery.event_id} could not be delivered to ` +
            `${delivery.url} after 6 attempts (last error: ${outcome.error ?? 'unknown'}). Later events are still attempted; ` +
            'you can retry this delivery from the API. We will not email again about this endpoint until a delivery succeeds.\n\nMerx',
          kind: 'webhook_dead',
        });
      }
    }
  });
}
