// Delivery rows: created by the fan-out, claimed for an attempt, read as
// the delivery view (what an outcome does to them: outcomes.ts).
// An attempt first takes a short lease on its row (a committed UPDATE), then
// sends outside any transaction, then records the outcome: no transaction is
// held open across the network, and a process that dies mid-attempt leaves
// a lease that simply expires into a retry (at least once).
import crypto from 'node:crypto';
import type { Sql } from '../../../platform/db/db.ts';
import { envelopeJson, envelopeOf, envelopeText, type EmittedEvent } from '../../../platform/db/outbox.ts';
import { notFound } from '../../../platform/contract/errors.ts';
import { isoTime, jsonObject, type JsonView, readOne, valueOf, type JsonText } from '../../../platform/read-path/index.ts';
import type { Static } from 'typebox';
import type { Delivery } from '../schema.ts';
import { flowTakesOver } from './flow.ts';

export const MAX_ATTEMPTS = 6;
/** SPEC Receiver rules 4: delay before attempts 2..6. */
export const BACKOFF_SEC = [60, 300, 1800, 7200, 43200];
/** The worker takes over a first attempt only after this grace. */
export const FIRST_ATTEMPT_GRACE_SEC = 60;
/** How long an attempt in flight keeps others away from its row (> the 10 s attempt timeout). */
export const LEASE_SEC = 120;

/**
 * A delivery just committed, awaiting its first attempt, with all that attempt
 * needs (read in the fan-out statement), so that sending it soon after the
 * commit takes no statement at all.
 */
export interface NewDelivery {
  id: string;
  webhookId: string;
  delivery: ClaimedDelivery;
  /** performance.now() when the transaction committed. */
  committedAt: number;
  /**
   * EXTENSIONS 9: its subscription has flow settings, so the row was written
   * as attempt 0, due now, for the worker's claim (which asks flowHolds); the
   * engine sends nothing itself, it only wakes the workers.
   */
  viaWorker: boolean;
}

/** EXTENSIONS 6: deliveries of these events carry X-Merx-Resource-Version (inventory.low_stock and test carry none). */
const VERSIONED_PREFIXES = ['order.', 'shipment.'];

/**
 * One delivery per (event, active subscription to it), in the event's own
 * transaction, written as attempt 1: the instance that commits it sends that
 * attempt at once (the 60 s grace keeps the worker away meanwhile), so no
 * statement has to say so again. Should it never be sent (a crash), the worker
 * makes the next attempt, 2, after the grace: an attempt that may have reached
 * the receiver is never repeated under its own X-Merx-Delivery id.
 * `committed` gets the new deliveries once their transaction commits (the
 * engine of the instance that wrote them sends their first attempts).
 */
