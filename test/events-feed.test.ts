// EXTENSIONS 1, the events feed: GET /api/v1/events and MCP list_events.
// The envelopes webhooks deliver (byte-identical), oldest first, without test
// events; scopes per resource; filters; a cursor that survives the last page;
// retention and cursor_expired. The concurrency guarantee has its own file.
// Runs on a database of its own: the low-stock and retention jobs act on
// every account.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, outboxEvents, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError, assertScopeMissing, UUID_RE, ISO_RE } from './helpers/contract.ts';
import { callTool, assertRefusal, rpc, request } from './helpers/mcp.ts';
import { isolatedDatabase, sinkSubscription, sinkCaptures, eventually, type IsolatedDatabase } from './helpers/webhooks.ts';
import { checkoutWith, ship, shipTenant } from './helpers/shipments.ts';
import { ENVELOPE_FIELDS, drainFeed, feedPage, feedWhen } from './helpers/events-feed.ts';

let svc: TestService;
let data: IsolatedDatabase;
before(async () => {
  data = await isolatedDatabase();
  svc = await startTestService(data.env);
});
after(async () => {
  await svc?.close();
  await data?.drop();
});

const ALL_READ = [
  'orders:read',
  'orders:write',
  'shipments:read',
  'shipments:write',
  'inventory:read',
  'products:read',
  'webhooks:read',
  'webhooks:write',
];

