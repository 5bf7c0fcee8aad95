// EXTENSIONS 9, webhook flow: the one rule that decides whether an attempt of
// a subscription may start now, and the Flow resource around it.
//
// A subscription without a row in webhook_flows behaves exactly as SPEC says.
// One with a row has its deliveries go through the worker's claims, never the
// fan-out's no-statement first attempt, so that every automatic, first and
// recovery attempt passes the rules below: held (flowHolds) by a pause, a
// Retry-After or an open circuit; metered (flow-rate.ts) by a rate or the
// circuit's probe. The retry and test endpoints are never held (a person asked
// for that attempt), but take their turn in the rate.
import type { Sql } from '../../../platform/db/db.ts';
import { notFound } from '../../../platform/contract/errors.ts';

/** SQL: the flow row `f` holds its subscription's attempts at `now` (paused, a Retry-After, the circuit open). */
const HOLDS = (now: string) => `(f.paused OR f.retry_after_until > ${now} OR f.circuit_opened_at IS NOT NULL)`;

/**
 * The SQL condition "this subscription's attempts are held at `now`": paused,
 * told by the receiver to wait (Retry-After, until retry_after_until), or its
 * circuit open (only a probe starts, through claimMetered). `webhookId` and
 * `now` are SQL expressions. The one place that says so: claims, the worker's
 * alarm and recoveries all use it.
 */
export function flowHolds(webhookId: string, now = 'now()'): string {
  return `EXISTS (SELECT 1 FROM webhook_flows f WHERE f.webhook_id = ${webhookId} AND ${HOLDS(now)})`;
}

/**
 * The SQL condition "the worker's ordinary claim leaves this subscription's
 * rows alone": held (flowHolds), or metered by a rate, whose starts only
 * claimMetered (flow-rate.ts) counts. Such rows are `held` in the Flow while due.
 */
export function flowTakesOver(webhookId: string, now = 'now()'): string {
  return `EXISTS (SELECT 1 FROM webhook_flows f WHERE f.webhook_id = ${webhookId} AND (${HOLDS(now)} OR f.rate_per_second IS NOT NULL))`;
}

export interface Flow {
  webhook_id: string;
  paused: boolean;
  paused_at: string | null;
  rate_per_second: number | null;
  circuit_breaker: boolean;
  circuit: 'closed' | 'open';
  circuit_opened_at: string | null;
  next_probe_at: string | null;
  retry_after_until: string | null;
  held: number;
}

export interface FlowChanges {
  paused?: boolean;
  rate_per_second?: number | null;
  circuit_breaker?: boolean;
}

const iso = (v: unknown) => (v == null ? null : new Date(v as string).toISOString());

/** The Flow of a subscription of the account (defaults when it has no row), or 404. */
export async function getFlow(sql: Sql, accountId: string, webhookId: string): Promise<Flow> {
  const { rows } = await sql.query<Record<string, unknown>>(
    `SELECT s.id, f.paused, f.paused_at, f.rate_per_second, f.circuit_breaker, f.circuit_opened_at, f.next_probe_at,
            CASE WHEN f.retry_after_until > now() THEN f.retry_after_until END AS retry_after_until,
            CASE WHEN ${flowTakesOver('s.id')}
                 THEN (SELECT count(*)::int FROM webhook_deliveries d WHERE d.webhook_id = s.id AND d.status = 'pending' AND d.next_attempt_at <= now())
                 ELSE 0 END AS held
       FROM webhook_subscriptions s LEFT JOIN webhook_flows f ON f.webhook_id = s.id
      WHERE s.account_id = $1 AND s.id = $2`,
    [accountId, webhookId],
  );
  const r = rows[0];
  if (!r) throw notFound('webhook subscription');
  return {
    webhook_id: r.id as string,
    paused: r.paused === true,
    paused_at: iso(r.paused_at),
    rate_per_second: (r.rate_per_second as number | null) ?? null,
    circuit_breaker: r.circuit_breaker === true,
    circuit: r.circuit_opened_at ? 'open' : 'closed',
    circuit_opened_at: iso(r.circuit_opened_at),
    next_probe_at: iso(r.next_probe_at),
    retry_after_until: iso(r.retry_after_until),
    held: Number(r.held),
  };
}

/**
 * Applies the changes (the subscription locked, so two PATCHes do not
 * interleave). A resume, or the circuit breaker switched off while open,
 * releases the held deliveries (releaseHeld); a new rate counts the starts
 * already made (its next free start is worked out again at the next claim).
 * Switching the breaker on or off starts its count of failures afresh. The
 * caller wakes the workers after the commit.
 */
