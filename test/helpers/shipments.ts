// Shared pieces of the shipment suites: SPEC's Shipment and ShipmentSummary
// field lists, tenants with courier integrations, the courier simulator
// (driven over the operator API, inspected through its in-memory state), the
// courier_c push endpoint and small request helpers built on harness.ts.
import assert from 'node:assert/strict';
import { http, operator, outboxEvents, type HttpResult, type TestService, freshTenant } from './harness.ts';
import { DEPLOY_SHA, ISO_RE, UUID_RE } from './contract.ts';

export type Slug = 'courier_a' | 'courier_b' | 'courier_c';
export const SLUGS: Slug[] = ['courier_a', 'courier_b', 'courier_c'];
export const POLLED: Slug[] = ['courier_a', 'courier_b'];
export const SHIPMENT_STATUSES = ['pending', 'picked_up', 'in_transit', 'delivered', 'cancelled', 'refused', 'returned'];
/** GAPS: live = pending, picked_up, in_transit, delivered. */
export const LIVE = ['pending', 'picked_up', 'in_transit', 'delivered'];
/** SPEC shipment table: cancel gives 409 from these. */
export const TERMINAL = ['cancelled', 'delivered', 'refused', 'returned'];

/** SPEC Shipment (all fields present). */
export const SHIPMENT_FIELDS = [
  'id',
  'order_id',
  'courier_slug',
  'tracking_number',
  'status',
  'last_status_label',
  'last_status_at',
  'status_events',
  'delivery_mode',
  'office_id',
  'recipient_address',
  'cod_amount',
  'shipping_cost',
  'parcel_weight_g',
  'parcel_dim_cm',
  'sender_origin',
  'shipment_terms',
  'created_at',
  'updated_at',
].sort();
/** SPEC ShipmentSummary. */
export const SUMMARY_FIELDS = ['id', 'courier_slug', 'tracking_number', 'status', 'last_status_label', 'last_status_at'].sort();
/** The dry-run preview of POST /shipments (SPEC Shipments). */
export const CREATE_PREVIEW_FIELDS = [
  'dry_run',
  'courier',
  'delivery_mode',
  'office_id',
  'weight_g',
  'cod_amount',
  'content_label',
  'shipment_terms',
].sort();
/** GAPS cancel result. */
export const CANCEL_RESULT_FIELDS = ['data', 'courier_cancelled', 'courier_confirmed', 'note'].sort();
/** GAPS: default shipment terms ("observed values"). */
export const DEFAULT_TERMS = { cod_type: 'cash', open_before: 'none', refusal_payer: 'sender' };

/** How each simulated courier writes a normalised status (src/couriers/simulator/state.ts mirrors the adapters). */
export const RAW_CODE: Record<Slug, Record<string, string | number>> = {
  courier_a: {
    pending: 'REGISTERED',
    picked_up: 'COLLECTED',
    in_transit: 'IN_TRANSIT',
    delivered: 'DELIVERED',
    cancelled: 'CANCELLED',
    refused: 'REFUSED',
    returned: 'RETURNED',
  },
  courier_b: { pending: 10, picked_up: 20, in_transit: 30, delivered: 40, refused: 50, returned: 60, cancelled: 90 },
  courier_c: {
    pending: 'accepted',
    picked_up: 'collected',
    in_transit: 'on_the_way',
    delivered: 'handed_over',
    refused: 'declined_by_recipient',
    returned: 'back_to_sender',
    cancelled: 'voided',
  },
};

export const DRY = { 'x-merx-dry-run': '1' };
export const PUSH_PATH = '/api/couriers/courier_c/push';

