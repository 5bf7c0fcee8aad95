// The operator API routes the console stands on (docs/operator-console.md):
// service facts, account and shipment lists, courier integrations, and running
// any registry operation as the merchant's admin, with the same validation,
// dry runs and account boundaries as the public API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { operations } from '../src/app.ts';
import { startTestService, freshTenant, http, operator, outboxEvents, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { BACKOFF_SEC } from './helpers/webhooks.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const admin = (method: string, path: string, body?: unknown) => http(svc.url, method, `/admin/api${path}`, { token: ADMIN_TOKEN, body });
const run = (accountId: string, name: string, args?: Record<string, unknown>) =>
  admin('POST', `/accounts/${accountId}/operations/${name}`, args === undefined ? {} : { arguments: args });

test('every console route wants the operator token, never an API key', async () => {
  const { accountId, key } = await freshTenant(svc.url);
  for (const [method, path] of [
    ['GET', '/info'],
    ['GET', '/accounts'],
    ['GET', `/accounts/${accountId}/shipments`],
    ['GET', `/accounts/${accountId}/couriers`],
    ['POST', `/accounts/${accountId}/operations/list_orders`],
  ]) {
    for (const token of [undefined, key]) {
      const res = await http(svc.url, method, `/admin/api${path}`, { token, body: method === 'POST' ? {} : undefined });
      assert.equal(res.status, 401, `${method} ${path} with ${token ? 'an API key' : 'no token'}`);
    }
  }
});

test('GET /info: the database, couriers and their simulator modes, jobs, presets, and every operation of the list', async () => {
  await admin('POST', '/courier-sim/courier_b/mode', { mode: 'refuse' });
  try {
    const info = (await admin('GET', '/info')).body.data;
    assert.equal(info.database, process.env.DATABASE_URL ? 'postgres' : 'pglite');
    assert.equal(info.sink_url, `${svc.service.services.config.publicBaseUrl}/api/webhooks/sink`);
    assert.deepEqual(
      info.couriers.find((c: any) => c.slug === 'courier_b'),
      { slug: 'courier_b', mode: 'refuse', status_updates: 'poll', cancel: true },
    );
    assert.deepEqual(
      info.couriers.find((c: any) => c.slug === 'courier_c'),
      { slug: 'courier_c', mode: 'ok', status_updates: 'push', cancel: false },
    );
    assert.deepEqual(info.jobs.sort(), ['courier-poll', 'low-stock', 'retention', 'shipment-batches', 'webhook-deliveries']);
    assert.deepEqual(info.presets.fulfilment.length, 9);
    assert.equal(info.webhook_attempts, BACKOFF_SEC.length + 1, 'the first attempt and one per delay of the retry schedule');
    assert.deepEqual(
      info.operations.map((o: any) => o.name),
      operations.map((o) => o.name),
    );
    assert.deepEqual(
      info.operations.find((o: any) => o.name === 'create_shipment'),
      {
        name: 'create_shipment',
        method: 'POST',
        path: '/api/v1/shipments',
        rest: true,
        mcp: true,
        scope: 'shipments:write',
        summary: 'Create a waybill for an order',
        dry_run: true,
      },
    );
  } finally {
    await admin('POST', '/courier-sim/courier_b/mode', { mode: 'ok' });
  }
});

test('GET /accounts: newest first, keyset paged, q on name, email or id', async () => {
  const op = operator(svc.url);
  const marker = `Console${Date.now()}`;
  const made = [];
  for (let i = 0; i < 3; i++) made.push(await op.createAccount({ name: `${marker} ${i}` }));
  const first = (await admin('GET', `/accounts?q=${marker}&limit=2`)).body;
  assert.deepEqual(
    first.data.map((a: any) => a.name),
    [`${marker} 2`, `${marker} 1`],
  );
  assert.equal(first.has_more, true);
  const second = (await admin('GET', `/accounts?q=${marker}&limit=2&cursor=${first.next_cursor}`)).body;
  assert.deepEqual(
    second.data.map((a: any) => a.name),
    [`${marker} 0`],
  );
  assert.equal(second.next_cursor, null);
  assert.deepEqual(
    (await admin('GET', `/accounts?q=${made[1].id}`)).body.data.map((a: any) => a.id),
    [made[1].id],
  );
  assert.deepEqual(
    (await admin('GET', `/accounts?q=${made[1].email.toUpperCase()}`)).body.data.map((a: any) => a.id),
    [made[1].id],
  );
  assert.equal((await admin('GET', '/accounts?q=%25')).status, 200, 'a % is a literal');
  assert.equal((await admin('GET', '/accounts?limit=0')).status, 400);
  assert.equal((await admin('GET', '/accounts?cursor=nope')).status, 400);
});

test('POST /accounts/{id}/operations/{name} runs a public operation for that account: the same answer as REST, validation and 404s', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const viaConsole = await run(accountId, 'get_order', { id: order.id });
  const viaRest = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  assert.equal(viaConsole.status, 200);
  const { _meta, ...body } = viaConsole.body;
  assert.deepEqual(body, viaRest.body);
  // The version REST sends in ETag, as MCP has it in _meta (the approvals inbox compares it with the approval's).
  assert.deepEqual(_meta, { etag: viaRest.headers.get('etag') });
  // MCP-only operations too, by their tool arguments.
  assert.deepEqual((await run(accountId, 'get_shipment', { order_id: order.id })).body, { data: null });

  const bad = await run(accountId, 'list_orders', { limit: 'many' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'validation_failed');
  const unknownArg = await run(accountId, 'list_orders', { colour: 'red' });
  assert.equal(unknownArg.status, 400);
  assert.ok(unknownArg.body.error.details.allowed.includes('status'));
  const noSuchOp = await run(accountId, 'drop_tables', {});
  assert.equal(noSuchOp.status, 404);
  assert.ok(noSuchOp.body.error.details.allowed.includes('list_orders'));
  assert.equal((await run('00000000-0000-4000-8000-000000000000', 'list_orders', {})).status, 404, 'no such account');
  assert.equal((await admin('POST', `/accounts/${accountId}/operations/list_orders`, { arguments: {}, extra: 1 })).status, 400);

  // An account's operations see only that account.
  const other = await freshTenant(svc.url);
  const foreign = await run(other.accountId, 'get_order', { id: order.id });
  assert.equal(foreign.status, 404);
  assert.equal(foreign.body.error.code, 'not_found');
});

test("operations run as the merchant's admin: every scope, dry runs write nothing, writes emit their events, files come as files", async () => {
  const { op, accountId, key } = await freshTenant(svc.url, { preset: 'read_only' });
  await op.call('PUT', `/accounts/${accountId}/couriers/courier_a`, { enabled: true });
  const order = await op.checkout(accountId);
  const preview = await run(accountId, 'update_order', { id: order.id, admin_notes: 'checked', dry_run: true });
  assert.equal(preview.body.dry_run, true);
  assert.equal((await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key })).body.data.admin_notes, null, 'the preview wrote nothing');

  const created = await run(accountId, 'create_shipment', { order_id: order.id });
  assert.equal(created.status, 200, created.text);
  const shipmentId = created.body.data.id;
  assert.equal(created.body.data.status, 'pending');
  const events = (await outboxEvents(svc.service, accountId)).map((e: any) => `${e.event} ${e.data.source}`);
  // The console acts as the merchant's admin: its changes are the merchant's (issue 41).
  for (const event of ['shipment.created merchant', 'order.status_changed merchant']) assert.ok(events.includes(event), `${event} in ${events}`);
  const label = await fetch(`${svc.url}/admin/api/accounts/${accountId}/operations/get_shipment_label`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { id: shipmentId } }),
  });
  assert.equal(label.status, 200);
  assert.equal(label.headers.get('content-type'), 'application/pdf');
  assert.match(label.headers.get('content-disposition') ?? '', /^attachment; filename="label_.+\.pdf"$/);
  assert.equal(
    Buffer.from(await label.arrayBuffer())
      .subarray(0, 5)
      .toString('latin1'),
    '%PDF-',
  );

  // The shipment list and its filters.
  const listed = (await admin('GET', `/accounts/${accountId}/shipments`)).body;
  assert.deepEqual(
    listed.data.map((s: any) => s.id),
    [shipmentId],
  );
  assert.deepEqual(
    listed.data[0],
    (await http(svc.url, 'GET', `/api/v1/shipments/${shipmentId}`, { token: key })).body.data,
    'the public Shipment view',
  );
  assert.deepEqual((await admin('GET', `/accounts/${accountId}/shipments?status=delivered`)).body.data, []);
  assert.deepEqual((await admin('GET', `/accounts/${accountId}/shipments?courier=courier_a&status=pending`)).body.data.length, 1);
  assert.equal((await admin('GET', `/accounts/${accountId}/shipments?status=lost`)).status, 400);
});