export async function fanOut(tx: Sql, event: EmittedEvent, committed: (created: NewDelivery[]) => void): Promise<string[]> {
  if (event.event === 'test') return [];
  const versioned = VERSIONED_PREFIXES.some((prefix) => event.event.startsWith(prefix));
  const { rows } = await tx.query<{
    id: string;
    webhook_id: string;
    url: string;
    secret: string;
    previous_secret: string | null;
    previous_secret_expires_at: string | null;
    merchant_email: string;
    merchant_name: string;
    resource_version: number | null;
    via_worker: boolean;
  }>(
    `WITH s AS (
       SELECT s.id, s.account_id, s.url, s.secret, s.previous_secret, s.previous_secret_expires_at, a.email, a.name,
              EXISTS (SELECT 1 FROM webhook_flows f WHERE f.webhook_id = s.id) AS via_worker
         FROM webhook_subscriptions s JOIN accounts a ON a.id = s.account_id
        WHERE s.account_id = $1 AND s.active AND $3 = ANY(s.events)
     ), v AS (
       -- EXTENSIONS 6: once per event (a CTE with a volatile function is evaluated once), see migration 022.
       SELECT CASE WHEN $5 THEN nextval('webhook_resource_versions') END AS version
     ), ins AS (
       INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, event, attempt, next_attempt_at, resource_version)
       SELECT gen_random_uuid(), s.account_id, s.id, $2, $3, CASE WHEN s.via_worker THEN 0 ELSE 1 END,
              CASE WHEN s.via_worker THEN now() ELSE now() + make_interval(secs => $4) END, v.version FROM s, v
       RETURNING id, webhook_id, resource_version
     )
     SELECT ins.id, ins.webhook_id, ins.resource_version, s.url, s.secret, s.previous_secret, s.previous_secret_expires_at,
            s.email AS merchant_email, s.name AS merchant_name, s.via_worker
       FROM ins JOIN s ON s.id = ins.webhook_id`,
    [event.account_id, event.id, event.event, FIRST_ATTEMPT_GRACE_SEC, versioned],
  );
  if (rows.length) {
    // Serialised now, inside the transaction, and once for every subscription: the body is the event as written, whatever happens to `data` later.
    const envelope = envelopeOf(event);
    const body = envelopeText(envelope);
    const created: NewDelivery[] = rows.map((r) => ({
      id: r.id,
      webhookId: r.webhook_id,
      committedAt: 0,
      viaWorker: r.via_worker,
      delivery: {
        id: r.id,
        account_id: event.account_id,
        webhook_id: r.webhook_id,
        event_id: event.id,
        event: event.event,
        status: 'pending',
        attempt: 1,
        url: r.url,
        secret: r.secret,
        previous_secret: r.previous_secret,
        previous_secret_expires_at: r.previous_secret_expires_at,
        subscription_active: true,
        merchant_email: r.merchant_email,
        merchant_name: r.merchant_name,
        envelope,
        body,
        resource_version: r.resource_version,
      },
    }));
    tx.afterCommit(() => {
      const now = performance.now();
      for (const d of created) d.committedAt = now;
      committed(created);
    });
  }
  return rows.map((r) => r.id);
}