export function assertShipmentView(s: any, note = ''): void {
  assert.ok(s && typeof s === 'object', `${note}: shipment is an object`);
  assert.deepEqual(Object.keys(s).sort(), SHIPMENT_FIELDS, `${note}: Shipment fields`);
  assert.match(s.id, UUID_RE, `${note}: id`);
  assert.match(s.order_id, UUID_RE, `${note}: order_id`);
  assert.ok(SHIPMENT_STATUSES.includes(s.status), `${note}: status ${s.status}`);
  assert.ok(s.courier_slug === null || SLUGS.includes(s.courier_slug), `${note}: courier_slug`);
  assert.ok(s.tracking_number === null || typeof s.tracking_number === 'string', `${note}: tracking_number`);
  assert.ok(s.last_status_label === null || typeof s.last_status_label === 'string', `${note}: last_status_label`);
  if (s.last_status_at !== null) assert.match(s.last_status_at, ISO_RE, `${note}: last_status_at`);
  assert.ok(Array.isArray(s.status_events), `${note}: status_events is an array`);
  for (const e of s.status_events) {
    assert.equal(typeof e.at, 'string', `${note}: status event at`);
    assert.ok('code' in e && 'label' in e, `${note}: status event has code and label`);
    assert.ok(e.code === null || typeof e.code === 'string' || Number.isInteger(e.code), `${note}: status event code`);
    assert.ok(e.label === null || typeof e.label === 'string', `${note}: status event label`);
  }
  assert.ok(s.delivery_mode === null || ['office', 'home'].includes(s.delivery_mode), `${note}: delivery_mode`);
  assert.ok(s.office_id === null || typeof s.office_id === 'string' || Number.isInteger(s.office_id), `${note}: office_id`);
  assert.ok(
    s.recipient_address === null || typeof s.recipient_address === 'object' || typeof s.recipient_address === 'string',
    `${note}: recipient_address`,
  );
  for (const f of ['cod_amount', 'shipping_cost'])
    assert.ok(s[f] === null || typeof s[f] === 'number', `${note}: ${f} is a number or null (got ${typeof s[f]})`);
  assert.ok(s.parcel_weight_g === null || Number.isInteger(s.parcel_weight_g), `${note}: parcel_weight_g`);
  for (const f of ['parcel_dim_cm', 'sender_origin', 'shipment_terms']) assert.ok(s[f] === null || typeof s[f] === 'object', `${note}: ${f}`);
  assert.match(s.created_at, ISO_RE, `${note}: created_at`);
  if (s.updated_at !== null) assert.match(s.updated_at, ISO_RE, `${note}: updated_at`);
}

export function summaryOf(s: any) {
  return {
    id: s.id,
    courier_slug: s.courier_slug,
    tracking_number: s.tracking_number,
    status: s.status,
    last_status_label: s.last_status_label,
    last_status_at: s.last_status_at,
  };
}

export function assertSummary(summary: any, shipment: any, note = ''): void {
  assert.ok(summary && typeof summary === 'object', `${note}: summary present`);
  assert.deepEqual(Object.keys(summary).sort(), SUMMARY_FIELDS, `${note}: ShipmentSummary fields`);
  assert.deepEqual(summary, summaryOf(shipment), `${note}: summary of the shipment`);
}

/** A fresh tenant with all three couriers enabled (simulator demo credentials). */
export async function shipTenant(svc: TestService, spec?: { preset?: string; scopes?: string[] }, integration: Record<string, unknown> = {}) {
  const t = await freshTenant(svc.url, spec);
  for (const slug of SLUGS) await t.op.call('PUT', `/accounts/${t.accountId}/couriers/${slug}`, { enabled: true, ...integration });
  return t;
}

export async function putCourier(svc: TestService, accountId: string, slug: Slug, body: Record<string, unknown>) {
  return operator(svc.url).call('PUT', `/accounts/${accountId}/couriers/${slug}`, body);
}

/** Checkout with the given courier chosen (office 101 unless overridden). */
export async function checkoutWith(
  svc: TestService,
  accountId: string,
  slug: Slug | null,
  input: Record<string, unknown> = {},
  shipping: Record<string, unknown> = {},
) {
  return operator(svc.url).checkout(accountId, {
    shipping: {
      address: 'ul. Vitosha 1',
      city: 'Sofia',
      zip: '1000',
      courier_slug: slug,
      courier_delivery_mode: 'office',
      courier_office_id: 101,
      ...shipping,
    },
    ...input,
  });
}

export function createShipment(svc: TestService, key: string, body: unknown, headers: Record<string, string> = {}) {
  return http(svc.url, 'POST', '/api/v1/shipments', { token: key, body, headers });
}

/** POST /shipments that must succeed with 201; returns the Shipment. */
export async function ship(svc: TestService, key: string, body: Record<string, unknown>) {
  const res = await createShipment(svc, key, body);
  assert.equal(res.status, 201, `create shipment: ${res.status} ${res.text}`);
  assert.deepEqual(Object.keys(res.body), ['data']);
  assertShipmentView(res.body.data, 'created shipment');
  return res.body.data;
}

