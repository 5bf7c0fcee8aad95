// EXTENSIONS 8, shipment batches: create (202 + Location, the envelope's
// checks naming the first offending index, dry run, Idempotency-Key,
// approval asking once with effects per courier), read, items (paged,
// filtered), cancel, labels as one PDF, the MCP tools, two running batches
// per account. Each item runs POST /api/v1/shipments' own code path: its
// answers are compared with the single route's. Everything through the
// built-in courier simulator over HTTP; its modes and call log (OPERATOR_API)
// show retries, order and concurrency from outside.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { PDFDocument, PDFRawStream, type PDFPage } from 'pdf-lib';
import { startTestService, http, operator, type TestService } from './helpers/harness.ts';
import { assertError, assertScopeMissing, ISO_RE, UUID_RE } from './helpers/contract.ts';
import { callTool } from './helpers/mcp.ts';
import { checkoutWith, createShipment, events, fetchLabel, orderNow, shipTenant, shipmentNow, pdfText, DRY } from './helpers/shipments.ts';
import {
  BATCH_FIELDS,
  ITEM_FIELDS,
  allItems,
  createBatch,
  getBatch,
  mostInFlight,
  ordersFor,
  simCalls,
  simMode,
  startBatch,
  waitFinished,
  waitFor,
} from './helpers/batches.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService({ COURIER_TIMEOUT_MS: '800' });
});
after(async () => {
  await svc.close();
});

const POSTGRES = Boolean(process.env.DATABASE_URL);

function assertBatch(batch: any, note = '') {
  assert.deepEqual(Object.keys(batch).sort(), BATCH_FIELDS, `${note}: Batch fields`);
  assert.match(batch.id, UUID_RE);
  assert.ok(['running', 'done', 'cancelled'].includes(batch.state), `${note}: state ${batch.state}`);
  assert.equal(batch.succeeded + batch.failed + batch.pending, batch.total, `${note}: counts add up`);
  assert.match(batch.created_at, ISO_RE);
  assert.ok(batch.finished_at === null || ISO_RE.test(batch.finished_at), `${note}: finished_at`);
}

const creates = async (slug: 'courier_a' | 'courier_b' | 'courier_c') => (await simCalls(svc.url, slug)).filter((c) => c.operation === 'create');

// ---------------------------------------------------------------- create and run

test('POST /shipment-batches answers 202 {data: Batch} with Location; every item does what POST /shipments does', async () => {
  const t = await shipTenant(svc);
  const orders = [
    ...(await ordersFor(svc, t.accountId, 'courier_a', 2)),
    ...(await ordersFor(svc, t.accountId, 'courier_b', 1)),
    ...(await ordersFor(svc, t.accountId, 'courier_c', 1)),
  ];
  const res = await createBatch(svc.url, t.key, [
    ...orders.map((order_id) => ({ order_id })),
    { order_id: orders[0].replace(/.$/, (c) => (c === '0' ? '1' : '0')) },
  ]);
  assert.equal(res.status, 202, res.text);
  assert.deepEqual(Object.keys(res.body), ['data']);
  const batch = res.body.data;
  assertBatch(batch, 'created');
  assert.equal(res.headers.get('location'), `/api/v1/shipment-batches/${batch.id}`);
  assert.equal(batch.total, 5);
  assert.ok(['running', 'done'].includes(batch.state));

  const done = await waitFinished(svc.url, t.key, batch.id);
  assertBatch(done, 'finished');
  assert.equal(done.state, 'done');
  assert.deepEqual([done.succeeded, done.failed, done.pending], [4, 1, 0]);
  const read = await getBatch(svc.url, t.key, batch.id);
  assert.deepEqual(read.body, { data: done });

  const items = await allItems(svc.url, t.key, batch.id);
  assert.deepEqual(
    items.map((i) => i.index),
    [0, 1, 2, 3, 4],
  );
  for (const item of items) assert.deepEqual(Object.keys(item).sort(), ITEM_FIELDS);
  const shipped = await events(svc, t.accountId, 'shipment.created');
  for (const item of items.slice(0, 4)) {
    assert.equal(item.status, 'succeeded');
    assert.equal(item.error, null);
    const shipment = await shipmentNow(svc, t.key, item.shipment_id);
    assert.equal(shipment.order_id, item.order_id);
    // The order moved and shows its waybill, as the single route leaves it.
    const order = await orderNow(svc, t.key, item.order_id);
    assert.equal(order.status, 'processing');
    assert.equal(order.shipment.id, shipment.id);
    const event = shipped.filter((e: any) => e.data.shipment.id === shipment.id);
    assert.equal(event.length, 1, 'one shipment.created per item');
    assert.equal(event[0].data.source, 'api');
  }
  // The unknown order fails exactly as the single route answers it.
  assert.equal(items[4].status, 'failed');
  assert.equal(items[4].shipment_id, null);
  const single = await createShipment(svc, t.key, { order_id: items[4].order_id });
  assert.deepEqual(items[4].error, assertError(single, 404, 'not_found'));
});

