// EXTENSIONS 8: shipment batches as rows. The batch's counts are read off its
// items; every change of an item's state is written under the claim token it
// was claimed with, with the batch row locked, so the last item to finish
// finishes the batch exactly once whichever instance ran it.
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import { AppError, notFound } from '../../platform/contract/errors.ts';
import type { Caller } from '../../platform/edge/auth.ts';
import type { ScopedSeal } from '../../platform/contract/cursor-seal.ts';
import type { Scope } from '../../platform/contract/scopes.ts';
import type { BatchItemBody, BatchItemView, BatchView } from './batch-schema.ts';

/** Every instance's batch runner listens here (batch-runner.ts). */
export const BATCH_CHANNEL = 'merx_shipment_batches';

/** New work: every instance's runner hears it at the commit and claims what it may. */
export async function announce(tx: Sql): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [BATCH_CHANNEL, '']);
}

/** EXTENSIONS 8: at most this many batches run at once per account. */
export const RUNNING_BATCHES_PER_ACCOUNT = 2;
/** What a third batch is told to wait, in seconds (a batch of 1,000 orders takes seconds, not minutes). */
const RETRY_AFTER_SEC = 10;

const BATCH_COLUMNS = `b.id, b.state, b.total,
  (SELECT count(*) FROM shipment_batch_items i WHERE i.batch_id = b.id AND i.status = 'succeeded')::int AS succeeded,
  (SELECT count(*) FROM shipment_batch_items i WHERE i.batch_id = b.id AND i.status = 'failed')::int AS failed,
  (SELECT count(*) FROM shipment_batch_items i WHERE i.batch_id = b.id AND i.status IN ('pending', 'running'))::int AS pending,
  b.created_at, b.finished_at`;

/** The batch as the API shows it; another account's batch is not found. */
export async function getBatch(sql: Sql, accountId: string, id: string): Promise<BatchView> {
  const { rows } = await sql.query<BatchView>(`SELECT ${BATCH_COLUMNS} FROM shipment_batches b WHERE b.account_id = $1 AND b.id = $2`, [
    accountId,
    id,
  ]);
  if (!rows[0]) throw notFound('shipment batch');
  return rows[0];
}

/**
 * Stores a new batch and its items, running. The account's running batches
 * are counted under a transaction-scoped advisory lock on the account, so two
 * creates at once cannot both see room for one more.
 */
export async function insertBatch(tx: Sql, caller: Caller, items: BatchItemBody[]): Promise<string> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('merx_shipment_batches:' || $1, 0))`, [caller.accountId]);
  const { rows } = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM shipment_batches WHERE account_id = $1 AND state = 'running'`, [
    caller.accountId,
  ]);
  if (rows[0].n >= RUNNING_BATCHES_PER_ACCOUNT) {
    throw new AppError(
      'rate_limited',
      `at most ${RUNNING_BATCHES_PER_ACCOUNT} shipment batches run at once per account; wait for one to finish`,
      { retry_after_sec: RETRY_AFTER_SEC },
      { headers: { 'Retry-After': String(RETRY_AFTER_SEC) } },
    );
  }
  const id = crypto.randomUUID();
  await tx.query('INSERT INTO shipment_batches (id, account_id, key_id, key_prefix, scopes, source, total) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
    id,
    caller.accountId,
    caller.keyId,
    caller.keyPrefix,
    [...caller.scopes],
    caller.source === 'merchant' ? 'merchant' : null,
    items.length,
  ]);
  await tx.query(
    `INSERT INTO shipment_batch_items (batch_id, idx, order_id, body)
     SELECT $1, ord - 1, (item->>'order_id')::uuid, item FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(item, ord)`,
    [id, JSON.stringify(items)],
  );
  return id;
}

/** A batch whose items still wait; its creator's key is who its items run as (writes direct: the batch itself was the write). */
export interface RunnableBatch {
  id: string;
  caller: Caller;
}

export async function runnableBatches(sql: Sql): Promise<RunnableBatch[]> {
  const { rows } = await sql.query<{
    id: string;
    account_id: string;
    key_id: string;
    key_prefix: string;
    scopes: Scope[];
    source: 'merchant' | null;
  }>(
    `SELECT id, account_id, key_id, key_prefix, scopes, source FROM shipment_batches b
      WHERE finished_at IS NULL
        AND EXISTS (SELECT 1 FROM shipment_batch_items i WHERE i.batch_id = b.id AND (i.status = 'pending' OR (i.status = 'running' AND i.lease_until <= now())))
      ORDER BY created_at`,
  );
  return rows.map((r) => ({
    id: r.id,
    caller: {
      accountId: r.account_id,
      keyId: r.key_id,
      keyPrefix: r.key_prefix,
      scopes: r.scopes,
      writes: 'direct' as const,
      ...(r.source ? { source: r.source } : {}),
    },
  }));
}

