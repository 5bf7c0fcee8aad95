// Recoveries (EXTENSIONS 6): send again every delivery of a subscription
// created in a window whose status is one of those asked, oldest first and
// each once. A recovery is a row; the instance holding its lease
// (runner.ts) takes one delivery at a time: the row's position moves
// past the delivery in the same statement that takes it, before the attempt is
// sent, so no delivery is sent twice by one recovery, whichever instance runs
// it and whatever restarts in between (an attempt cut off by a crash is not
// made again: at most once per recovery). A recovered attempt changes the
// delivery only when it succeeds; the automatic schedule is never spent.
import crypto from 'node:crypto';
import { flowHolds } from '../delivery/flow.ts';
import type { Sql } from '../../../platform/db/db.ts';
import { AppError } from '../../../platform/contract/errors.ts';
import { findSubscription } from '../subscriptions/queries.ts';
import { insertAttempts, type AttemptRow } from '../attempts/log.ts';
import type { AttemptOutcome } from '../delivery/https-sender.ts';
import { getRecovery, RECOVERY_COLUMNS, type RecoveryRecord } from './view.ts';

/** Failed attempts in a row after which a recovery ends `stopped`. */
export const MAX_FAILURES_IN_A_ROW = 10;
/** Start to start, per recovery (so per endpoint: one recovery runs per subscription): at most 10 starts within any second. */
export const START_SPACING_MS = 120;
/** How long a runner's claim on a recovery lasts without being renewed (each take renews it; > one attempt's 10 s). */
export const LEASE_SEC = 30;

export interface RecoveryWindow {
  since: string;
  until: string;
  statuses: string[];
}

const MATCHING = `d.account_id = $1 AND d.webhook_id = $2 AND d.created_at >= $3::timestamptz AND d.created_at <= $4::timestamptz AND d.status = ANY($5::text[])`;