test("an item fails exactly where the single route refuses, with the single route's error object; re-running creates only what is missing", async () => {
  const t = await shipTenant(svc);
  const [first, second] = await ordersFor(svc, t.accountId, 'courier_a', 2);
  const noCourier = (await checkoutWith(svc, t.accountId, null)).id;
  const closed = (await checkoutWith(svc, t.accountId, 'courier_a')).id;
  await operator(svc.url).setStatus(closed, 'cancelled');
  const homeless = (await checkoutWith(svc, t.accountId, 'courier_b')).id;
  await operator(svc.url).call('PUT', `/accounts/${t.accountId}/couriers/courier_b`, { enabled: false });
  const items = [
    { order_id: first },
    { order_id: noCourier },
    { order_id: closed },
    { order_id: second, weight_g: 0 },
    { order_id: homeless },
    { order_id: crypto.randomUUID(), courier: 'courier_z' },
    { order_id: crypto.randomUUID(), surprise: true },
  ];
  const batch = await startBatch(svc.url, t.key, items);
  const done = await waitFinished(svc.url, t.key, batch.id);
  assert.deepEqual([done.succeeded, done.failed], [1, 6]);
  const listed = await allItems(svc.url, t.key, batch.id);
  for (const [index, body] of items.entries()) {
    if (index === 0) continue;
    const single = await createShipment(svc, t.key, body);
    assert.ok(single.status >= 400, `single route refuses item ${index}: ${single.text}`);
    assert.deepEqual(listed[index].error, single.body.error, `item ${index}: the single route's error`);
  }
  assert.equal(listed[2].error.details.kind, 'order_status');
  assert.equal(listed[4].error.details.reason, 'courier_not_enabled');

  // The same orders again: the one that got a waybill fails with the single route's conflict and its details.shipment.
  await operator(svc.url).call('PUT', `/accounts/${t.accountId}/couriers/courier_b`, { enabled: true });
  const again = await startBatch(svc.url, t.key, [{ order_id: first }, { order_id: second }, { order_id: homeless }]);
  await waitFinished(svc.url, t.key, again.id);
  const rerun = await allItems(svc.url, t.key, again.id);
  assert.equal(rerun[0].status, 'failed');
  assert.equal(rerun[0].error.code, 'conflict');
  assert.equal(rerun[0].error.details.shipment.id, listed[0].shipment_id);
  assert.deepEqual(
    rerun.slice(1).map((i) => i.status),
    ['succeeded', 'succeeded'],
  );
});