export async function insertDelivery(tx: Sql, accountId: string, webhookId: string, event: EmittedEvent): Promise<string> {
  const id = crypto.randomUUID();
  await tx.query(
    `INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, event, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [id, accountId, webhookId, event.id, event.event, FIRST_ATTEMPT_GRACE_SEC],
  );
  return id;
}

export interface ClaimedDelivery {
  id: string;
  account_id: string;
  webhook_id: string;
  event_id: string;
  event: string;
  status: string;
  attempt: number;
  /** What the attempt needs, read in the same statement as the claim (one round trip, not four). */
  url: string;
  secret: string;
  /** The secret before the latest rotation, which signs too until it expires (EXTENSIONS 4). */
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  subscription_active: boolean;
  merchant_email: string;
  merchant_name: string;
  envelope: Record<string, unknown> | null;
  /** The envelope as sent, when the fan-out serialised it already (one text for all its subscriptions). */
  body?: string;
  /** X-Merx-Resource-Version: the order's or shipment's version when the event committed; null for other events. */
  resource_version: number | null;
  /** EXTENSIONS 9: its subscription has flow settings (attempts go one at a time per subscription, and ask flowHolds just before). */
  flowed?: boolean;
  /** EXTENSIONS 9: its subscription's circuit breaker is on (each outcome is counted: flow-outcomes.ts). */
  circuit_breaker?: boolean;
  /** EXTENSIONS 9: claimed by claimMetered (flow-rate.ts), its start already counted: it goes at once. */
  metered?: boolean;
  /**
   * EXTENSIONS 9: a metered attempt's request may begin until then (ms on
   * performance.timeOrigin + performance.now()); later, it is not sent on that
   * grant (flow-rate.ts giveBack).
   */
  startBy?: number;
}

export const CLAIMED_COLUMNS = 'id, account_id, webhook_id, event_id, event, status, attempt, resource_version';

/** Wraps a claiming UPDATE so it also returns the subscription, the merchant and the event's envelope. */
function withContext(claim: string): string {
  return contextOf(`${claim} RETURNING ${CLAIMED_COLUMNS}`);
}

/**
 * `rows` (the claimed rows, named `claimed`) with what their attempts need.
 * `before` and `after`: further common table expressions around it (each
 * ending, or starting, with a comma), for a claim that writes more.
 */
export function contextOf(rows: string, before = '', after = ''): string {
  return `WITH ${before} claimed AS (${rows}) ${after}
    SELECT c.*, f.webhook_id IS NOT NULL AS flowed, coalesce(f.circuit_breaker, false) AS circuit_breaker, s.url, s.secret, s.active AS subscription_active,
           a.email AS merchant_email, a.name AS merchant_name, s.previous_secret, s.previous_secret_expires_at, ${envelopeJson('e')} AS envelope
      FROM claimed c
      JOIN webhook_subscriptions s ON s.id = c.webhook_id
      JOIN accounts a ON a.id = c.account_id
      LEFT JOIN webhook_flows f ON f.webhook_id = c.webhook_id
      LEFT JOIN events e ON e.id = c.event_id`;
}

/** A delivery with all an attempt needs, taken without a lease (a recovery's attempt: it changes no schedule). */
export async function deliveryForResend(sql: Sql, deliveryId: string): Promise<ClaimedDelivery | null> {
  const { rows } = await sql.query(contextOf(`SELECT ${CLAIMED_COLUMNS} FROM webhook_deliveries WHERE id = $1`), [deliveryId]);
  return rows[0] ?? null;
}

/**
 * A pending row whose first attempt nobody has made yet: a test event's row
 * (attempt 0), or a fan-out's row, written as attempt 1 by the transaction
 * that made it (its instance sends it at once; the grace is its lease) and
 * with no outcome recorded. The worker and manual retries move `attempt` on,
 * so a row they took is never taken here again.
 */
const NOT_YET_ATTEMPTED = `status = 'pending' AND (attempt = 0 OR (attempt = 1 AND last_status_code IS NULL AND last_error IS NULL))`;

/** Attempt 1, right after the commit: only while nobody has tried yet. */
export async function claimFirstAttempt(sql: Sql, deliveryId: string): Promise<ClaimedDelivery | null> {
  const { rows } = await sql.query(
    withContext(`UPDATE webhook_deliveries SET attempt = 1, next_attempt_at = now() + make_interval(secs => $2), updated_at = now()
      WHERE id = $1 AND ${NOT_YET_ATTEMPTED}`),
    [deliveryId, LEASE_SEC],
  );
  return rows[0] ?? null;
}

/** Attempt 1 of many deliveries in one statement; those another instance or the worker took already are left out. */
export async function claimFirstAttempts(sql: Sql, deliveryIds: string[]): Promise<ClaimedDelivery[]> {
  const { rows } = await sql.query(
    withContext(`UPDATE webhook_deliveries SET attempt = 1, next_attempt_at = now() + make_interval(secs => $2), updated_at = now()
      WHERE id = ANY($1::uuid[]) AND ${NOT_YET_ATTEMPTED}`),
    [deliveryIds, LEASE_SEC],
  );
  return rows;
}

/**
 * EXTENSIONS 9: a queued first attempt this instance will not send now (its
 * subscription is under back-pressure): back to attempt 0, due now, for the
 * worker's claim, which holds it until the flow lets it start.
 */
export async function handToWorker(sql: Sql, deliveryId: string): Promise<void> {
  await sql.query(`UPDATE webhook_deliveries SET attempt = 0, next_attempt_at = now() WHERE id = $1 AND ${NOT_YET_ATTEMPTED}`, [deliveryId]);
}

/**
 * First attempts a stopping instance had queued but not sent: back to
 * attempt 0, so that the worker that takes them over after the grace sends
 * them as attempt 1.
 */
export async function releaseFirstAttempts(sql: Sql, deliveryIds: string[]): Promise<void> {
  await sql.query(`UPDATE webhook_deliveries SET attempt = 0 WHERE id = ANY($1::uuid[]) AND ${NOT_YET_ATTEMPTED}`, [deliveryIds]);
}

/**
 * The worker's pass: due pending rows, SKIP LOCKED so several instances never
 * take the same row; none of a subscription whose flow holds or meters it
 * (EXTENSIONS 9: claimMetered takes those).
 * Oldest due first (a resume makes each held row due since its event: oldest event first).
 */
export async function claimDue(sql: Sql, now: string, limit: number): Promise<ClaimedDelivery[]> {
  const { rows } = await sql.query(
    withContext(`UPDATE webhook_deliveries SET attempt = attempt + 1, next_attempt_at = $1::timestamptz + make_interval(secs => $3), updated_at = now()
      WHERE id IN (SELECT d.id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.next_attempt_at <= $1::timestamptz
                      AND NOT ${flowTakesOver('d.webhook_id', '$1::timestamptz')}
                    ORDER BY d.next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)`),
    [now, limit, LEASE_SEC],
  );
  return rows;
}

/** A manual retry: any delivery but a delivered one. */
export async function claimForRetry(sql: Sql, deliveryId: string): Promise<ClaimedDelivery | null> {
  const { rows } = await sql.query(
    withContext(`UPDATE webhook_deliveries SET attempt = attempt + 1, next_attempt_at = now() + make_interval(secs => $2), updated_at = now()
      WHERE id = $1 AND status <> 'delivered'`),
    [deliveryId, LEASE_SEC],
  );
  return rows[0] ?? null;
}

/** SPEC Webhook delivery view, written by PostgreSQL (issue 12). */
export const DELIVERY_VIEW: JsonView = {
  from: 'webhook_deliveries d',
  alias: 'd',
  json: jsonObject({
    id: 'd.id',
    webhook_id: 'd.webhook_id',
    event_id: 'd.event_id',
    event: 'd.event',
    status: 'd.status',
    attempt: 'd.attempt',
    next_attempt_at: isoTime('d.next_attempt_at'),
    last_status_code: 'd.last_status_code',
    last_error: 'd.last_error',
    response_body: 'd.response_body',
    delivered_at: isoTime('d.delivered_at'),
    created_at: isoTime('d.created_at'),
  }),
};

export async function getDeliveryText(sql: Sql, accountId: string, deliveryId: string): Promise<JsonText> {
  const text = await readOne(sql, DELIVERY_VIEW, 'd.account_id = $1 AND d.id = $2', [accountId, deliveryId]);
  if (!text) throw notFound('webhook delivery');
  return text;
}

/** The same view as an object, for code that decides on its fields. */
export async function getDelivery(sql: Sql, accountId: string, deliveryId: string): Promise<Static<typeof Delivery>> {
  return valueOf<Static<typeof Delivery>>(await getDeliveryText(sql, accountId, deliveryId));
}

/**
 * EXTENSIONS 9: a claimed attempt of a flowed subscription that is not to
 * start now: back to due-now on the attempt it had, nothing spent. `onlyIfHeld`:
 * only if the flow holds it now (a pause committed since the claim). True when
 * handed back.
 */
export async function unclaim(sql: Sql, delivery: ClaimedDelivery, onlyIfHeld: boolean): Promise<boolean> {
  const { rowCount } = await sql.query(
    // Qualified: inside the condition's subquery a bare webhook_id would be the flow row's own (any held flow would match).
    `UPDATE webhook_deliveries w SET attempt = attempt - 1, next_attempt_at = now(), updated_at = now()
      WHERE id = $1 AND attempt = $2 AND status = 'pending' AND (NOT $3 OR ${flowTakesOver('w.webhook_id')})`,
    [delivery.id, delivery.attempt, onlyIfHeld],
  );
  return rowCount > 0;
}