test('GET /accounts/{id}/couriers: all three integrations, which keys of credentials are set, never their values', async () => {
  const { op, accountId } = await freshTenant(svc.url);
  assert.deepEqual(
    (await admin('GET', `/accounts/${accountId}/couriers`)).body.data.map((c: any) => [c.slug, c.enabled]),
    [
      ['courier_a', false],
      ['courier_b', false],
      ['courier_c', false],
    ],
  );
  await op.call('PUT', `/accounts/${accountId}/couriers/courier_b`, { enabled: true, credentials: { api_key: 'secret-value', client_id: 'x' } });
  const listed = (await admin('GET', `/accounts/${accountId}/couriers`)).body;
  const b = listed.data.find((c: any) => c.slug === 'courier_b');
  assert.equal(b.enabled, true);
  assert.deepEqual(b.credentials_set.sort(), ['api_key', 'client_id']);
  assert.doesNotMatch(JSON.stringify(listed), /secret-value/);
  assert.equal((await admin('GET', '/accounts/00000000-0000-4000-8000-000000000000/couriers')).status, 404);
});

test('what the console does is the merchant\'s: its events say source "merchant", a key\'s say "api" (SPEC Webhooks source; issue 41)', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  await op.call('PUT', `/accounts/${accountId}/couriers/courier_a`, { enabled: true });
  const byConsole = await op.checkout(accountId);
  const byKey = await op.checkout(accountId);
  assert.equal((await run(accountId, 'update_order', { id: byConsole.id, status: 'confirmed', admin_notes: 'called' })).status, 200);
  assert.equal(
    (await http(svc.url, 'PATCH', `/api/v1/orders/${byKey.id}`, { token: key, body: { status: 'confirmed', admin_notes: 'called' } })).status,
    200,
  );
  const shipped = await run(accountId, 'create_shipment', { order_id: byConsole.id, courier: 'courier_a' });
  assert.equal(shipped.status, 200, shipped.text);
  const cancelled = await run(accountId, 'cancel_shipment', { id: shipped.body.data.id });
  assert.equal(cancelled.status, 200, cancelled.text);
  const events = await outboxEvents(svc.service, accountId);
  const attributed = (orderId: string) =>
    events
      .filter((e: any) => (e.data.order?.id ?? e.data.order_id) === orderId && e.data.source !== undefined)
      .map((e: any) => [e.event, e.data.source]);
  const consoleEvents = attributed(byConsole.id);
  for (const name of ['order.status_changed', 'order.updated', 'shipment.created', 'shipment.cancelled']) {
    assert.ok(
      consoleEvents.some(([event]) => event === name),
      `${name} among ${consoleEvents.join('; ')}`,
    );
  }
  assert.deepEqual([...new Set(consoleEvents.map(([, source]) => source))], ['merchant'], consoleEvents.join('; '));
  assert.deepEqual([...new Set(attributed(byKey.id).map(([, source]) => source))], ['api']);
  const cancelledShipment = (await http(svc.url, 'GET', `/api/v1/shipments/${shipped.body.data.id}`, { token: key })).body.data;
  assert.equal(cancelledShipment.status_events.at(-1).source, 'merchant');
});