test('the envelope: 1..1000 items, objects with a UUID order_id, no order_id twice; 400 naming the first offending index', async () => {
  const t = await shipTenant(svc);
  const id = () => crypto.randomUUID();
  const [a, b] = [id(), id()];
  const cases: Array<[unknown[], string]> = [
    [[], 'items has 0 items; a batch takes 1..1000'],
    [Array.from({ length: 1001 }, () => ({ order_id: id() })), 'items has 1001 items; a batch takes 1..1000'],
    [[{ order_id: a }, { order_id: b }, 'x', { order_id: 'nope' }], 'items[2] is not an object'],
    [[{ order_id: a }, null], 'items[1] is not an object'],
    [[{ order_id: a }, [1]], 'items[1] is not an object'],
    [[{ order_id: a }, { order_id: 'nope' }, 7], 'items[1].order_id must be a UUID'],
    [[{ courier: 'courier_a' }], 'items[0].order_id must be a UUID'],
    [[{ order_id: a }, { order_id: b }, { order_id: id() }, { order_id: b }, { order_id: a }], 'items[3].order_id repeats items[1]'],
    [[{ order_id: a }, { order_id: a.toUpperCase() }], 'items[1].order_id repeats items[0]'],
  ];
  for (const [items, detail] of cases) {
    const error = assertError(await createBatch(svc.url, t.key, items), 400, 'validation_failed', detail);
    assert.equal(error.details.detail, detail);
  }
  assertError(await http(svc.url, 'POST', '/api/v1/shipment-batches', { token: t.key, body: {} }), 400, 'validation_failed', 'no items');
  assertError(
    await http(svc.url, 'POST', '/api/v1/shipment-batches', { token: t.key, body: { items: [], extra: 1 } }),
    400,
    'validation_failed',
    'unknown field',
  );
  const { rows } = await svc.service.db.query('SELECT count(*)::int AS n FROM shipment_batches WHERE account_id = $1', [t.accountId]);
  assert.equal(rows[0].n, 0, 'nothing stored');
  // Batch ids are UUIDs; another account's batch is not found.
  for (const path of ['', '/items', '/labels']) {
    assertError(await http(svc.url, 'GET', `/api/v1/shipment-batches/not-a-uuid${path}`, { token: t.key }), 400, 'validation_failed', path);
  }
  assertError(await http(svc.url, 'POST', '/api/v1/shipment-batches/not-a-uuid/cancel', { token: t.key, body: {} }), 400, 'validation_failed');
  const batch = await startBatch(svc.url, t.key, [{ order_id: id() }]);
  const other = await shipTenant(svc);
  for (const path of ['', '/items', '/labels']) {
    assertError(await http(svc.url, 'GET', `/api/v1/shipment-batches/${batch.id}${path}`, { token: other.key }), 404, 'not_found', path);
  }
  assertError(await http(svc.url, 'POST', `/api/v1/shipment-batches/${batch.id}/cancel`, { token: other.key, body: {} }), 404, 'not_found');
  await waitFinished(svc.url, t.key, batch.id);
});

test('scopes: create and cancel need shipments:write, reads need shipments:read', async () => {
  const t = await shipTenant(svc);
  const batch = await startBatch(svc.url, t.key, [{ order_id: crypto.randomUUID() }]);
  const reader = await operator(svc.url).issueKey(t.accountId, { scopes: ['shipments:read'] });
  const writer = await operator(svc.url).issueKey(t.accountId, { scopes: ['orders:read'] });
  assertScopeMissing(await createBatch(svc.url, reader, [{ order_id: crypto.randomUUID() }]), 'shipments:write');
  assertScopeMissing(await http(svc.url, 'POST', `/api/v1/shipment-batches/${batch.id}/cancel`, { token: reader, body: {} }), 'shipments:write');
  for (const path of ['', '/items', '/labels']) {
    assertScopeMissing(await http(svc.url, 'GET', `/api/v1/shipment-batches/${batch.id}${path}`, { token: writer }), 'shipments:read');
  }
  assert.equal((await getBatch(svc.url, reader, batch.id)).status, 200);
  await waitFinished(svc.url, t.key, batch.id);
});

// ---------------------------------------------------------------- dry run, idempotency, approval

test("dry run: 200 {dry_run, items: [{index, order_id, ok, result, error}]} with the single route's previews; no courier call, nothing stored", async () => {
  const t = await shipTenant(svc);
  const [good] = await ordersFor(svc, t.accountId, 'courier_b', 1);
  const missing = crypto.randomUUID();
  const before = (await creates('courier_b')).length;
  const items = [
    { order_id: good, weight_g: 2500 },
    { order_id: missing },
    { order_id: good.replace(/^./, (c) => (c === 'f' ? 'e' : 'f')), delivery_mode: 'boat' },
  ];
  const res = await createBatch(svc.url, t.key, items, DRY);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['dry_run', 'items']);
  assert.equal(res.body.dry_run, true);
  const single = await createShipment(svc, t.key, items[0], DRY);
  assert.deepEqual(res.body.items[0], { index: 0, order_id: good, ok: true, result: single.body, error: null });
  assert.deepEqual(res.body.items[1], {
    index: 1,
    order_id: missing,
    ok: false,
    result: null,
    error: (await createShipment(svc, t.key, items[1], DRY)).body.error,
  });
  assert.deepEqual(res.body.items[2].error, (await createShipment(svc, t.key, items[2], DRY)).body.error);
  assert.equal((await creates('courier_b')).length, before, 'no courier call');
  const { rows } = await svc.service.db.query('SELECT count(*)::int AS n FROM shipment_batches WHERE account_id = $1', [t.accountId]);
  assert.equal(rows[0].n, 0);
  assert.equal((await orderNow(svc, t.key, good)).status, 'new');
});