/** The deliveries a recovery of this window would take now (the dry run's count, and `matched`). */
export async function countMatching(sql: Sql, accountId: string, webhookId: string, w: RecoveryWindow): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries d WHERE ${MATCHING}`, [
    accountId,
    webhookId,
    w.since,
    w.until,
    w.statuses,
  ]);
  return rows[0].n;
}

/** The 409s a recovery start meets (a dry run says them too): an inactive subscription, one already running. */
export async function checkStartable(sql: Sql, accountId: string, webhookId: string, lock: boolean): Promise<void> {
  const subscription = await findSubscription(sql, accountId, webhookId, { lock });
  if (!subscription.active) throw new AppError('conflict', 'the subscription is inactive; activate it first', { reason: 'subscription_inactive' });
  const { rowCount } = await sql.query(`SELECT 1 FROM webhook_recoveries WHERE webhook_id = $1 AND state = 'running'`, [webhookId]);
  if (rowCount)
    throw new AppError('conflict', 'a recovery of this subscription is running; cancel it or wait for it to end', { reason: 'recovery_running' });
}

/** Starts a recovery (the subscription's row lock serialises starts: one running per subscription). */
export async function startRecovery(tx: Sql, accountId: string, webhookId: string, w: RecoveryWindow): Promise<RecoveryRecord> {
  await checkStartable(tx, accountId, webhookId, true);
  const matched = await countMatching(tx, accountId, webhookId, w);
  const { rows } = await tx.query<RecoveryRecord>(
    `INSERT INTO webhook_recoveries (id, account_id, webhook_id, since, until, statuses, matched)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${RECOVERY_COLUMNS}`,
    [crypto.randomUUID(), accountId, webhookId, w.since, w.until, w.statuses, matched],
  );
  return rows[0];
}

/** Cancels a running recovery (an attempt in flight finishes and is counted); a finished one is answered unchanged. */
export async function cancelRecovery(tx: Sql, accountId: string, webhookId: string, recoveryId: string): Promise<RecoveryRecord> {
  await tx.query(
    `UPDATE webhook_recoveries SET state = 'cancelled', finished_at = now(), lease_owner = NULL, lease_until = NULL
      WHERE account_id = $1 AND webhook_id = $2 AND id = $3 AND state = 'running'`,
    [accountId, webhookId, recoveryId],
  );
  return getRecovery(tx, accountId, webhookId, recoveryId);
}

/** Running recoveries nobody holds (new, released by a stopping instance, or whose holder died): this instance takes them. */
export async function claimRecoveries(sql: Sql, owner: string, limit: number): Promise<Array<{ id: string; wait_ms: number }>> {
  const { rows } = await sql.query<{ id: string; wait_ms: number }>(
    `UPDATE webhook_recoveries SET lease_owner = $1, lease_until = now() + make_interval(secs => $2)
      WHERE id IN (SELECT id FROM webhook_recoveries WHERE state = 'running' AND (lease_until IS NULL OR lease_until < now())
                    ORDER BY started_at LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING id, GREATEST(0, extract(epoch FROM (last_start_at + make_interval(secs => $4) - clock_timestamp())) * 1000)::int AS wait_ms`,
    [owner, LEASE_SEC, limit, START_SPACING_MS / 1000],
  );
  return rows.map((r) => ({ id: r.id, wait_ms: r.wait_ms ?? 0 }));
}

export type Take = { deliveryId: string } | { finished: true } | { lost: true } | { held: true };

/**
 * The next delivery of the recovery, oldest first, taken for good: the
 * position moves past it and `attempted` counts it, in one statement that
 * also renews the lease. Nothing left: the recovery ends `done` (or `stopped`
 * when its subscription was deactivated meanwhile). `lost`: cancelled, or
 * another instance holds it now.
 */
export async function takeNext(sql: Sql, recoveryId: string, owner: string): Promise<Take> {
  // EXTENSIONS 9: while the subscription's flow holds its attempts, the recovery waits where it is (its lease renewed).
  const waiting = await sql.query(
    `UPDATE webhook_recoveries w SET lease_until = now() + make_interval(secs => $3)
      WHERE w.id = $1 AND w.state = 'running' AND w.lease_owner = $2 AND ${flowHolds('w.webhook_id')}`,
    [recoveryId, owner, LEASE_SEC],
  );
  if (waiting.rowCount) return { held: true };
  const { rows } = await sql.query<{ delivery_id: string }>(
    `WITH r AS (
       SELECT r.* FROM webhook_recoveries r JOIN webhook_subscriptions s ON s.id = r.webhook_id
        WHERE r.id = $1 AND r.state = 'running' AND r.lease_owner = $2 AND s.active
     ), next AS (
       SELECT d.id, d.created_at FROM webhook_deliveries d, r
        WHERE d.account_id = r.account_id AND d.webhook_id = r.webhook_id AND d.created_at >= r.since AND d.created_at <= r.until
          AND d.status = ANY(r.statuses) AND (r.position_id IS NULL OR (d.created_at, d.id) > (r.position_created_at, r.position_id))
        ORDER BY d.created_at, d.id LIMIT 1
     )
     UPDATE webhook_recoveries w
        SET position_created_at = next.created_at, position_id = next.id, attempted = w.attempted + 1,
            last_start_at = clock_timestamp(), lease_until = now() + make_interval(secs => $3)
       FROM next WHERE w.id = $1 AND w.state = 'running' AND w.lease_owner = $2
     RETURNING next.id AS delivery_id`,
    [recoveryId, owner, LEASE_SEC],
  );
  if (rows[0]) return { deliveryId: rows[0].delivery_id };
  const ended = await sql.query(
    `UPDATE webhook_recoveries w SET state = CASE WHEN s.active THEN 'done' ELSE 'stopped' END, finished_at = now(), lease_owner = NULL, lease_until = NULL
       FROM webhook_subscriptions s WHERE w.id = $1 AND w.state = 'running' AND w.lease_owner = $2 AND s.id = w.webhook_id`,
    [recoveryId, owner],
  );
  return ended.rowCount ? { finished: true } : { lost: true };
}

/**
 * A recovered attempt's outcome, in one transaction: the attempt log; on
 * success the delivery delivered and dead_notified_at cleared (like any
 * success); the subscription's last_* fields (a 410 deactivates it, SPEC
 * Receiver rules); the recovery's counts, and `stopped` after 10 failures in
 * a row or a 410. A failure leaves the delivery's status, attempt and
 * next_attempt_at as they were.
 */
export async function recordRecoveryAttempt(
  tx: Sql,
  recoveryId: string,
  delivery: { id: string; webhook_id: string },
  outcome: AttemptOutcome,
  log: AttemptRow,
): Promise<void> {
  const code = outcome.statusCode;
  const ok = code !== null && code >= 200 && code < 300;
  const gone = code === 410;
  await insertAttempts(tx, [log]);
  if (ok) {
    await tx.query(
      `UPDATE webhook_deliveries SET status = 'delivered', last_status_code = $2, last_error = NULL, response_body = $3, delivered_at = now(), updated_at = now()
        WHERE id = $1 AND status <> 'delivered'`,
      [delivery.id, code, outcome.responseBody],
    );
  }
  await tx.query(
    `UPDATE webhook_subscriptions SET last_triggered_at = now(), last_status_code = $2,
            dead_notified_at = CASE WHEN $3 THEN NULL ELSE dead_notified_at END,
            active = CASE WHEN $4 THEN false ELSE active END, updated_at = now()
      WHERE id = $1`,
    [delivery.webhook_id, code, ok, gone],
  );
  await tx.query(
    `UPDATE webhook_recoveries
        SET delivered = delivered + $2::int, failed = failed + 1 - $2::int,
            failures_in_a_row = CASE WHEN $2::int = 1 THEN 0 ELSE failures_in_a_row + 1 END,
            state = CASE WHEN state = 'running' AND ($3 OR ($2::int = 0 AND failures_in_a_row + 1 >= $4)) THEN 'stopped' ELSE state END,
            finished_at = CASE WHEN state = 'running' AND ($3 OR ($2::int = 0 AND failures_in_a_row + 1 >= $4)) THEN now() ELSE finished_at END
      WHERE id = $1`,
    [recoveryId, ok ? 1 : 0, gone, MAX_FAILURES_IN_A_ROW],
  );
}

/** A stopping instance hands its recoveries back at once (the next instance need not wait for the lease to expire). */
export async function releaseRecoveries(sql: Sql, owner: string): Promise<void> {
  await sql.query(`UPDATE webhook_recoveries SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1 AND state = 'running'`, [owner]);
}
