// Changing orders. Every change and its events commit in one transaction
// (SPEC Events; DESIGN transactional outbox).
import type { Sql } from '../../platform/db/db.ts';
import { emit, type EventSource } from '../../platform/db/outbox.ts';
import type { Notifier } from '../../notify/notifier.ts';
import { findOrder, findOrderText, lockOrder } from './queries.ts';
import { valueOf, type JsonText } from '../../platform/read-path/index.ts';
import type { OrderStatusName, OrderView, UpdateOrderInput } from './schema.ts';
import { shippedNotices } from './notices.ts';
import { LATEST_SHIPMENT_STATUS } from './latest-shipment.ts';
import { applyOrderStatusStock } from '../inventory/order-stock.ts';
import { refreshCustomerOfOrder } from '../customers/aggregates.ts';

/** Fields of the public PATCH other than status; a change to any of them emits order.updated. */
const PATCHABLE_FIELDS = ['tracking_number', 'tracking_url', 'courier', 'admin_notes'] as const;

export interface OrderChangeDeps {
  notifier: Notifier;
}

/** The changes a PATCH would make, computed against the current order. */
export function plannedChanges(order: OrderView, input: UpdateOrderInput): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const field of PATCHABLE_FIELDS) {
    if (input[field] !== undefined && input[field] !== order[field]) changes[field] = input[field];
  }
  if (input.status !== undefined && input.status !== order.status) changes.status = input.status;
  return changes;
}

/** SPEC order state table: whether changing to `status` notifies the customer. */
export async function wouldNotifyCustomer(sql: Sql, order: OrderView, status: OrderStatusName | undefined, notify: boolean | undefined) {
  if (status !== 'shipped' || order.status === 'shipped' || notify === false) return false;
  return (await shippedNotices(sql, order)).length > 0;
}

export interface OrderUpdateResult {
  order: OrderView;
  /** The same order as stored (with its ETag), for answers that show it. */
  text: JsonText;
  statusChanged: boolean;
  emailSent: boolean;
}

/**
 * Applies field and status changes to a locked order: one UPDATE, then
 * order.updated (with `changed`) and order.status_changed, then the status's
 * side effects. The same path serves the public PATCH and the merchant's
 * status changes in the operator API.
 */
export async function changeOrder(
  tx: Sql,
  deps: OrderChangeDeps,
  accountId: string,
  orderId: string,
  input: UpdateOrderInput & { shipping?: Record<string, unknown> },
  source: EventSource,
): Promise<OrderUpdateResult> {
  const before = await lockOrder(tx, accountId, orderId);
  const changes = plannedChanges(before, input);
  const columns: Record<string, unknown> = { ...changes };
  const changedFields = Object.keys(changes).filter((f) => f !== 'status');
  for (const [field, value] of Object.entries(input.shipping ?? {})) {
    const column = field === 'courier_slug' || field === 'courier_delivery_mode' || field === 'courier_office_id' ? field : `shipping_${field}`;
    const current = (before.shipping as Record<string, unknown>)[field];
    if (value !== current) {
      columns[column] = field === 'courier_office_id' ? JSON.stringify(value) : value;
      changedFields.push(column);
    }
  }
  if (Object.keys(columns).length === 0)
    return { order: before, text: (await findOrderText(tx, accountId, orderId))!, statusChanged: false, emailSent: false };

  const names = Object.keys(columns);
  await tx.query(`UPDATE orders SET ${names.map((n, i) => `${n} = $${i + 3}`).join(', ')}, updated_at = now() WHERE account_id = $1 AND id = $2`, [
    accountId,
    orderId,
    ...names.map((n) => columns[n]),
  ]);
  const text = (await findOrderText(tx, accountId, orderId))!;
  const order = valueOf<OrderView>(text);
  if (changedFields.length) await emit(tx, accountId, 'order.updated', { order, changed: changedFields, source });

  const statusChanged = changes.status !== undefined;
  let emailSent = false;
  if (statusChanged) {
    await emit(tx, accountId, 'order.status_changed', { order, previous_status: before.status, status: order.status, source });
    await applyOrderStatusStock(tx, accountId, orderId, order.status);
    await refreshCustomerOfOrder(tx, accountId, orderId);
    if (order.status === 'shipped' && input.notify_customer !== false) {
      for (const notice of await shippedNotices(tx, order)) {
        await deps.notifier.send(tx, { accountId, ...notice });
        if (notice.channel === 'email') emailSent = true;
      }
    }
  }
  return { order, text, statusChanged, emailSent };
}

/** The payment processor (or the merchant) reports a payment status; `paid` emits order.paid. */
export async function changePaymentStatus(tx: Sql, accountId: string, orderId: string, paymentStatus: string, source: EventSource) {
  const before = await lockOrder(tx, accountId, orderId);
  if (before.payment_status === paymentStatus) return before;
  await tx.query('UPDATE orders SET payment_status = $3, updated_at = now() WHERE account_id = $1 AND id = $2', [accountId, orderId, paymentStatus]);
  const order = (await findOrder(tx, accountId, orderId))!;
  if (paymentStatus === 'paid') {
    await emit(tx, accountId, 'order.paid', { order, previous_payment_status: before.payment_status, source });
  }
  return order;
}

/**
 * A waybill was issued for the order (GAPS: the order's courier, tracking
 * number and tracking URL come from it; a new or confirmed order moves to
 * processing). Emits order.updated and, when the status moved,
 * order.status_changed, in the caller's transaction.
 */
export async function recordWaybill(
  tx: Sql,
  accountId: string,
  order: OrderView,
  waybill: { courier: string; tracking_number: string; tracking_url: string },
  source: EventSource,
): Promise<OrderView> {
  const nextStatus = order.status === 'new' || order.status === 'confirmed' ? 'processing' : order.status;
  await tx.query(
    `UPDATE orders SET courier = $3, tracking_number = $4, tracking_url = $5, status = $6, shipment_status = ${LATEST_SHIPMENT_STATUS}, updated_at = now()
      WHERE account_id = $1 AND id = $2`,
    [accountId, order.id, waybill.courier, waybill.tracking_number, waybill.tracking_url, nextStatus],
  );
  const updated = (await findOrder(tx, accountId, order.id))!;
  await emit(tx, accountId, 'order.updated', { order: updated, changed: ['courier', 'tracking_number', 'tracking_url'], source });
  if (nextStatus !== order.status) {
    await emit(tx, accountId, 'order.status_changed', { order: updated, previous_status: order.status, status: nextStatus, source });
  }
  return updated;
}

/** Something the order view shows changed elsewhere (its shipment's status): `since` polling must see the order move. */
export async function touchOrder(tx: Sql, accountId: string, orderId: string): Promise<void> {
  await tx.query(`UPDATE orders SET shipment_status = ${LATEST_SHIPMENT_STATUS}, updated_at = now() WHERE account_id = $1 AND id = $2`, [
    accountId,
    orderId,
  ]);
}
