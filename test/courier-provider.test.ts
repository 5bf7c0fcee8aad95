// A fourth courier is one provider file and one registration: courier_d
// (test/couriers/courier-d.ts, test-only) is registered here and a shipment
// goes through it end to end over HTTP to its own endpoint, while no file
// under src/ names it. Schemas, validation, config, the poll and the OpenAPI
// document learn of it from the catalog.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { registerCourier } from '../src/couriers/catalog.ts';
import { courierD } from './couriers/courier-d.ts';
import { COURIER_D_KEY, startCourierD } from './couriers/courier-d-endpoint.ts';
import { startTestService, freshTenant, http, type TestService } from './helpers/harness.ts';
import { poll } from './helpers/shipments.ts';

// The one registration line: before the app is built.
registerCourier(courierD);

let endpoint: Awaited<ReturnType<typeof startCourierD>>;
let svc: TestService;

before(async () => {
  endpoint = await startCourierD();
  svc = await startTestService({ COURIER_D_URL: endpoint.url });
});

after(async () => {
  await svc?.close();
  await endpoint?.close();
});

test('no file under src/ names the test-only courier', () => {
  const root = path.join(import.meta.dirname, '../src');
  for (const file of fs.readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    const full = path.join(root, file);
    if (fs.statSync(full).isFile()) assert.ok(!/\bcourier_d\b/.test(fs.readFileSync(full, 'utf8')), `${file} names courier_d`);
  }
});

test('the catalog feeds the OpenAPI enums and the integration endpoint', async () => {
  const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
  const create = doc.paths['/api/v1/shipments'].post.requestBody.content['application/json'].schema;
  const courier = create.properties?.courier ?? JSON.stringify(create);
  assert.ok(JSON.stringify(courier).includes('courier_d'), 'create_shipment lists courier_d');
  const { op, accountId } = await freshTenant(svc.url);
  const put = await op.call('PUT', `/accounts/${accountId}/couriers/courier_d`, { enabled: true, credentials: { key: COURIER_D_KEY } });
  assert.equal(put.data.slug, 'courier_d');
  assert.deepEqual(put.data.credentials_set, ['key']);
  await assert.rejects(op.call('PUT', `/accounts/${accountId}/couriers/courier_z`, { enabled: true }), /400/, 'an unregistered slug is refused');
});

test('a shipment through courier_d: create, label, a polled status, cancel confirmed by the courier', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  await op.call('PUT', `/accounts/${accountId}/couriers/courier_d`, { enabled: true, credentials: { key: COURIER_D_KEY } });
  const order = await op.checkout(accountId, {
    shipping: { address: 'ul. X 1', city: 'Sofia', zip: '1000', courier_slug: 'courier_d', courier_delivery_mode: 'home' },
  });

  const created = await http(svc.url, 'POST', '/api/v1/shipments', { token: key, body: { order_id: order.id } });
  assert.equal(created.status, 201, created.text);
  const shipment = created.body.data;
  assert.equal(shipment.courier_slug, 'courier_d');
  assert.match(shipment.tracking_number, /^D-\d{9}$/);
  assert.equal(shipment.shipping_cost, 2.75);
  assert.equal(shipment.status, 'pending');
  assert.ok(endpoint.consignments.has(shipment.tracking_number), 'the waybill was created at the courier');
  const orderNow = (await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key })).body.data;
  assert.equal(orderNow.courier, 'courier_d');
  assert.equal(orderNow.tracking_url, `https://courier-d.example/t/${shipment.tracking_number}`);
  assert.equal(orderNow.status, 'processing');

  const label = await fetch(`${svc.url}/api/v1/shipments/${shipment.id}/label`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(label.status, 200);
  assert.equal(label.headers.get('content-type'), 'application/pdf');
  assert.equal(
    Buffer.from(await label.arrayBuffer())
      .subarray(0, 5)
      .toString(),
    '%PDF-',
  );

  endpoint.move(shipment.tracking_number, 'moving', 'On the road');
  assert.ok((await poll(svc)) >= 1, 'the poll asked courier_d');
  const moved = (await http(svc.url, 'GET', `/api/v1/shipments/${shipment.id}`, { token: key })).body.data;
  assert.equal(moved.status, 'in_transit');
  assert.equal(moved.last_status_label, 'On the road');
  assert.deepEqual(moved.status_events.at(-1), { at: moved.last_status_at, code: 'moving', label: 'On the road', status: 'in_transit' });

  const cancelled = await http(svc.url, 'POST', `/api/v1/shipments/${shipment.id}/cancel`, { token: key, body: {} });
  assert.equal(cancelled.status, 200, cancelled.text);
  assert.equal(cancelled.body.courier_confirmed, true);
  assert.equal(cancelled.body.note, null);
  assert.equal(cancelled.body.data.status, 'cancelled');
  assert.ok(endpoint.consignments.get(shipment.tracking_number)!.cancelled, 'the courier was told');
  assert.ok(endpoint.calls.includes(`DELETE /consignments/${shipment.tracking_number}`));
});