export async function updateFlow(tx: Sql, accountId: string, webhookId: string, changes: FlowChanges): Promise<{ flow: Flow; released: boolean }> {
  const before = await getFlow(tx, accountId, webhookId);
  await tx.query('SELECT id FROM webhook_subscriptions WHERE id = $1 FOR UPDATE', [webhookId]);
  const breakerOff = changes.circuit_breaker === false;
  await tx.query(
    `INSERT INTO webhook_flows (webhook_id, account_id, paused, paused_at, rate_per_second, circuit_breaker)
     VALUES ($1, $2, coalesce($3, false), CASE WHEN $3 THEN now() END, $4, coalesce($6, false))
     ON CONFLICT (webhook_id) DO UPDATE SET
       paused = coalesce($3, webhook_flows.paused),
       paused_at = CASE WHEN $3 IS NULL THEN webhook_flows.paused_at WHEN $3 THEN coalesce(webhook_flows.paused_at, now()) END,
       rate_per_second = CASE WHEN $5 THEN $4 ELSE webhook_flows.rate_per_second END,
       rate_starts = CASE WHEN $5 AND $4 IS NULL THEN '{}' ELSE webhook_flows.rate_starts END,
       rate_free_at = CASE WHEN $5 THEN NULL ELSE webhook_flows.rate_free_at END,
       circuit_breaker = coalesce($6, webhook_flows.circuit_breaker),
       failures_in_a_row = CASE WHEN $6 IS NOT NULL AND $6 <> webhook_flows.circuit_breaker THEN 0 ELSE webhook_flows.failures_in_a_row END,
       circuit_opened_at = CASE WHEN $7 THEN NULL ELSE webhook_flows.circuit_opened_at END,
       next_probe_at = CASE WHEN $7 THEN NULL ELSE webhook_flows.next_probe_at END,
       probe_interval_sec = CASE WHEN $7 THEN NULL ELSE webhook_flows.probe_interval_sec END,
       updated_at = now()`,
    [
      webhookId,
      accountId,
      changes.paused ?? null,
      changes.rate_per_second ?? null,
      'rate_per_second' in changes,
      changes.circuit_breaker ?? null,
      breakerOff,
    ],
  );
  const released = (before.paused && changes.paused === false) || (before.circuit === 'open' && breakerOff);
  if (released) await releaseHeld(tx, webhookId);
  return { flow: await getFlow(tx, accountId, webhookId), released };
}

/**
 * Held deliveries are let go (a resume, the circuit closed): each becomes due
 * since its event was written (the row's created_at), so that the claims,
 * which take the earliest due first, send them oldest event first.
 */
export async function releaseHeld(tx: Sql, webhookId: string): Promise<void> {
  await tx.query(
    `UPDATE webhook_deliveries SET next_attempt_at = created_at WHERE webhook_id = $1 AND status = 'pending' AND next_attempt_at <= now()`,
    [webhookId],
  );
}

/** EXTENSIONS 9: a receiver's Retry-After is honoured up to an hour. */
export const RETRY_AFTER_CAP_SEC = 3600;

/**
 * When a 429 or 503 answer's Retry-After lets the next attempt start: a
 * number of seconds or an HTTP date (RFC 9110 10.2.3), capped at an hour;
 * null for any other answer, a missing or unreadable header, or a time
 * already past.
 */
export function backPressureUntil(statusCode: number | null, headers: Record<string, string> | null | undefined, nowMs: number): Date | null {
  if (statusCode !== 429 && statusCode !== 503) return null;
  const value = headers?.['retry-after']?.trim();
  if (!value) return null;
  let at: number;
  if (/^\d+$/.test(value)) at = nowMs + Math.min(Number(value), RETRY_AFTER_CAP_SEC) * 1000;
  else {
    const date = Date.parse(value);
    if (!Number.isFinite(date)) return null;
    at = Math.min(date, nowMs + RETRY_AFTER_CAP_SEC * 1000);
  }
  return at > nowMs ? new Date(at) : null;
}

/** Holds the subscription's attempts until `until` (the later of two back-pressures wins). */
export async function recordBackPressure(sql: Sql, accountId: string, webhookId: string, until: Date): Promise<void> {
  await sql.query(
    `INSERT INTO webhook_flows (webhook_id, account_id, retry_after_until) VALUES ($1, $2, $3)
     ON CONFLICT (webhook_id) DO UPDATE SET retry_after_until = greatest(webhook_flows.retry_after_until, $3), updated_at = now()`,
    [webhookId, accountId, until.toISOString()],
  );
}