async function runJob(name: string, now?: string) {
  const res = await http(svc.url, 'POST', `/admin/api/jobs/${name}/run`, { token: ADMIN_TOKEN, body: now ? { now } : {} });
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

function assertEnvelope(event: any, accountId: string) {
  assert.deepEqual(Object.keys(event).sort(), ENVELOPE_FIELDS);
  assert.match(event.id, UUID_RE);
  assert.equal(event.account_id, accountId);
  assert.equal(event.api_version, '2026-09-01');
  assert.match(event.created_at, ISO_RE);
  assert.ok(event.data && typeof event.data === 'object');
}

test('the feed lists the same envelopes webhooks deliver, byte for byte, oldest first, without test events', async () => {
  const { op, accountId, key } = await shipTenant(svc, { scopes: ALL_READ });
  const hook = await sinkSubscription(svc, key, ['order.created', 'order.updated']);
  const first = await checkoutWith(svc, accountId, 'courier_a');
  await checkoutWith(svc, accountId, 'courier_b');
  const patched = await http(svc.url, 'PATCH', `/api/v1/orders/${first.id}`, { token: key, body: { admin_notes: 'feed: same bytes' } });
  assert.equal(patched.status, 200, patched.text);
  const sent = await http(svc.url, 'POST', `/api/v1/webhooks/${hook.id}/test`, { token: key });
  assert.equal(sent.status, 200, sent.text);

  const captures = await eventually(async () => {
    const all = await sinkCaptures(svc.url, hook.id);
    return all.length >= 4 ? all : null;
  }, 'four deliveries at the sink');
  const events = await feedWhen(svc.url, key, (list) => list.length >= 3);
  const outbox = (await outboxEvents(svc.service, accountId)).filter((e: any) => e.event !== 'test');
  assert.deepEqual(
    events.map((e) => e.id),
    outbox.map((e: any) => e.id),
    'every event but test, in the order they were written',
  );
  assert.deepEqual(
    events.map((e) => e.event),
    ['order.created', 'order.created', 'order.updated'],
  );
  for (const event of events) assertEnvelope(event, accountId);
  assert.ok(!events.some((e) => e.event === 'test'), 'test events are not in the feed');

  const page = await feedPage(svc.url, key);
  for (const capture of captures.filter((c) => c.headers['x-merx-event'] !== 'test')) {
    assert.ok(page.text.includes(capture.body), `the delivered body of ${capture.headers['x-merx-event']} appears byte for byte in the feed`);
  }
  void op;
});

test('scopes: each read scope shows its own events; none of the three is 403 orders:read; a type outside the key is 403 naming its scope', async () => {
  const { op, accountId, key } = await shipTenant(svc, { scopes: ALL_READ });
  const order = await checkoutWith(svc, accountId, 'courier_a');
  await ship(svc, key, { order_id: order.id });
  await op.createProduct(accountId, { name: 'Feed kettle', sku: `FK-${crypto.randomUUID().slice(0, 6)}`, stock_quantity: 1 });
  await runJob('low-stock', '2033-06-01T08:00:00Z');
  const all = await feedWhen(
    svc.url,
    key,
    (list) => list.some((e) => e.event === 'inventory.low_stock') && list.some((e) => e.event === 'shipment.created'),
  );
  const names = (list: any[]) => [...new Set(list.map((e) => e.event))].sort();
  assert.deepEqual(names(all), ['inventory.low_stock', 'order.created', 'order.status_changed', 'order.updated', 'shipment.created']);

  const keyWith = (scopes: string[]) => op.issueKey(accountId, { scopes });
  const seen = async (scopes: string[]) => (await drainFeed(svc.url, await keyWith(scopes), null)).events;
  assert.deepEqual(names(await seen(['orders:read'])), ['order.created', 'order.status_changed', 'order.updated']);
  assert.deepEqual(names(await seen(['shipments:read'])), ['shipment.created']);
  assert.deepEqual(names(await seen(['inventory:read'])), ['inventory.low_stock']);
  const both = await seen(['shipments:read', 'inventory:read']);
  assert.deepEqual(
    both.map((e) => e.id),
    all.filter((e) => !e.event.startsWith('order.')).map((e) => e.id),
    'the same order as the full feed',
  );

  const none = await keyWith(['products:read', 'webhooks:read', 'orders:write']);
  assertScopeMissing(await feedPage(svc.url, none), 'orders:read', 'no read scope of the three');
  const shipmentsOnly = await keyWith(['shipments:read']);
  assertScopeMissing(await feedPage(svc.url, shipmentsOnly, { type: 'shipment.created,order.created' }), 'orders:read', 'type outside the key');
  assertScopeMissing(await feedPage(svc.url, await keyWith(['orders:read']), { type: 'inventory.low_stock' }), 'inventory:read', 'low stock');

  // MCP: same scopes, same answer.
  const viaTool = await callTool(svc.url, shipmentsOnly, 'list_events', {});
  assert.equal(viaTool.isError, false, JSON.stringify(viaTool.structuredContent));
  assert.deepEqual(viaTool.structuredContent, (await feedPage(svc.url, shipmentsOnly)).body);
  assertRefusal(await callTool(svc.url, none, 'list_events', {}), 'SCOPE');
  assertRefusal(await callTool(svc.url, shipmentsOnly, 'list_events', { type: 'order.paid' }), 'SCOPE');
  const listed = await rpc(svc.url, shipmentsOnly, request('tools/list'));
  assert.ok(
    listed.body.result.tools.some((t: any) => t.name === 'list_events'),
    'tools/list shows list_events to a key with any of the three scopes',
  );
  const hidden = await rpc(svc.url, none, request('tools/list'));
  assert.ok(!hidden.body.result.tools.some((t: any) => t.name === 'list_events'));
});

test('bad queries are 400: unknown or test types (with details.allowed), unknown parameters, limits, dates, cursors, order ids', async () => {
  const { key } = await shipTenant(svc, { scopes: ALL_READ });
  for (const type of ['order.shipped', 'test', 'order.created,,order.paid', 'order.created,test']) {
    const error = assertError(await feedPage(svc.url, key, { type }), 400, 'validation_failed', `type=${type}`);
    assert.ok(error.details.allowed.includes('order.created') && !error.details.allowed.includes('test'), 'details.allowed lists the feed types');
  }
  for (const query of [
    { bogus: 1 },
    { limit: 0 },
    { limit: 201 },
    { limit: '1e1' },
    { since: 'yesterday' },
    { since: '2026-13-01' },
    { cursor: 'garbage' },
    { cursor: Buffer.from('2026-01-01T00:00:00Z|' + crypto.randomUUID()).toString('base64url') },
    { order_id: 'not-a-uuid' },
  ]) {
    assertError(await feedPage(svc.url, key, query), 400, 'validation_failed', JSON.stringify(query));
  }
  const refused = await callTool(svc.url, key, 'list_events', { cursor: 'garbage' });
  assertRefusal(refused, 'VALIDATION_FAILED');
});

test('filters: type (several), since, and order_id (its shipments included; an order of another account gives [])', async () => {
  const { accountId, key } = await shipTenant(svc, { scopes: ALL_READ });
  const a = await checkoutWith(svc, accountId, 'courier_a');
  const b = await checkoutWith(svc, accountId, 'courier_c');
  const shipment = await ship(svc, key, { order_id: a.id });
  const patched = await http(svc.url, 'PATCH', `/api/v1/orders/${b.id}`, { token: key, body: { admin_notes: 'filters' } });
  assert.equal(patched.status, 200);
  const all = await feedWhen(svc.url, key, (list) => list.length >= 6);

  const onlyTypes = (await drainFeed(svc.url, key, null, { type: 'order.created,shipment.created' })).events;
  assert.deepEqual(
    onlyTypes.map((e) => e.id),
    all.filter((e) => ['order.created', 'shipment.created'].includes(e.event)).map((e) => e.id),
  );

  const ofA = (await drainFeed(svc.url, key, null, { order_id: a.id })).events;
  assert.deepEqual(
    ofA.map((e) => e.id),
    all.filter((e) => (e.data.order?.id ?? e.data.order_id) === a.id).map((e) => e.id),
  );
  assert.ok(
    ofA.some((e) => e.event === 'shipment.created' && e.data.shipment.id === shipment.id),
    "the order's shipment events are included",
  );
  assert.ok(!ofA.some((e) => e.data.order?.id === b.id));

  const other = await shipTenant(svc, { scopes: ALL_READ });
  const foreign = await checkoutWith(svc, other.accountId, 'courier_a');
  const none = await feedPage(svc.url, key, { order_id: foreign.id });
  assert.equal(none.status, 200);
  assert.deepEqual(none.body, { data: [], has_more: false, next_cursor: null });

  const later = all.find((e) => e.event === 'shipment.created')!;
  const since = (await drainFeed(svc.url, key, null, { since: later.created_at })).events;
  assert.ok(since.length > 0 && since.every((e) => e.created_at >= later.created_at), 'since is created_at >=');
  assert.deepEqual(
    since.map((e) => e.id),
    all.filter((e) => e.created_at >= later.created_at).map((e) => e.id),
  );
  const dateOnly = (await drainFeed(svc.url, key, null, { since: '2020-01-01' })).events;
  assert.equal(dateOnly.length, all.length);
});

test('the cursor: null on an empty first page, kept on the last page, given back when nothing is newer, and the followed sequence is the fresh one', async () => {
  const { op, accountId, key } = await shipTenant(svc, { scopes: ALL_READ });
  const empty = await feedPage(svc.url, key);
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body, { data: [], has_more: false, next_cursor: null }, 'a first page with no events at all');

  for (let i = 0; i < 5; i++) await op.checkout(accountId);
  await feedWhen(svc.url, key, (list) => list.length === 5);
  const pages: any[] = [];
  let cursor: string | undefined;
  do {
    const res = await feedPage(svc.url, key, { limit: 2, cursor });
    assert.equal(res.status, 200, res.text);
    pages.push(res.body);
    cursor = res.body.next_cursor;
  } while (pages.at(-1).has_more);
  assert.deepEqual(
    pages.map((p) => p.data.length),
    [2, 2, 1],
  );
  assert.deepEqual(
    pages.map((p) => p.has_more),
    [true, true, false],
  );
  assert.equal(typeof pages[2].next_cursor, 'string', 'the last page still has a cursor to poll with');

  const quiet = await feedPage(svc.url, key, { cursor });
  assert.deepEqual(quiet.body, { data: [], has_more: false, next_cursor: cursor }, 'nothing newer: [] and the same cursor');

  const newer = [await op.checkout(accountId), await op.checkout(accountId)];
  const polled = await eventually(async () => {
    const res = await feedPage(svc.url, key, { cursor: cursor! });
    return res.body.data.length === 2 ? res.body : null;
  }, 'the two newer events');
  assert.deepEqual(
    polled.data.map((e: any) => e.data.order.id),
    newer.map((o) => o.id),
  );
  assert.notEqual(polled.next_cursor, cursor);

  const followed = [...pages.flatMap((p) => p.data), ...polled.data].map((e) => e.id);
  const fresh = (await drainFeed(svc.url, key, null)).events.map((e) => e.id);
  assert.deepEqual(followed, fresh, 'following the cursor gives the same sequence as a later fresh read');
  assert.equal(new Set(fresh).size, 7);
});