test('Idempotency-Key: a retried create answers the same batch (replayed) and stores one', async () => {
  const t = await shipTenant(svc);
  const orders = await ordersFor(svc, t.accountId, 'courier_c', 2);
  const headers = { 'idempotency-key': `batch-${crypto.randomUUID()}` };
  const first = await createBatch(
    svc.url,
    t.key,
    orders.map((order_id) => ({ order_id })),
    headers,
  );
  assert.equal(first.status, 202, first.text);
  const second = await createBatch(
    svc.url,
    t.key,
    orders.map((order_id) => ({ order_id })),
    headers,
  );
  assert.equal(second.status, 202);
  assert.equal(second.headers.get('idempotent-replayed'), 'true');
  assert.equal(second.text, first.text);
  assert.equal(second.headers.get('location'), first.headers.get('location'));
  const other = await createBatch(svc.url, t.key, [{ order_id: orders[0] }], headers);
  assert.equal(assertError(other, 409, 'conflict').details.reason, 'idempotency_key_reused');
  const { rows } = await svc.service.db.query('SELECT count(*)::int AS n FROM shipment_batches WHERE account_id = $1', [t.accountId]);
  assert.equal(rows[0].n, 1);
  const done = await waitFinished(svc.url, t.key, first.body.data.id);
  assert.equal(done.succeeded, 2);
});

test('a key whose writes wait for approval asks once for the batch, its effects counted per courier; approved, it runs as a direct batch', async () => {
  const t = await shipTenant(svc);
  const agent = (await operator(svc.url).call('POST', `/accounts/${t.accountId}/keys`, { name: 'agent', preset: 'fulfilment', writes: 'approval' }))
    .key;
  const orders = [...(await ordersFor(svc, t.accountId, 'courier_a', 3)), ...(await ordersFor(svc, t.accountId, 'courier_c', 1))];
  const items = [...orders.map((order_id) => ({ order_id })), { order_id: crypto.randomUUID() }];
  const asked = await createBatch(svc.url, agent, items);
  assert.equal(asked.status, 202, asked.text);
  const approval = asked.body.data;
  assert.equal(approval.operation, 'create_shipment_batch');
  assert.equal(approval.status, 'pending');
  assert.deepEqual(approval.effects, [
    'courier_a creates 3 waybills',
    'courier_c creates 1 waybill',
    '1 item would fail as create_shipment refuses them (see the dry run)',
    'shipment.created to 0 subscriptions',
  ]);
  const { rows } = await svc.service.db.query('SELECT count(*)::int AS n FROM shipment_batches WHERE account_id = $1', [t.accountId]);
  assert.equal(rows[0].n, 0, 'nothing runs before the approval');
  await operator(svc.url).call('POST', `/approvals/${approval.id}/approve`, {});
  const run = await createBatch(svc.url, agent, items, { 'merx-approval': approval.id });
  assert.equal(run.status, 202, run.text);
  assertBatch(run.body.data);
  const done = await waitFinished(svc.url, agent, run.body.data.id);
  assert.deepEqual([done.succeeded, done.failed], [4, 1], 'items ran without asking again');
});

// ---------------------------------------------------------------- items

