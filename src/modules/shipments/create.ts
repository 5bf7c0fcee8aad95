// Creating a waybill (SPEC Shipments; GAPS Orders and shipments). The
// courier is called inside the transaction that holds the order's lock, so a
// second request for the same order waits and then sees the live shipment.
// If the courier accepted but our commit fails, the waybill is cancelled at
// the courier, or kept for reconciliation when the courier cannot cancel.
import crypto from 'node:crypto';
import type { Db, Sql } from '../../platform/db/db.ts';
import { AppError, toAppError } from '../../platform/contract/errors.ts';
import { emit } from '../../platform/db/outbox.ts';
import type { CourierAdapters } from '../../couriers/adapters.ts';
import { COURIER_SLUGS, isCourierSlug } from '../../couriers/catalog.ts';
import type { CourierAccount, CourierSlug, WaybillRequest } from '../../couriers/adapter.ts';
import { lockOrder } from '../orders/queries.ts';
import { recordWaybill } from '../orders/commands.ts';
import type { OrderView } from '../orders/schema.ts';
import { courierAccountFor } from './integrations.ts';
import { getShipment, liveShipmentOf, summaryOf } from './queries.ts';

export interface CreateShipmentInput {
  order_id: string;
  courier?: CourierSlug;
  delivery_mode?: 'office' | 'home';
  office_id?: string | number;
  weight_g?: number;
  dim_cm?: Record<string, number>;
}

/** GAPS: orders in these states get no waybill. */
const CLOSED_ORDER_STATUSES = ['cancelled', 'returned', 'refunded', 'archived', 'delivered'];
const DEFAULT_TERMS = { cod_type: 'cash', open_before: 'none', refusal_payer: 'sender' };

export interface ShipmentPlan {
  order: OrderView;
  courier: CourierSlug;
  account: CourierAccount;
  delivery_mode: 'office' | 'home';
  office_id: string | number | null;
  weight_g: number;
  dim_cm: Record<string, unknown> | null;
  cod_amount: number;
  content_label: string;
  shipment_terms: Record<string, unknown>;
}

async function parcelWeight(sql: Sql, accountId: string, order: OrderView): Promise<number> {
  const physical = (order.line_items ?? []).filter((i) => i.product_id && !i.digital);
  if (physical.length) {
    const { rows } = await sql.query<{ id: string; weight_g: number | null }>(
      'SELECT id, weight_g FROM products WHERE account_id = $1 AND id = ANY($2::uuid[])',
      [accountId, physical.map((i) => i.product_id)],
    );
    const weights = new Map(rows.map((r) => [r.id, r.weight_g]));
    const sum = physical.reduce((total, i) => total + (weights.get(i.product_id!) ?? 0) * i.qty, 0);
    if (sum > 0) return sum;
  }
  const { rows } = await sql.query<{ w: number }>('SELECT default_parcel_weight_g AS w FROM accounts WHERE id = $1', [accountId]);
  return rows[0]?.w ?? 1000;
}

/** Everything a waybill needs except the courier call; the dry run shows exactly this. */
export async function planShipment(
  sql: Sql,
  couriers: CourierAdapters,
  accountId: string,
  input: CreateShipmentInput,
  order: OrderView,
): Promise<ShipmentPlan> {
  if (CLOSED_ORDER_STATUSES.includes(order.status)) {
    throw new AppError('conflict', `an order in status ${order.status} cannot get a waybill`, { kind: 'order_status' });
  }
  const live = await liveShipmentOf(sql, accountId, order.id);
  if (live) throw new AppError('conflict', 'the order already has a live shipment', { shipment: summaryOf(live) });
  const courier = input.courier ?? order.shipping.courier_slug;
  if (!isCourierSlug(courier)) {
    throw new AppError('validation_failed', 'courier is required: the order has no courier chosen at checkout', { allowed: [...COURIER_SLUGS] });
  }
  const account = await courierAccountFor(sql, couriers, accountId, courier);
  const officeId = input.office_id ?? order.shipping.courier_office_id ?? null;
  const mode = input.delivery_mode ?? (order.shipping.courier_delivery_mode as 'office' | 'home' | null) ?? (officeId !== null ? 'office' : 'home');
  if (mode === 'office' && officeId === null) throw new AppError('validation_failed', 'office delivery needs an office_id');
  const names = order.line_items?.length ? order.line_items.map((i) => i.name) : [order.product_name ?? ''];
  return {
    order,
    courier,
    account,
    delivery_mode: mode,
    office_id: mode === 'office' ? officeId : null,
    weight_g: input.weight_g ?? (await parcelWeight(sql, accountId, order)),
    dim_cm: input.dim_cm ?? null,
    cod_amount: order.payment_method === 'cod' && order.payment_status !== 'paid' ? (order.total ?? 0) : 0,
    content_label: names.filter(Boolean).join(', ').slice(0, 100),
    shipment_terms: account.shipmentTerms ?? DEFAULT_TERMS,
  };
}