test('retention: the job deletes events older than 30 days; a cursor from before them is 400 cursor_expired, a later one still works', async () => {
  const { op, accountId, key } = await shipTenant(svc, { scopes: ALL_READ });
  const orders = [];
  for (let i = 0; i < 4; i++) orders.push(await op.checkout(accountId));
  const events = await feedWhen(svc.url, key, (list) => list.length === 4);
  const afterFirst = (await feedPage(svc.url, key, { limit: 1 })).body.next_cursor;
  const afterThird = (await feedPage(svc.url, key, { limit: 3 })).body.next_cursor;
  const atEnd = (await drainFeed(svc.url, key, null)).cursor!;

  // Events 2 and 3 are 31 days old; the job run with the real clock deletes them.
  await svc.service.db.query(`UPDATE events SET created_at = now() - interval '31 days' WHERE account_id = $1 AND id = ANY($2::uuid[])`, [
    accountId,
    [events[1].id, events[2].id],
  ]);
  const run = await runJob('retention');
  assert.ok(run.processed >= 2, `the retention job deleted the aged events (processed ${run.processed})`);

  const expired = assertError(await feedPage(svc.url, key, { cursor: afterFirst }), 400, 'validation_failed', 'a cursor before deleted events');
  assert.equal(expired.details.reason, 'cursor_expired');
  assertRefusal(await callTool(svc.url, key, 'list_events', { cursor: afterFirst }), 'VALIDATION_FAILED');

  const resumed = await feedPage(svc.url, key, { cursor: afterThird });
  assert.equal(resumed.status, 200, 'a cursor past the deleted events still works');
  assert.deepEqual(
    resumed.body.data.map((e: any) => e.id),
    [events[3].id],
  );
  const polled = await feedPage(svc.url, key, { cursor: atEnd });
  assert.deepEqual(polled.body, { data: [], has_more: false, next_cursor: atEnd });
  const fresh = (await drainFeed(svc.url, key, null)).events.map((e) => e.id);
  assert.deepEqual(fresh, [events[0].id, events[3].id], 'a fresh read starts at the oldest event kept');
  const { rows } = await svc.service.db.query('SELECT count(*)::int AS n FROM events WHERE account_id = $1', [accountId]);
  assert.equal(rows[0].n, 2);
  void orders;
});
