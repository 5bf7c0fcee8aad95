// The storefront's checkout (OPERATOR_API "POST /accounts/{id}/orders"):
// creates an order with its line items resolved from the catalog and emits
// order.created in the same transaction.
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import { AppError } from '../../platform/contract/errors.ts';
import { emit } from '../../platform/db/outbox.ts';
import { parseStrictDate } from '../../platform/contract/dates.ts';
import { findOrder } from './queries.ts';
import { takeOrderNumbers } from '../accounts/service.ts';
import { recordSale } from '../inventory/order-stock.ts';
import { refreshCustomerOfOrder } from '../customers/aggregates.ts';

export interface CheckoutLineItem {
  product_id: string;
  variant_id?: string;
  qty: number;
  unit_price_cents?: number;
  kind?: string;
  name?: string;
}

export interface CheckoutInput {
  page_id?: string;
  customer: { name: string | null; email: string | null; phone: string | null; vat?: string | null };
  shipping: {
    address: string | null;
    city: string | null;
    zip: string | null;
    method?: string | null;
    courier_slug?: string | null;
    courier_delivery_mode?: string | null;
    courier_office_id?: string | number | null;
  };
  line_items?: CheckoutLineItem[];
  legacy?: { product_name: string; product_sku?: string | null; quantity: number; unit_price: number };
  payment_method: string;
  payment_status?: string;
  delivery_price?: number;
  discount_amount?: number;
  total?: number;
  coupon_code?: string;
  notes?: string;
  funnel_step?: string;
  parent_order_id?: string;
  created_at?: string;
}

async function resolveLineItems(tx: Sql, accountId: string, items: CheckoutLineItem[]) {
  const ids = [...new Set(items.map((i) => i.product_id))];
  const { rows: products } = await tx.query(
    'SELECT id, name, sku, price, delivery_type FROM products WHERE account_id = $1 AND id = ANY($2::uuid[])',
    [accountId, ids],
  );
  const byId = new Map(products.map((p) => [p.id, p]));
  return Promise.all(
    items.map(async (item, index) => {
      const product = byId.get(item.product_id);
      if (!product) throw new AppError('validation_failed', `line_items.${index}.product_id is not a product of this account`);
      let priceDelta = 0;
      if (item.variant_id) {
        const { rows } = await tx.query('SELECT price_delta FROM product_variants WHERE account_id = $1 AND product_id = $2 AND id = $3', [
          accountId,
          product.id,
          item.variant_id,
        ]);
        if (!rows[0]) throw new AppError('validation_failed', `line_items.${index}.variant_id is not a variant of that product`);
        priceDelta = rows[0].price_delta ?? 0;
      }
      const unit = item.unit_price_cents ?? Math.round((product.price + priceDelta) * 100);
      return {
        kind: item.kind ?? 'main',
        product_id: product.id,
        variant_id: item.variant_id ?? null,
        name: item.name ?? product.name,
        sku: product.sku,
        qty: item.qty,
        unit_price_cents: unit,
        total_cents: unit * item.qty,
        delivery_type: product.delivery_type,
        digital: product.delivery_type === 'digital',
        note: '',
      };
    }),
  );
}

export async function checkout(tx: Sql, accountId: string, input: CheckoutInput) {
  if (!input.line_items?.length && !input.legacy) throw new AppError('validation_failed', 'an order needs line_items or legacy');
  if (input.line_items?.length && input.legacy) throw new AppError('validation_failed', 'give line_items or legacy, not both');
  if (input.page_id) {
    const { rowCount } = await tx.query('SELECT 1 FROM pages WHERE account_id = $1 AND id = $2', [accountId, input.page_id]);
    if (!rowCount) throw new AppError('validation_failed', 'page_id is not a page of this account');
  }
  const lineItems = input.line_items?.length ? await resolveLineItems(tx, accountId, input.line_items) : null;
  const itemsTotal = lineItems ? lineItems.reduce((sum, i) => sum + i.total_cents, 0) / 100 : input.legacy!.quantity * input.legacy!.unit_price;
  // GAPS General: line items (or quantity x unit price) + delivery - discount, unless given.
  const total = input.total ?? Math.round((itemsTotal + (input.delivery_price ?? 0) - (input.discount_amount ?? 0)) * 100) / 100;
  const numbers = await takeOrderNumbers(tx, accountId);
  const id = crypto.randomUUID();
  const createdAt = input.created_at ? parseStrictDate('created_at', input.created_at) : null;
  await tx.query(
    `INSERT INTO orders (id, account_id, number, order_number, status, payment_status, payment_method, funnel_step, parent_order_id,
       total, delivery_price, discount_amount, coupon_code, customer_name, customer_email, customer_phone, customer_vat,
       shipping_address, shipping_city, shipping_zip, shipping_method, courier_slug, courier_delivery_mode, courier_office_id,
       line_items, product_name, product_sku, quantity, unit_price, notes, page_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'new', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23,
       $24, $25, $26, $27, $28, $29, $30, coalesce($31::timestamptz, now()), now())`,
    [
      id,
      accountId,
      numbers.number,
      numbers.order_number,
      input.payment_status ?? (input.payment_method === 'free' ? 'paid' : 'pending'),
      input.payment_method,
      input.funnel_step ?? 'main',
      input.parent_order_id ?? null,
      total,
      input.delivery_price ?? null,
      input.discount_amount ?? null,
      input.coupon_code ?? null,
      input.customer.name,
      input.customer.email?.trim() || null,
      input.customer.phone,
      input.customer.vat ?? null,
      input.shipping.address,
      input.shipping.city,
      input.shipping.zip,
      input.shipping.method ?? null,
      input.shipping.courier_slug ?? null,
      input.shipping.courier_delivery_mode ?? null,
      input.shipping.courier_office_id === undefined || input.shipping.courier_office_id === null
        ? null
        : JSON.stringify(input.shipping.courier_office_id),
      lineItems ? JSON.stringify(lineItems) : null,
      input.legacy?.product_name ?? null,
      input.legacy?.product_sku ?? null,
      input.legacy?.quantity ?? null,
      input.legacy?.unit_price ?? null,
      input.notes ?? null,
      input.page_id ?? null,
      createdAt,
    ],
  );
  if (lineItems) await recordSale(tx, accountId, id, lineItems);
  await refreshCustomerOfOrder(tx, accountId, id);
  const order = (await findOrder(tx, accountId, id))!;
  await emit(tx, accountId, 'order.created', { order });
  return order;
}
