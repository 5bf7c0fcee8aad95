// Batches under the scope check and the message limit (SPEC MCP: batches of
// at most 20; Limits: 120 JSON-RPC messages per minute per key, a batch of N
// counts N; GAPS General: the scope check comes before validation and data).
// No batch element skips the scope check, and no element over the limit runs.
// (test/mcp.test.ts has the mixed batch, the 21-message batch and the plain
// 120-per-minute limit.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, freshTenant, outboxEvents, type TestService } from './helpers/harness.ts';
import { rpc, request, notification, toolCall, callTool, assertRefusal, assertToolResultShape } from './helpers/mcp.ts';
import { SCOPES } from '../src/platform/contract/scopes.ts';
import { snapshotAccount } from './helpers/registry-fixtures.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const WITHOUT_ORDERS_WRITE = SCOPES.filter((s) => s !== 'orders:write');

test('a batch of 20 orders:write calls with a key lacking orders:write gets 20 SCOPE refusals, and nothing is written', async () => {
  const { op, accountId, key } = await freshTenant(svc.url, { scopes: WITHOUT_ORDERS_WRITE });
  const own = await op.checkout(accountId);
  const other = await freshTenant(svc.url);
  const foreign = await other.op.checkout(other.accountId);
  const before = await snapshotAccount(svc.service, accountId);
  const foreignBefore = await snapshotAccount(svc.service, other.accountId);

  // Every way an element might hope to get past the check: a valid change, a dry run,
  // a cancel, another account's order, a non-UUID id, an unknown argument, no arguments at all.
  const variants: Array<Record<string, unknown>> = [
    { id: own.id, admin_notes: 'should never be written' },
    { id: own.id, status: 'cancelled' },
    { id: own.id, status: 'shipped', tracking_number: 'NOPE-1', notify_customer: true },
    { id: own.id, admin_notes: 'dry', dry_run: true },
    { id: foreign.id, admin_notes: 'not even yours' },
    { id: 'not-a-uuid', admin_notes: 'bad id' },
    { id: own.id, no_such_field: 1 },
    {},
  ];
  const batch = Array.from({ length: 20 }, (_, i) => toolCall('update_order', variants[i % variants.length], `w${i}`));
  const res = await rpc(svc.url, key, batch);
  assert.equal(res.status, 200, res.text);
  assert.ok(Array.isArray(res.body));
  assert.equal(res.body.length, 20, 'one answer per element');
  assert.deepEqual(
    res.body.map((r: any) => r.id),
    batch.map((m) => m.id),
    'answered in order, each under its own id',
  );
  for (const r of res.body) {
    assert.equal(r.error, undefined, `${r.id}: a refusal is a result, not a protocol error: ${JSON.stringify(r.error)}`);
    assertToolResultShape(r.result);
    assertRefusal(r.result, 'SCOPE');
  }
  assert.deepEqual(await snapshotAccount(svc.service, accountId), before, 'nothing of the batch was written');
  assert.deepEqual(await snapshotAccount(svc.service, other.accountId), foreignBefore);
  assert.equal(res.headers.get('x-ratelimit-remaining'), '100', 'refused elements still count as messages');
});

test('allowed and forbidden elements alternate: each forbidden one is refused wherever it stands, each allowed one answers', async () => {
  const { op, accountId, key } = await freshTenant(svc.url, { scopes: ['orders:read', 'shipments:read'] });
  const order = await op.checkout(accountId);
  const events = await outboxEvents(svc.service, accountId);
  const forbidden: Array<[string, Record<string, unknown>]> = [
    ['update_order', { id: order.id, admin_notes: 'x' }],
    ['create_shipment', { order_id: order.id }],
    ['create_product', { name: 'Fan', price: 1 }],
    ['record_stock_movement', { product_id: order.id, type: 'delivery', qty: 1 }],
    ['create_webhook', { url: 'https://example.com/hook', events: ['order.created'] }],
  ];
  const batch = Array.from({ length: 20 }, (_, i) =>
    i % 2 === 0 ? toolCall('get_order', { id: order.id }, i) : toolCall(...forbidden[((i - 1) / 2) % forbidden.length], i),
  );
  const res = await rpc(svc.url, key, batch);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.length, 20);
  for (const r of res.body) {
    if (r.id % 2 === 0) {
      assert.equal(r.result.isError, false, JSON.stringify(r.result));
      assert.equal(r.result.structuredContent.data.id, order.id);
    } else {
      assertRefusal(r.result, 'SCOPE');
    }
  }
  const after = await callTool(svc.url, key, 'get_order', { id: order.id });
  assert.equal(after.structuredContent.data.admin_notes, null);
  assert.deepEqual(await outboxEvents(svc.service, accountId), events, 'no event from any refused element');
});

test('the limit holds across a batch boundary: a batch straddling message 120 runs its first elements only, then HTTP 429', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  // 110 messages: five batches of 19 requests and one notification (a notification counts too), then ten single pings.
  for (let i = 0; i < 5; i++) {
    const res = await rpc(svc.url, key, [...Array.from({ length: 19 }, () => request('ping')), notification('notifications/initialized')]);
    assert.equal(res.status, 200);
    assert.equal(res.body.length, 19);
    assert.equal(res.headers.get('x-ratelimit-remaining'), String(120 - 20 * (i + 1)));
  }
  for (let i = 0; i < 10; i++) assert.equal((await rpc(svc.url, key, request('ping'))).status, 200);

  // Twenty writes in order on one order: only the first ten may run.
  const batch = Array.from({ length: 20 }, (_, i) => toolCall('update_order', { id: order.id, admin_notes: `write ${i}` }, i));
  const res = await rpc(svc.url, key, batch);
  assert.equal(res.status, 200);
  assert.equal(res.body.length, 20);
  for (const r of res.body) {
    if (r.id < 10) {
      assert.equal(r.result?.isError, false, `element ${r.id} is within the limit: ${JSON.stringify(r)}`);
      assert.equal(r.result.structuredContent.data.admin_notes, `write ${r.id}`);
    } else {
      assert.equal(r.error?.code, -32000, `element ${r.id} is over the limit: ${JSON.stringify(r)}`);
      assert.ok(Number.isInteger(r.error.data.retry_after_sec) && r.error.data.retry_after_sec >= 1);
    }
  }
  assert.equal(res.headers.get('x-ratelimit-remaining'), '0');

  // Nothing past the limit ran; the next message, and the next batch, are refused whole.
  const reader = await op.issueKey(accountId, { scopes: ['orders:read'] });
  const stored = await callTool(svc.url, reader, 'get_order', { id: order.id });
  assert.equal(stored.structuredContent.data.admin_notes, 'write 9');
  for (const payload of [request('ping'), [toolCall('update_order', { id: order.id, admin_notes: 'late' }), request('ping')]]) {
    const late = await rpc(svc.url, key, payload);
    assert.equal(late.status, 429);
    assert.equal(late.body.error.code, -32000);
    assert.ok(Number(late.headers.get('retry-after')) >= 1);
  }
  assert.equal((await callTool(svc.url, reader, 'get_order', { id: order.id })).structuredContent.data.admin_notes, 'write 9');
});