test('items: the list envelope in item order, limit 1..200 (default 50), cursor, status filter', async () => {
  const t = await shipTenant(svc);
  const orders = await ordersFor(svc, t.accountId, 'courier_c', 3);
  const ids = [orders[0], crypto.randomUUID(), orders[1], crypto.randomUUID(), orders[2]];
  const batch = await startBatch(
    svc.url,
    t.key,
    ids.map((order_id) => ({ order_id })),
  );
  await waitFinished(svc.url, t.key, batch.id);
  const path = `/api/v1/shipment-batches/${batch.id}/items`;
  const all = await http(svc.url, 'GET', path, { token: t.key });
  assert.deepEqual(Object.keys(all.body).sort(), ['data', 'has_more', 'next_cursor']);
  assert.deepEqual(
    all.body.data.map((i: any) => i.order_id),
    ids,
  );
  assert.equal(all.body.has_more, false);
  assert.equal(all.body.next_cursor, null);

  const page1 = await http(svc.url, 'GET', `${path}?limit=2`, { token: t.key });
  assert.deepEqual(
    page1.body.data.map((i: any) => i.index),
    [0, 1],
  );
  assert.equal(page1.body.has_more, true);
  const page2 = await http(svc.url, 'GET', `${path}?limit=2&cursor=${encodeURIComponent(page1.body.next_cursor)}`, { token: t.key });
  assert.deepEqual(
    page2.body.data.map((i: any) => i.index),
    [2, 3],
  );
  const page3 = await http(svc.url, 'GET', `${path}?limit=2&cursor=${encodeURIComponent(page2.body.next_cursor)}`, { token: t.key });
  assert.deepEqual(
    page3.body.data.map((i: any) => i.index),
    [4],
  );
  assert.equal(page3.body.has_more, false);

  const failed = await http(svc.url, 'GET', `${path}?status=failed`, { token: t.key });
  assert.deepEqual(
    failed.body.data.map((i: any) => i.index),
    [1, 3],
  );
  for (const item of failed.body.data) assert.equal(item.error.code, 'not_found');
  const succeeded = await http(svc.url, 'GET', `${path}?status=succeeded&limit=1`, { token: t.key });
  assert.deepEqual(
    succeeded.body.data.map((i: any) => i.index),
    [0],
  );
  const rest = await http(svc.url, 'GET', `${path}?status=succeeded&limit=1&cursor=${encodeURIComponent(succeeded.body.next_cursor)}`, {
    token: t.key,
  });
  assert.deepEqual(
    rest.body.data.map((i: any) => i.index),
    [2],
  );
  assert.deepEqual((await http(svc.url, 'GET', `${path}?status=pending`, { token: t.key })).body.data, []);

  for (const query of ['limit=0', 'limit=201', 'status=running', 'cursor=forged', 'offset=1']) {
    assertError(await http(svc.url, 'GET', `${path}?${query}`, { token: t.key }), 400, 'validation_failed', query);
  }
  // A cursor of another batch is not this batch's.
  const otherBatch = await startBatch(svc.url, t.key, [{ order_id: crypto.randomUUID() }, { order_id: crypto.randomUUID() }]);
  await waitFinished(svc.url, t.key, otherBatch.id);
  const foreign = await http(svc.url, 'GET', `/api/v1/shipment-batches/${otherBatch.id}/items?limit=1`, { token: t.key });
  assertError(
    await http(svc.url, 'GET', `${path}?cursor=${encodeURIComponent(foreign.body.next_cursor)}`, { token: t.key }),
    400,
    'validation_failed',
  );
});

// ---------------------------------------------------------------- cancel, labels, the running limit

/**
 * A batch that stays running: courier_a answers every call 429, so its first
 * 4 items wait between retries (3.5 s of backoff) and the rest wait for a slot.
 */
async function hangingBatch(key: string, orders: string[]) {
  await simMode(svc.url, 'courier_a', 'throttle');
  const batch = await startBatch(
    svc.url,
    key,
    orders.map((order_id) => ({ order_id })),
  );
  const running = await waitFor(svc.url, key, batch.id, () => true);
  return { batch, running };
}

