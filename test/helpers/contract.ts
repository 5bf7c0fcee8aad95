// Shared contract checks for the black-box tests: SPEC's field lists, the
// error shape, and small HTTP conveniences built on harness.ts.
import assert from 'node:assert/strict';
import { http, type HttpResult } from './harness.ts';

/** SPEC "Order (all fields always present)": exactly these top-level fields. */
export const ORDER_FIELDS = [
  'id',
  'number',
  'order_number',
  'status',
  'payment_status',
  'payment_method',
  'funnel_step',
  'parent_order_id',
  'total',
  'delivery_price',
  'discount_amount',
  'coupon_code',
  'refund_amount_cents',
  'refunded_at',
  'customer',
  'shipping',
  'courier',
  'tracking_number',
  'tracking_url',
  'line_items',
  'product_name',
  'product_sku',
  'quantity',
  'unit_price',
  'notes',
  'admin_notes',
  'return_note',
  'page_id',
  'invoice_number',
  'shipment',
  'created_at',
  'updated_at',
].sort();
export const CUSTOMER_FIELDS = ['email', 'name', 'phone', 'vat'];
export const SHIPPING_FIELDS = ['address', 'city', 'courier_delivery_mode', 'courier_office_id', 'courier_slug', 'method', 'zip'];
/** SPEC LineItem: these at least (extra properties may appear). */
export const LINE_ITEM_FIELDS = [
  'kind',
  'product_id',
  'variant_id',
  'name',
  'sku',
  'qty',
  'unit_price_cents',
  'total_cents',
  'delivery_type',
  'digital',
  'note',
];
export const ORDER_STATUSES = ['new', 'confirmed', 'processing', 'shipped', 'delivered', 'cancelled', 'returned', 'refunded', 'archived'];

/** SPEC Authentication 6 presets. */
export const PRESET_SCOPES: Record<string, string[]> = {
  fulfilment: [
    'orders:read',
    'orders:write',
    'shipments:read',
    'shipments:write',
    'inventory:read',
    'inventory:write',
    'products:read',
    'webhooks:read',
    'webhooks:write',
  ],
  read_only: ['orders:read', 'shipments:read', 'inventory:read', 'products:read', 'customers:read', 'webhooks:read'],
  bridge: ['submit_brief', 'get_status', 'get_facts'],
};

export const DEPLOY_SHA = 'abcdef0123';
export const WWW_AUTHENTICATE = 'Bearer realm="Merx API"';
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** SPEC Errors: `{error: {code, message, scope?, details?}}` and nothing else; every response carries X-Deploy-SHA. */
export function assertError(res: HttpResult, status: number, code: string, note = ''): any {
  const where = `${note ? `${note}: ` : ''}expected ${status} ${code}, got ${res.status} ${res.text.slice(0, 300)}`;
  assert.equal(res.status, status, where);
  assert.ok(res.body && typeof res.body === 'object', `${where} (body is not JSON)`);
  assert.deepEqual(Object.keys(res.body), ['error'], where);
  const error = res.body.error;
  assert.equal(error.code, code, where);
  assert.equal(typeof error.message, 'string', where);
  for (const k of Object.keys(error)) assert.ok(['code', 'message', 'scope', 'details'].includes(k), `${where}: unexpected error.${k}`);
  assert.equal(res.headers.get('x-deploy-sha'), DEPLOY_SHA, `${where}: X-Deploy-SHA`);
  return error;
}

export function assertUnauthorized(res: HttpResult, note = ''): void {
  assertError(res, 401, 'unauthorized', note);
  assert.equal(res.headers.get('www-authenticate'), WWW_AUTHENTICATE, `${note}: WWW-Authenticate`);
}

export function assertScopeMissing(res: HttpResult, scope: string, note = ''): void {
  const error = assertError(res, 403, 'scope_missing', note);
  assert.equal(error.scope, scope, `${note}: error.scope`);
}

/** The Order view: exactly SPEC's fields, with closed customer and shipping objects. */
export function assertOrderView(order: any, note = ''): void {
  assert.ok(order && typeof order === 'object', `${note}: order is an object`);
  assert.deepEqual(Object.keys(order).sort(), ORDER_FIELDS, `${note}: Order fields`);
  assert.deepEqual(Object.keys(order.customer).sort(), CUSTOMER_FIELDS, `${note}: customer fields`);
  assert.deepEqual(Object.keys(order.shipping).sort(), SHIPPING_FIELDS, `${note}: shipping fields`);
  assert.match(order.id, UUID_RE);
  assert.ok(ORDER_STATUSES.includes(order.status), `${note}: status ${order.status}`);
  assert.match(order.created_at, ISO_RE, `${note}: created_at`);
  if (order.updated_at !== null) assert.match(order.updated_at, ISO_RE, `${note}: updated_at`);
  if (order.line_items !== null) {
    assert.ok(Array.isArray(order.line_items), `${note}: line_items array or null`);
    for (const item of order.line_items) {
      for (const f of LINE_ITEM_FIELDS) assert.ok(f in item, `${note}: line item field ${f}`);
    }
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Builds a query string from defined values. */
export function qs(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) search.set(k, String(v));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** GET /api/v1/orders with the given filters; asserts 200 and returns the body. */
export async function listOrders(base: string, key: string, params: Record<string, string | number | undefined> = {}) {
  const res = await http(base, 'GET', `/api/v1/orders${qs(params)}`, { token: key });
  assert.equal(res.status, 200, `GET /api/v1/orders${qs(params)} -> ${res.status} ${res.text.slice(0, 300)}`);
  return res.body as { data: any[]; has_more: boolean; next_cursor: string | null };
}

/** Order ids matching the filters (all pages), newest first. */
export async function listIds(base: string, key: string, params: Record<string, string | number | undefined> = {}): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const page = await listOrders(base, key, { limit: 200, ...params, cursor });
    ids.push(...page.data.map((o) => o.id));
    if (!page.has_more) {
      assert.equal(page.next_cursor, null);
      return ids;
    }
    assert.equal(typeof page.next_cursor, 'string');
    cursor = page.next_cursor!;
  }
  throw new Error('paging did not end');
}

/** Same members, any order. */
export function assertSameSet(actual: string[], expected: string[], note = ''): void {
  assert.deepEqual([...actual].sort(), [...expected].sort(), note);
}