export function getShipment(svc: TestService, key: string, id: string) {
  return http(svc.url, 'GET', `/api/v1/shipments/${id}`, { token: key });
}

export async function shipmentNow(svc: TestService, key: string, id: string) {
  const res = await getShipment(svc, key, id);
  assert.equal(res.status, 200, res.text);
  assertShipmentView(res.body.data, 'GET shipment');
  return res.body.data;
}

export async function orderNow(svc: TestService, key: string, id: string) {
  const res = await http(svc.url, 'GET', `/api/v1/orders/${id}`, { token: key });
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

export function cancel(svc: TestService, key: string, id: string, body: unknown = {}, headers: Record<string, string> = {}) {
  return http(svc.url, 'POST', `/api/v1/shipments/${id}/cancel`, { token: key, body, headers });
}

export interface LabelResult {
  status: number;
  headers: Headers;
  bytes: Buffer;
  json: any;
}

/** GET /shipments/{id}/label as raw bytes. */
export async function fetchLabel(svc: TestService, key: string, id: string): Promise<LabelResult> {
  const res = await fetch(`${svc.url}/api/v1/shipments/${id}/label`, { headers: { authorization: `Bearer ${key}` } });
  const bytes = Buffer.from(await res.arrayBuffer());
  let json: any;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, json };
}

/** A real PDF label for the tracking number (pdfkit uncompressed: the number appears as text). */
export function assertLabel(label: LabelResult, tracking: string, note = ''): void {
  assert.equal(label.status, 200, `${note}: label ${label.status} ${label.bytes.toString('utf8').slice(0, 300)}`);
  assert.match(label.headers.get('content-type') ?? '', /^application\/pdf/, `${note}: content-type`);
  assert.equal(label.headers.get('content-disposition'), `attachment; filename="label_${tracking}.pdf"`, `${note}: Content-Disposition`);
  assert.equal(label.headers.get('x-deploy-sha'), DEPLOY_SHA, `${note}: X-Deploy-SHA on the PDF answer too`);
  assert.equal(label.bytes.subarray(0, 5).toString('latin1'), '%PDF-', `${note}: starts like a PDF`);
  assert.ok(label.bytes.includes(Buffer.from('%%EOF')), `${note}: ends like a PDF`);
  assert.ok(label.bytes.includes(Buffer.from(tracking)), `${note}: the tracking number ${tracking} appears in the PDF bytes`);
  assert.ok(pdfText(label.bytes).includes(tracking), `${note}: the tracking number ${tracking} is printed on the page`);
}

/**
 * The text an uncompressed pdfkit page shows: pdfkit writes TJ arrays of hex
 * strings with kerning numbers between them; joining the hex runs gives the text.
 */
export function pdfText(bytes: Buffer): string {
  const source = bytes.toString('latin1');
  const parts: string[] = [];
  for (const m of source.matchAll(/\[([^\]]*)\]\s*TJ/g)) {
    const hexes = [...m[1].matchAll(/<([0-9a-fA-F]*)>/g)].map((h) => Buffer.from(h[1], 'hex').toString('latin1')).join('');
    const literals = [...m[1].matchAll(/\(((?:\\.|[^\\)])*)\)/g)].map((l) => l[1]).join('');
    parts.push(hexes + literals);
  }
  return parts.join('\n');
}

/** The service's courier simulator (svc.service.services.courierSimulator). */
export function simulator(svc: TestService) {
  const sim = svc.service.services.courierSimulator;
  assert.ok(sim, 'the courier simulator runs (simulator mode)');
  return sim;
}

export async function parcel(svc: TestService, tracking: string) {
  const p = await simulator(svc).parcel(tracking);
  assert.ok(p, `the courier holds waybill ${tracking}`);
  return p;
}

/** Changes the courier's own record of a waybill, as the courier might between two calls (its events, recipient, reference). */
export async function changeParcel(svc: TestService, tracking: string, change: (p: Awaited<ReturnType<typeof parcel>>) => void) {
  const p = await parcel(svc, tracking);
  change(p);
  await simulator(svc).replaceParcel(p);
}

/** The courier forgets a waybill. */
export async function forgetParcel(svc: TestService, tracking: string) {
  await simulator(svc).forgetParcel(tracking);
}