/** One item claimed by this instance: run it, then write its outcome under `token`. */
export interface ClaimedItem {
  batchId: string;
  index: number;
  body: BatchItemBody;
  token: string;
}

/**
 * EXTENSIONS 8: items start in request order, at most `perCourier` of one
 * courier in flight for the batch (over every instance: the live claims in
 * the table are counted, with the batch row locked). The next item in order
 * whose courier has no free slot stops the claim, so no later item overtakes
 * it. An item whose lease ran out (its instance died) is claimed again; its
 * old token can no longer write anything.
 */
export async function claimItems(tx: Sql, batchId: string, perCourier: number, leaseSec: number): Promise<ClaimedItem[]> {
  const { rows: batch } = await tx.query<{ state: string; account_id: string }>(
    'SELECT state, account_id FROM shipment_batches WHERE id = $1 FOR UPDATE',
    [batchId],
  );
  if (batch[0]?.state !== 'running') return [];
  const { rows: busy } = await tx.query<{ courier: string; n: number }>(
    `SELECT coalesce(courier, '') AS courier, count(*)::int AS n FROM shipment_batch_items
      WHERE batch_id = $1 AND status = 'running' AND lease_until > now() GROUP BY 1`,
    [batchId],
  );
  const inFlight = new Map(busy.map((r) => [r.courier, r.n]));
  // The courier is the one the single route will call: the item's own, else the order's from checkout.
  const { rows: waiting } = await tx.query<{ idx: number; body: BatchItemBody; courier: string }>(
    `SELECT i.idx, i.body, coalesce(i.body->>'courier', o.courier_slug, '') AS courier
       FROM shipment_batch_items i LEFT JOIN orders o ON o.account_id = $2 AND o.id = i.order_id
      WHERE i.batch_id = $1 AND (i.status = 'pending' OR (i.status = 'running' AND i.lease_until <= now()))
      ORDER BY i.idx LIMIT $3`,
    [batchId, batch[0].account_id, perCourier * 8],
  );
  const taken: typeof waiting = [];
  for (const item of waiting) {
    const n = inFlight.get(item.courier) ?? 0;
    if (n >= perCourier) break;
    inFlight.set(item.courier, n + 1);
    taken.push(item);
  }
  if (!taken.length) return [];
  const token = crypto.randomUUID();
  await tx.query(
    `UPDATE shipment_batch_items AS i SET status = 'running', courier = nullif(c.courier, ''), claim_token = $2,
            lease_until = now() + make_interval(secs => $3), started_at = coalesce(i.started_at, now()), runs = i.runs + 1
       FROM unnest($4::int[], $5::text[]) AS c(idx, courier)
      WHERE i.batch_id = $1 AND i.idx = c.idx`,
    [batchId, token, leaseSec, taken.map((t) => t.idx), taken.map((t) => t.courier)],
  );
  return taken.map((t) => ({ batchId, index: t.idx, body: t.body, token }));
}

/** Keeps this instance's claims alive while their items run. */
export async function renewLeases(sql: Sql, claims: Array<{ batchId: string; index: number; token: string }>, leaseSec: number): Promise<void> {
  if (!claims.length) return;
  await sql.query(
    `UPDATE shipment_batch_items AS i SET lease_until = now() + make_interval(secs => $1)
       FROM unnest($2::uuid[], $3::int[], $4::uuid[]) AS c(batch_id, idx, token)
      WHERE i.batch_id = c.batch_id AND i.idx = c.idx AND i.claim_token = c.token AND i.status = 'running'`,
    [leaseSec, claims.map((c) => c.batchId), claims.map((c) => c.index), claims.map((c) => c.token)],
  );
}

/**
 * Writes an item's outcome, in the caller's transaction, only if the claim is
 * still this one's: false when another instance took the item over. A
 * success is written in the transaction that created the shipment, so the two
 * commit together or not at all. The batch finishes with its last item.
 */