test('cancel: items not started fail conflict batch_cancelled at once, items in flight finish; a finished batch answers unchanged', async () => {
  const t = await shipTenant(svc);
  const orders = await ordersFor(svc, t.accountId, 'courier_a', 10);
  try {
    const { batch } = await hangingBatch(t.key, orders);
    // Wait until the first four are in flight (retrying the throttled courier).
    for (;;) {
      const r = await svc.service.db.query(`SELECT count(*)::int AS n FROM shipment_batch_items WHERE batch_id = $1 AND status = 'running'`, [
        batch.id,
      ]);
      if (r.rows[0].n === 4) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const res = await http(svc.url, 'POST', `/api/v1/shipment-batches/${batch.id}/cancel`, { token: t.key, body: {} });
    assert.equal(res.status, 200, res.text);
    const cancelled = res.body.data;
    assertBatch(cancelled, 'cancel answer');
    assert.equal(cancelled.state, 'cancelled');
    assert.deepEqual([cancelled.pending, cancelled.succeeded, cancelled.failed], [4, 0, 6], 'pending counts only the items in flight');
    assert.equal(cancelled.finished_at, null, 'items in flight still run');
    const notStarted = await allItems(svc.url, t.key, batch.id, 'status=failed');
    assert.equal(notStarted.length, cancelled.failed);
    for (const item of notStarted) {
      assert.equal(item.error.code, 'conflict');
      assert.equal(item.error.details.reason, 'batch_cancelled');
    }
    await simMode(svc.url, 'courier_a', 'ok');
    const finished = await waitFinished(svc.url, t.key, batch.id);
    assert.equal(finished.state, 'cancelled', 'stays cancelled when the last item finishes');
    assert.equal(finished.pending, 0);
    // The items in flight finished: the courier took them once it stopped throttling.
    assert.deepEqual([finished.succeeded, finished.failed], [4, 6]);
    assert.deepEqual(
      (await allItems(svc.url, t.key, batch.id, 'status=succeeded')).map((i) => i.index),
      [0, 1, 2, 3],
    );
    const again = await http(svc.url, 'POST', `/api/v1/shipment-batches/${batch.id}/cancel`, { token: t.key, body: {} });
    assert.deepEqual(again.body, { data: finished }, 'a finished batch answers unchanged');
  } finally {
    await simMode(svc.url, 'courier_a', 'ok');
  }
  const done = await startBatch(svc.url, t.key, [{ order_id: crypto.randomUUID() }]);
  const finished = await waitFinished(svc.url, t.key, done.id);
  const res = await http(svc.url, 'POST', `/api/v1/shipment-batches/${done.id}/cancel`, { token: t.key, body: {} });
  assert.deepEqual(res.body, { data: finished });
  assert.equal(finished.state, 'done');
});

/** The bytes of a page's content stream(s), as pdf-lib holds them. */
function pageContent(page: PDFPage): Buffer {
  const contents = page.node.Contents();
  const streams = contents && 'asArray' in contents ? (contents as any).asArray().map((ref: any) => page.doc.context.lookup(ref)) : [contents];
  return Buffer.concat(streams.map((s: any) => Buffer.from((s as PDFRawStream).contents)));
}

test('labels: one application/pdf of every succeeded label in item order, pages unchanged; 409 batch_running, 409 no_labels', async () => {
  const t = await shipTenant(svc);
  const orders = [
    ...(await ordersFor(svc, t.accountId, 'courier_b', 1)),
    ...(await ordersFor(svc, t.accountId, 'courier_a', 1)),
    ...(await ordersFor(svc, t.accountId, 'courier_c', 2)),
  ];
  const ids = [orders[0], crypto.randomUUID(), orders[1], orders[2], orders[3]];
  const batch = await startBatch(
    svc.url,
    t.key,
    ids.map((order_id) => ({ order_id })),
  );
  await waitFinished(svc.url, t.key, batch.id);
  const res = await fetch(`${svc.url}/api/v1/shipment-batches/${batch.id}/labels`, { headers: { authorization: `Bearer ${t.key}` } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/pdf/);
  assert.equal(res.headers.get('content-disposition'), `attachment; filename="batch-${batch.id}.pdf"`);
  const merged = await PDFDocument.load(Buffer.from(await res.arrayBuffer()));
  const items = await allItems(svc.url, t.key, batch.id, 'status=succeeded');
  assert.equal(items.length, 4);
  assert.equal(merged.getPageCount(), 4, 'one page per label');
  for (const [n, item] of items.entries()) {
    const shipment = await shipmentNow(svc, t.key, item.shipment_id);
    const single = await fetchLabel(svc, t.key, item.shipment_id);
    const label = await PDFDocument.load(single.bytes);
    const page = merged.getPage(n);
    assert.deepEqual(page.getSize(), label.getPage(0).getSize(), `page ${n}: size unchanged`);
    const content = pageContent(page);
    assert.ok(content.equals(pageContent(label.getPage(0))), `page ${n}: the single label's content, unchanged`);
    assert.ok(pdfText(content).includes(shipment.tracking_number), `page ${n} is item ${item.index}'s label`);
  }

  const none = await startBatch(svc.url, t.key, [{ order_id: crypto.randomUUID() }]);
  await waitFinished(svc.url, t.key, none.id);
  const empty = assertError(await http(svc.url, 'GET', `/api/v1/shipment-batches/${none.id}/labels`, { token: t.key }), 409, 'conflict');
  assert.equal(empty.details.reason, 'no_labels');

  try {
    const { batch: hanging } = await hangingBatch(t.key, await ordersFor(svc, t.accountId, 'courier_a', 2));
    const running = assertError(await http(svc.url, 'GET', `/api/v1/shipment-batches/${hanging.id}/labels`, { token: t.key }), 409, 'conflict');
    assert.equal(running.details.reason, 'batch_running');
    await simMode(svc.url, 'courier_a', 'ok');
    await waitFinished(svc.url, t.key, hanging.id);
  } finally {
    await simMode(svc.url, 'courier_a', 'ok');
  }
});

test('at most 2 running batches per account: a third gives 429 rate_limited with details.retry_after_sec; once one finishes there is room', async () => {
  const t = await shipTenant(svc);
  try {
    const { batch: first } = await hangingBatch(t.key, await ordersFor(svc, t.accountId, 'courier_a', 5));
    const second = await startBatch(
      svc.url,
      t.key,
      (await ordersFor(svc, t.accountId, 'courier_a', 5)).map((order_id) => ({ order_id })),
    );
    const third = await createBatch(svc.url, t.key, [{ order_id: crypto.randomUUID() }]);
    const error = assertError(third, 429, 'rate_limited');
    assert.ok(Number.isInteger(error.details.retry_after_sec) && error.details.retry_after_sec > 0);
    assert.equal(third.headers.get('retry-after'), String(error.details.retry_after_sec));
    // Another account is not held back; a dry run stores nothing and is not counted.
    const other = await shipTenant(svc);
    const elsewhere = await startBatch(svc.url, other.key, [{ order_id: crypto.randomUUID() }]);
    assert.equal((await createBatch(svc.url, t.key, [{ order_id: crypto.randomUUID() }], DRY)).status, 200);
    await http(svc.url, 'POST', `/api/v1/shipment-batches/${first.id}/cancel`, { token: t.key, body: {} });
    const now = await createBatch(svc.url, t.key, [{ order_id: crypto.randomUUID() }]);
    assert.equal(now.status, 202, `a cancelled batch no longer counts as running: ${now.text}`);
    await simMode(svc.url, 'courier_a', 'ok');
    for (const id of [first.id, second.id, now.body.data.id]) await waitFinished(svc.url, t.key, id);
    await waitFinished(svc.url, other.key, elsewhere.id);
  } finally {
    await simMode(svc.url, 'courier_a', 'ok');
  }
});

// ---------------------------------------------------------------- the courier's 429 and 500, order and concurrency

test("a courier's 429 and 500 are retried up to 3 times with backoff; the 4th failure fails the item courier_error", async () => {
  const t = await shipTenant(svc);
  const [a1, a2] = await ordersFor(svc, t.accountId, 'courier_a', 2);
  const [b1] = await ordersFor(svc, t.accountId, 'courier_b', 1);
  const [c1] = await ordersFor(svc, t.accountId, 'courier_c', 1);
  const before = { a: (await creates('courier_a')).length, b: (await creates('courier_b')).length, c: (await creates('courier_c')).length };
  try {
    await simMode(svc.url, 'courier_a', 'throttle', 3); // 3 answers of 429 spread over the two items: both get through
    await simMode(svc.url, 'courier_b', 'error'); // every call 500: 1 + 3 retries, then courier_error
    await simMode(svc.url, 'courier_c', 'error', 3); // the third retry succeeds
    const batch = await startBatch(
      svc.url,
      t.key,
      [a1, a2, b1, c1].map((order_id) => ({ order_id })),
    );
    const done = await waitFinished(svc.url, t.key, batch.id);
    assert.deepEqual([done.succeeded, done.failed], [3, 1]);
    const items = await allItems(svc.url, t.key, batch.id);
    assert.deepEqual(
      items.map((i) => i.status),
      ['succeeded', 'succeeded', 'failed', 'succeeded'],
    );
    assert.equal(items[2].error.code, 'courier_error');
    assert.equal(items[2].error.details.reason, 'unavailable');
    const a = (await creates('courier_a')).slice(before.a);
    assert.deepEqual(a.map((c) => c.status).sort(), [201, 201, 429, 429, 429]);
    const b = (await creates('courier_b')).slice(before.b);
    assert.deepEqual(
      b.map((c) => c.status),
      [500, 500, 500, 500],
      'one call and 3 retries',
    );
    const c = (await creates('courier_c')).slice(before.c);
    assert.deepEqual(
      c.map((call) => call.status),
      [500, 500, 500, 201],
    );
    // Backoff: each retry waits longer than the one before.
    const gaps = b.slice(1).map((call, i) => Date.parse(call.at) - Date.parse(b[i].at));
    assert.ok(gaps[0] >= 400 && gaps[1] > gaps[0] && gaps[2] > gaps[1], `growing waits: ${gaps}`);
    // The single route answers a 429 the same way (no retry there): courier_error, throttled.
    await simMode(svc.url, 'courier_a', 'throttle', 1);
    const [a3] = await ordersFor(svc, t.accountId, 'courier_a', 1);
    const single = assertError(await createShipment(svc, t.key, { order_id: a3 }), 502, 'courier_error');
    assert.equal(single.details.reason, 'throttled');
  } finally {
    for (const slug of ['courier_a', 'courier_b', 'courier_c'] as const) await simMode(svc.url, slug, 'ok');
  }
});

test('items start in request order and at most 4 calls per courier are in flight for one batch (seen in the call log)', async () => {
  const t = await shipTenant(svc);
  const a = await ordersFor(svc, t.accountId, 'courier_a', 10);
  const b = await ordersFor(svc, t.accountId, 'courier_b', 10);
  const interleaved = a.flatMap((id, i) => [id, b[i]]);
  const before = { a: (await simCalls(svc.url, 'courier_a')).length, b: (await simCalls(svc.url, 'courier_b')).length };
  try {
    // Couriers that hold every call until the service gives up (800 ms): calls overlap as much as the batch lets them.
    await simMode(svc.url, 'courier_a', 'down');
    await simMode(svc.url, 'courier_b', 'down');
    const batch = await startBatch(
      svc.url,
      t.key,
      interleaved.map((order_id) => ({ order_id })),
    );
    const done = await waitFinished(svc.url, t.key, batch.id);
    assert.equal(done.failed, 20);
    for (const [slug, from] of [
      ['courier_a', before.a],
      ['courier_b', before.b],
    ] as const) {
      const calls = (await simCalls(svc.url, slug)).slice(from);
      assert.equal(calls.length, 10, `${slug}: one call per item (a timeout is not retried)`);
      const most = mostInFlight(calls);
      assert.ok(most <= 4, `${slug}: at most 4 calls in flight, saw ${most}`);
      // PGlite runs one transaction at a time (the courier is called inside the order's lock), so only PostgreSQL shows 4 at once.
      if (POSTGRES) assert.equal(most, 4, `${slug}: the batch uses its 4 slots`);
    }
    const { rows } = await svc.service.db.query<{ idx: number; started_at: string }>(
      'SELECT idx, started_at FROM shipment_batch_items WHERE batch_id = $1 ORDER BY idx',
      [batch.id],
    );
    for (let i = 1; i < rows.length; i++) {
      assert.ok(Date.parse(rows[i].started_at) >= Date.parse(rows[i - 1].started_at), `item ${i} started no earlier than item ${i - 1}`);
    }
  } finally {
    await simMode(svc.url, 'courier_a', 'ok');
    await simMode(svc.url, 'courier_b', 'ok');
  }
});

// ---------------------------------------------------------------- MCP

test('MCP: create_shipment_batch, get_shipment_batch, list_shipment_batch_items, cancel_shipment_batch (every tool names the batch id)', async () => {
  const t = await shipTenant(svc);
  const orders = await ordersFor(svc, t.accountId, 'courier_c', 2);
  const created = await callTool(svc.url, t.key, 'create_shipment_batch', { items: orders.map((order_id) => ({ order_id })) });
  assert.equal(created.isError, false, JSON.stringify(created.structuredContent));
  const batch = created.structuredContent.data;
  assertBatch(batch);
  await waitFinished(svc.url, t.key, batch.id);
  const read = await callTool(svc.url, t.key, 'get_shipment_batch', { id: batch.id });
  assert.deepEqual(read.structuredContent, (await getBatch(svc.url, t.key, batch.id)).body);
  const items = await callTool(svc.url, t.key, 'list_shipment_batch_items', { id: batch.id, status: 'succeeded', limit: 1 });
  assert.deepEqual(
    items.structuredContent,
    (await http(svc.url, 'GET', `/api/v1/shipment-batches/${batch.id}/items?status=succeeded&limit=1`, { token: t.key })).body,
  );
  const cancelled = await callTool(svc.url, t.key, 'cancel_shipment_batch', { id: batch.id });
  assert.deepEqual(cancelled.structuredContent, read.structuredContent, 'a finished batch is answered unchanged');
  const dry = await callTool(svc.url, t.key, 'create_shipment_batch', { items: [{ order_id: orders[0] }], dry_run: true });
  assert.equal(dry.structuredContent.items[0].error.code, 'conflict');
  const bad = await callTool(svc.url, t.key, 'create_shipment_batch', { items: [{ order_id: orders[0] }, { order_id: orders[0] }] });
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent.error, 'VALIDATION_FAILED');
  assert.match(bad.structuredContent.reason, /items\[1\]\.order_id repeats items\[0\]/);
});