/** The waybill numbers the courier simulator holds, to tell new ones from (newParcels). */
export async function parcelKeys(svc: TestService): Promise<Set<string>> {
  return new Set(await simulator(svc).trackingNumbers());
}

/** Waybills the simulator issued since `before`, oldest first. */
export async function newParcels(svc: TestService, before: Set<string>) {
  return simulator(svc).parcels((await simulator(svc).trackingNumbers()).filter((n) => !before.has(n)));
}

export async function setMode(svc: TestService, slug: Slug, mode: 'ok' | 'refuse' | 'down') {
  const res = await operator(svc.url).call('POST', `/courier-sim/${slug}/mode`, { mode });
  assert.deepEqual(res, { data: { slug, mode } });
}

/** Runs `fn` with the courier in `mode`, always restoring `ok` (modes are global to the service). */
export async function withMode<T>(svc: TestService, slug: Slug, mode: 'ok' | 'refuse' | 'down', fn: () => Promise<T>): Promise<T> {
  await setMode(svc, slug, mode);
  try {
    return await fn();
  } finally {
    await setMode(svc, slug, 'ok');
  }
}

/** OPERATOR_API courier-events: the simulator records a raw event (courier_c pushes it at once). */
export async function courierEvent(svc: TestService, shipmentId: string, status: string, extra: { code?: string | number; label?: string } = {}) {
  const res = await operator(svc.url).call('POST', `/shipments/${shipmentId}/courier-events`, { status, ...extra });
  assert.deepEqual(res, { data: { queued: true } });
}

export async function poll(svc: TestService): Promise<number> {
  const res = await operator(svc.url).call('POST', '/jobs/courier-poll/run', {});
  assert.equal(res.data.job, 'courier-poll');
  assert.ok(Number.isInteger(res.data.processed));
  return res.data.processed;
}

/** The courier reports a status and the service hears of it: the poll for courier_a/b, the push for courier_c. */
export async function courierReports(
  svc: TestService,
  shipment: { id: string; courier_slug: string },
  status: string,
  extra: { code?: string | number; label?: string } = {},
) {
  await courierEvent(svc, shipment.id, status, extra);
  if (shipment.courier_slug !== 'courier_c') await poll(svc);
}

/** The per-integration token courier_c was given at waybill creation (read from the simulator's parcel). */
export async function pushTokenOf(svc: TestService, tracking: string): Promise<string> {
  const p = await parcel(svc, tracking);
  assert.ok(p.notify, 'courier_c was given a notify_url and token');
  assert.ok(p.notify.url.endsWith(PUSH_PATH), `notify_url ${p.notify.url}`);
  return p.notify.token;
}

export function push(svc: TestService, token: string | null, body: unknown, authorization?: string): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  else if (token !== null) headers.authorization = `Token ${token}`;
  return http(svc.url, 'POST', PUSH_PATH, { body, headers });
}

export async function events(svc: TestService, accountId: string, name?: string) {
  const rows = await outboxEvents(svc.service, accountId);
  return name ? rows.filter((r: any) => r.event === name) : rows;
}

export async function orphans(svc: TestService, accountId: string) {
  const { rows } = await svc.service.db.query(
    'SELECT courier_slug, tracking_number, order_id, reason FROM courier_orphans WHERE account_id = $1 ORDER BY created_at',
    [accountId],
  );
  return rows;
}

export async function shipmentRows(svc: TestService, accountId: string) {
  const { rows } = await svc.service.db.query('SELECT id, order_id, tracking_number, status FROM shipments WHERE account_id = $1', [accountId]);
  return rows;
}

export async function movements(svc: TestService, key: string, orderId: string) {
  const res = await http(svc.url, 'GET', `/api/v1/inventory/movements?order_id=${orderId}`, { token: key });
  assert.equal(res.status, 200, res.text);
  return res.body.data as any[];
}

export async function stockOf(svc: TestService, key: string, productId: string): Promise<number> {
  const res = await http(svc.url, 'GET', `/api/v1/inventory/stock?product_id=${productId}`, { token: key });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.data.length, 1);
  return res.body.data[0].stock_quantity;
}

/** Sets an order's status as the merchant would (operator API). */
export async function merchantSets(svc: TestService, orderId: string, status: string) {
  return operator(svc.url).setStatus(orderId, status);
}