export async function recordOutcome(
  tx: Sql,
  item: { batchId: string; index: number; token: string },
  outcome: { shipmentId: string } | { error: ReturnType<AppError['toBody']>['error'] },
): Promise<boolean> {
  await tx.query('SELECT 1 FROM shipment_batches WHERE id = $1 FOR UPDATE', [item.batchId]);
  const succeeded = 'shipmentId' in outcome;
  const { rowCount } = await tx.query(
    `UPDATE shipment_batch_items SET status = $4, shipment_id = $5, error = $6, finished_at = now(), lease_until = NULL
      WHERE batch_id = $1 AND idx = $2 AND claim_token = $3 AND status = 'running'`,
    [
      item.batchId,
      item.index,
      item.token,
      succeeded ? 'succeeded' : 'failed',
      succeeded ? outcome.shipmentId : null,
      succeeded ? null : JSON.stringify(outcome.error),
    ],
  );
  if (rowCount === 0) return false;
  await finishIfDone(tx, item.batchId);
  return true;
}

async function finishIfDone(tx: Sql, batchId: string): Promise<void> {
  await tx.query(
    `UPDATE shipment_batches SET state = CASE WHEN state = 'running' THEN 'done' ELSE state END, finished_at = now()
      WHERE id = $1 AND finished_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM shipment_batch_items WHERE batch_id = $1 AND status IN ('pending', 'running'))`,
    [batchId],
  );
}

/** EXTENSIONS 8: the error of an item the cancel reached before it started. */
export const CANCELLED_ITEM_ERROR = new AppError('conflict', 'the batch was cancelled before this item started', { reason: 'batch_cancelled' });

/**
 * EXTENSIONS 8 cancel: items not yet started fail with conflict
 * batch_cancelled, items in flight finish. A finished batch stays as it is.
 */
export async function cancelBatch(tx: Sql, accountId: string, id: string): Promise<void> {
  const { rows } = await tx.query<{ state: string }>('SELECT state FROM shipment_batches WHERE account_id = $1 AND id = $2 FOR UPDATE', [
    accountId,
    id,
  ]);
  if (!rows[0]) throw notFound('shipment batch');
  if (rows[0].state !== 'running') return;
  // An item whose lease ran out is not in flight: nobody runs it, so it is cancelled too (its old token writes nothing).
  await tx.query(
    `UPDATE shipment_batch_items SET status = 'failed', error = $2, finished_at = now(), lease_until = NULL, claim_token = NULL
      WHERE batch_id = $1 AND (status = 'pending' OR (status = 'running' AND lease_until <= now()))`,
    [id, JSON.stringify(CANCELLED_ITEM_ERROR.toBody().error)],
  );
  await tx.query(`UPDATE shipment_batches SET state = 'cancelled' WHERE id = $1`, [id]);
  await finishIfDone(tx, id);
}

export type ItemStatus = 'pending' | 'succeeded' | 'failed';

/** A page of items in item order; the cursor is the last index shown, sealed to the account and the batch. */
export async function listItems(
  sql: Sql,
  seal: ScopedSeal,
  accountId: string,
  batchId: string,
  filter: { status?: ItemStatus; limit: number; cursor?: string },
): Promise<{ data: BatchItemView[]; has_more: boolean; next_cursor: string | null }> {
  await getBatch(sql, accountId, batchId);
  let after = -1;
  if (filter.cursor !== undefined) {
    const opened = seal.open(filter.cursor);
    const [bid, index, ...rest] = (opened ?? '').split('|');
    if (opened === null || rest.length || bid !== batchId || !/^\d{1,4}$/.test(index ?? '')) {
      throw new AppError('validation_failed', 'cursor is not a cursor this API issued for this batch; pass next_cursor unchanged');
    }
    after = Number(index);
  }
  const statuses =
    filter.status === undefined
      ? ['pending', 'running', 'succeeded', 'failed']
      : filter.status === 'pending'
        ? ['pending', 'running']
        : [filter.status];
  const { rows } = await sql.query<BatchItemView & { idx: number }>(
    `SELECT idx AS index, order_id, CASE WHEN status = 'running' THEN 'pending' ELSE status END AS status, shipment_id, error
       FROM shipment_batch_items WHERE batch_id = $1 AND idx > $2 AND status = ANY($3::text[]) ORDER BY idx LIMIT $4`,
    [batchId, after, statuses, filter.limit + 1],
  );
  const hasMore = rows.length > filter.limit;
  const data = hasMore ? rows.slice(0, filter.limit) : rows;
  return { data, has_more: hasMore, next_cursor: hasMore ? seal.seal(`${batchId}|${data[data.length - 1].index}`) : null };
}

/** The succeeded items' shipments, in item order (the labels). */
export async function succeededShipments(sql: Sql, batchId: string): Promise<string[]> {
  const { rows } = await sql.query<{ shipment_id: string }>(
    `SELECT shipment_id FROM shipment_batch_items WHERE batch_id = $1 AND status = 'succeeded' ORDER BY idx`,
    [batchId],
  );
  return rows.map((r) => r.shipment_id);
}