function waybillRequest(plan: ShipmentPlan): WaybillRequest {
  const o = plan.order;
  return {
    reference: String(o.number ?? o.id),
    recipient: {
      name: o.customer.name,
      phone: o.customer.phone,
      email: o.customer.email,
      city: o.shipping.city,
      address: o.shipping.address,
      zip: o.shipping.zip,
    },
    deliveryMode: plan.delivery_mode,
    officeId: plan.office_id,
    weightG: plan.weight_g,
    dimCm: plan.dim_cm,
    codAmount: plan.cod_amount,
    contentLabel: plan.content_label,
  };
}

export interface ShipmentDeps {
  db: Db;
  couriers: CourierAdapters;
  /** Test hook (operator faults, outside production): fail the commit after the courier accepted. */
  failNextCommit: () => boolean;
  /** Whom the events are attributed to: the caller's source ("api" when unset). */
  source?: 'merchant' | 'api';
}

export async function createShipment(deps: ShipmentDeps, accountId: string, input: CreateShipmentInput) {
  let issued: { courier: CourierSlug; account: CourierAccount; trackingNumber: string } | null = null;
  try {
    return await deps.db.tx(async (tx) => {
      const order = await lockOrder(tx, accountId, input.order_id);
      const plan = await planShipment(tx, deps.couriers, accountId, input, order);
      const adapter = deps.couriers.adapter(plan.courier);
      const waybill = await adapter.createWaybill(plan.account, waybillRequest(plan));
      issued = { courier: plan.courier, account: plan.account, trackingNumber: waybill.trackingNumber };
      const id = crypto.randomUUID();
      const now = new Date().toISOString();
      await tx.query(
        `INSERT INTO shipments (id, account_id, order_id, courier_slug, tracking_number, status, last_status_label, last_status_at, status_events,
           delivery_mode, office_id, recipient_address, cod_amount, shipping_cost, parcel_weight_g, parcel_dim_cm, sender_origin, shipment_terms, content_label)
         VALUES ($1, $2, $3, $4, $5, 'pending', 'Waybill created', $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
        [
          id,
          accountId,
          order.id,
          plan.courier,
          waybill.trackingNumber,
          now,
          JSON.stringify([{ at: now, code: 'created', label: 'Waybill created' }]),
          plan.delivery_mode,
          plan.office_id === null ? null : JSON.stringify(plan.office_id),
          plan.delivery_mode === 'home' ? JSON.stringify({ city: order.shipping.city, street: order.shipping.address }) : null,
          plan.cod_amount,
          waybill.shippingCost,
          plan.weight_g,
          plan.dim_cm ? JSON.stringify(plan.dim_cm) : null,
          JSON.stringify(plan.account.senderOrigin ?? { mode: 'address' }),
          JSON.stringify(plan.shipment_terms),
          plan.content_label,
        ],
      );
      const shipment = await getShipment(tx, accountId, id);
      await emit(tx, accountId, 'shipment.created', { shipment, order_id: order.id, source: deps.source ?? 'api' });
      // GAPS: the order's courier, tracking number and tracking URL are set from the waybill (the orders room writes them).
      await recordWaybill(
        tx,
        accountId,
        order,
        {
          courier: plan.courier,
          tracking_number: waybill.trackingNumber,
          tracking_url: adapter.trackingUrl(waybill.trackingNumber),
        },
        deps.source ?? 'api',
      );
      if (deps.failNextCommit()) throw new Error('injected failure after the courier accepted the waybill');
      return shipment;
    });
  } catch (err) {
    if (issued) await undoWaybill(deps, accountId, input.order_id, issued, err);
    throw toAppError(err);
  }
}

/** Undo on partial failure: never leave a paid label without a row. */
async function undoWaybill(
  deps: ShipmentDeps,
  accountId: string,
  orderId: string,
  issued: { courier: CourierSlug; account: CourierAccount; trackingNumber: string },
  cause: unknown,
) {
  const adapter = deps.couriers.adapter(issued.courier);
  let reason = `commit failed: ${(cause as Error)?.message ?? 'unknown'}`;
  if (adapter.capabilities.cancel) {
    try {
      await adapter.cancelWaybill(issued.account, issued.trackingNumber);
      return;
    } catch (err) {
      reason += `; cancelling at the courier failed: ${(err as Error).message}`;
    }
  }
  await deps.db.query(
    'INSERT INTO courier_orphans (id, account_id, courier_slug, tracking_number, order_id, reason) VALUES ($1, $2, $3, $4, $5, $6)',
    [crypto.randomUUID(), accountId, issued.courier, issued.trackingNumber, orderId, reason],
  );
}
