// COURIER_MODE=live: the service never mounts the simulator and talks to the
// couriers at COURIER_<X>_URL; here that is the simulator run standalone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { standaloneSimulator } from '../src/couriers/simulator/standalone.ts';
import { startTestService, freshTenant, http, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';

let sim: { url: string; close: () => Promise<void> };
let svc: TestService;

before(async () => {
  sim = await standaloneSimulator(0);
  svc = await startTestService({
    COURIER_MODE: 'live',
    COURIER_A_URL: `${sim.url}/courier_a`,
    COURIER_B_URL: `${sim.url}/courier_b`,
    COURIER_C_URL: `${sim.url}/courier_c`,
  });
});

after(async () => {
  await svc.close();
  await sim.close();
});

test('live mode mounts no simulator and has no simulator controls', async () => {
  const mounted = await http(svc.url, 'POST', '/courier-sim/courier_a/v1/shipments', { body: {} });
  assert.equal(mounted.status, 404);
  const { op } = await freshTenant(svc.url);
  await assert.rejects(op.call('POST', '/courier-sim/courier_a/mode', { mode: 'down' }), /404/);
});

test('waybills, labels and cancellation go over HTTP to the configured courier with the merchant credentials', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  await op.call('PUT', `/accounts/${accountId}/couriers/courier_b`, {
    enabled: true,
    credentials: { api_key: 'sim_b_demo_key', client_id: 'sim_b_demo_client' },
  });
  const order = await op.checkout(accountId, {
    shipping: { address: 'ul. X 1', city: 'Sofia', zip: '1000', courier_slug: 'courier_b', courier_delivery_mode: 'home' },
  });
  const created = await http(svc.url, 'POST', '/api/v1/shipments', { token: key, body: { order_id: order.id } });
  assert.equal(created.status, 201, created.text);
  assert.match(created.body.data.tracking_number, /^6\d{11}$/);
  const label = await fetch(`${svc.url}/api/v1/shipments/${created.body.data.id}/label`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(label.status, 200);
  assert.equal(
    Buffer.from(await label.arrayBuffer())
      .subarray(0, 5)
      .toString(),
    '%PDF-',
  );
  const cancelled = await http(svc.url, 'POST', `/api/v1/shipments/${created.body.data.id}/cancel`, { token: key, body: {} });
  assert.equal(cancelled.status, 200);
  assert.equal(cancelled.body.courier_confirmed, true);
});

test('in live mode an integration without credentials gets no demo credentials: the courier refuses them', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  await op.call('PUT', `/accounts/${accountId}/couriers/courier_a`, { enabled: true });
  const order = await op.checkout(accountId);
  const res = await http(svc.url, 'POST', '/api/v1/shipments', { token: key, body: { order_id: order.id } });
  assert.equal(res.status, 502);
  assert.equal(res.body.error.code, 'courier_error');
  assert.equal(res.body.error.details.reason, 'auth');
});

test('each service counts only its own courier calls in /metrics, with another service in the same process', async () => {
  const other = await startTestService();
  try {
    const calls = async (service: TestService) => {
      const res = await http(service.url, 'GET', '/metrics', { token: ADMIN_TOKEN });
      assert.equal(res.status, 200);
      return res.text.split('\n').filter((line) => line.startsWith('merx_courier_request_duration_seconds_count{'));
    };
    const { op, accountId, key } = await freshTenant(svc.url);
    await op.call('PUT', `/accounts/${accountId}/couriers/courier_b`, {
      enabled: true,
      credentials: { api_key: 'sim_b_demo_key', client_id: 'sim_b_demo_client' },
    });
    const order = await op.checkout(accountId, {
      shipping: { address: 'ul. X 1', city: 'Sofia', zip: '1000', courier_slug: 'courier_b', courier_delivery_mode: 'home' },
    });
    const created = await http(svc.url, 'POST', '/api/v1/shipments', { token: key, body: { order_id: order.id } });
    assert.equal(created.status, 201, created.text);
    assert.ok((await calls(svc)).some((line) => line.startsWith('merx_courier_request_duration_seconds_count{courier="courier_b",status="200"}')));
    assert.deepEqual(await calls(other), [], 'the other service made no courier call');
  } finally {
    await other.close();
  }
});
