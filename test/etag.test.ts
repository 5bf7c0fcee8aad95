// EXTENSIONS 3, optimistic concurrency over REST: GET and PATCH of an order,
// a product and a webhook subscription carry a strong ETag that changes
// whatever path changed the resource (API, admin, courier push and poll,
// checkout, payment); PATCH with a stale If-Match is 412 precondition_failed
// and changes nothing (dry runs too), `*` matches any existing resource,
// If-None-Match gives 304, and every such answer validates against the
// OpenAPI document.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, outboxEvents, type HttpResult, type TestService } from './helpers/harness.ts';
import { assertResponseMatches, deref, type OpenApiDoc } from './helpers/openapi-validator.ts';
import { checkoutWith, courierReports, ship, shipTenant } from './helpers/shipments.ts';
import { recordMovement } from './helpers/stock.ts';
import { eventually } from './helpers/webhooks.ts';
import { operations } from '../src/app.ts';

let svc: TestService;
let doc: OpenApiDoc;
before(async () => {
  svc = await startTestService({ WORKERS: '0' });
  doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
});
after(async () => {
  await svc.close();
});

const ALL_SCOPES = {
  scopes: [
    'orders:read',
    'orders:write',
    'shipments:read',
    'shipments:write',
    'inventory:read',
    'inventory:write',
    'products:read',
    'products:write',
    'webhooks:read',
    'webhooks:write',
  ],
};
/** A subscription URL that passes the policy without DNS and is never called here. */
const INERT_URL = 'https://93.184.216.34/hooks/merx';
const STRONG_ETAG = /^"[A-Za-z0-9_-]+"$/;

async function tenant() {
  return shipTenant(svc, ALL_SCOPES);
}

/** GET that must answer 200 with a strong ETag; validated against the document. */
async function read(key: string, path: string, headers: Record<string, string> = {}) {
  const res = await http(svc.url, 'GET', path, { token: key, headers });
  assert.equal(res.status, 200, `GET ${path}: ${res.status} ${res.text}`);
  assertResponseMatches(doc, 'GET', path, res);
  const etag = res.headers.get('etag');
  assert.match(etag ?? '', STRONG_ETAG, `GET ${path}: a strong ETag`);
  return { etag: etag!, data: res.body.data, res };
}

function patch(key: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return http(svc.url, 'PATCH', path, { token: key, body, headers });
}

async function newWebhook(key: string) {
  const res = await http(svc.url, 'POST', '/api/v1/webhooks', { token: key, body: { url: INERT_URL, events: ['order.created'] } });
  assert.equal(res.status, 201, res.text);
  return res.body.data as { id: string };
}

/** The order's ETag now, asserting it differs from `previous` (a change by `path` shows). */
async function changedSince(key: string, orderPath: string, previous: string, path: string) {
  const { etag } = await read(key, orderPath);
  assert.notEqual(etag, previous, `the ETag changed after ${path}`);
  return etag;
}

test("an order's ETag is stable while it rests and changes after every path that changes it: API, admin, courier push and poll, payment", async () => {
  const { op, accountId, key } = await tenant();
  for (const slug of ['courier_a', 'courier_c'] as const) {
    const order = await checkoutWith(svc, accountId, slug);
    const path = `/api/v1/orders/${order.id}`;
    let { etag } = await read(key, path);
    assert.equal((await read(key, path)).etag, etag, 'the same resource, the same ETag');

    const patched = await patch(key, path, { admin_notes: `api ${slug}` }, { 'If-Match': etag });
    assert.equal(patched.status, 200, patched.text);
    assertResponseMatches(doc, 'PATCH', path, patched);
    etag = await changedSince(key, path, etag, 'PATCH');
    assert.equal(patched.headers.get('etag'), etag, 'the PATCH answer carries the ETag a GET then shows');

    await op.call('PATCH', `/orders/${order.id}`, { admin_notes: `admin ${slug}` });
    etag = await changedSince(key, path, etag, 'the admin edit (operator PATCH /orders/{id})');
    await op.setStatus(order.id, 'confirmed');
    etag = await changedSince(key, path, etag, 'the admin status change');

    const shipment = await ship(svc, key, { order_id: order.id });
    etag = await changedSince(key, path, etag, 'creating a shipment');
    await courierReports(svc, shipment, 'in_transit');
    etag = await changedSince(key, path, etag, slug === 'courier_c' ? 'the courier push' : 'the courier poll');
    assert.equal((await read(key, path)).data.shipment.status, 'in_transit');

    await op.pay(order.id);
    etag = await changedSince(key, path, etag, 'the payment');
    assert.equal((await read(key, path)).etag, etag);
  }
});

test("a product's ETag changes after an API edit, a stock movement and a checkout that sells it", async () => {
  const { op, accountId, key } = await tenant();
  const product = await op.createProduct(accountId, { name: 'Tagged mug', sku: `TM-${crypto.randomUUID().slice(0, 6)}` });
  const path = `/api/v1/products/${product.id}`;
  let { etag } = await read(key, path);

  const patched = await patch(key, path, { price: 14 }, { 'If-Match': etag });
  assert.equal(patched.status, 200, patched.text);
  assertResponseMatches(doc, 'PATCH', path, patched);
  const afterPatch = await read(key, path);
  assert.notEqual(afterPatch.etag, etag);
  assert.equal(patched.headers.get('etag'), afterPatch.etag);
  etag = afterPatch.etag;

  await recordMovement(svc.url, key, { product_id: product.id, type: 'delivery', qty: 5 });
  const afterDelivery = await read(key, path);
  assert.notEqual(afterDelivery.etag, etag, 'a stock movement changes the product');
  assert.equal(afterDelivery.data.stock_quantity, 5);

  await checkoutWith(svc, accountId, null, { legacy: undefined, line_items: [{ product_id: product.id, qty: 2 }] });
  const afterCheckout = await read(key, path);
  assert.equal(afterCheckout.data.stock_quantity, 3);
  assert.notEqual(afterCheckout.etag, afterDelivery.etag, 'a checkout that sells it changes the product');
});

test('PATCH with a stale If-Match is 412 precondition_failed with details.current_etag and changes nothing, on all three resources', async () => {
  const { accountId, key, op } = await tenant();
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const product = await op.createProduct(accountId, { name: 'Stale mug', sku: `SM-${crypto.randomUUID().slice(0, 6)}` });
  const hook = await newWebhook(key);
  const cases = [
    { path: `/api/v1/orders/${order.id}`, first: { admin_notes: 'first writer' }, second: { admin_notes: 'second writer', status: 'cancelled' } },
    { path: `/api/v1/products/${product.id}`, first: { name: 'First name' }, second: { name: 'Second name', active: false } },
    { path: `/api/v1/webhooks/${hook.id}`, first: { description: 'first writer' }, second: { description: 'second writer', active: false } },
  ];
  for (const { path, first, second } of cases) {
    const { etag: stale } = await read(key, path);
    assert.equal((await patch(key, path, first, { 'If-Match': stale })).status, 200, `${path}: the first writer wins`);
    const now = await read(key, path);
    const eventsBefore = await outboxEvents(svc.service, accountId);

    for (const dryRun of [false, true]) {
      const refused = await patch(key, path, second, { 'If-Match': stale, ...(dryRun ? { 'X-Merx-Dry-Run': '1' } : {}) });
      assert.equal(refused.status, 412, `${path}${dryRun ? ' (dry run)' : ''}: ${refused.text}`);
      assert.equal(refused.body.error.code, 'precondition_failed');
      assert.deepEqual(refused.body.error.details, { current_etag: now.etag });
      assert.equal(refused.headers.get('etag'), now.etag);
      assertResponseMatches(doc, 'PATCH', path, refused);
    }
    // A list of tags and weak tags: none matches strongly.
    assert.equal((await patch(key, path, second, { 'If-Match': `${stale}, "nope"` })).status, 412);
    assert.equal((await patch(key, path, second, { 'If-Match': `W/${now.etag}` })).status, 412, 'a weak tag never matches If-Match');

    const after = await read(key, path);
    assert.deepEqual(after.data, now.data, `${path}: nothing changed`);
    assert.equal(after.etag, now.etag);
    assert.deepEqual(await outboxEvents(svc.service, accountId), eventsBefore, `${path}: no event`);

    const dry = await patch(key, path, second, { 'If-Match': now.etag, 'X-Merx-Dry-Run': '1' });
    assert.equal(dry.status, 200, `a dry run with the current ETag previews: ${dry.text}`);
    assert.equal(dry.body.dry_run, true);
    assertResponseMatches(doc, 'PATCH', path, dry);
    assert.equal((await read(key, path)).etag, now.etag, 'the dry run changed nothing');

    const listed = await patch(key, path, second, { 'If-Match': `"nope", ${now.etag}` });
    assert.equal(listed.status, 200, `a list holding the current ETag matches: ${listed.text}`);
    assert.equal(listed.headers.get('etag'), (await read(key, path)).etag);
  }
});

test('If-Match: * matches any existing resource; a missing one is 404 with or without If-Match', async () => {
  const { accountId, key, op } = await tenant();
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const product = await op.createProduct(accountId, { name: 'Star mug', sku: `ST-${crypto.randomUUID().slice(0, 6)}` });
  const hook = await newWebhook(key);
  const resources = [
    { base: '/api/v1/orders', id: order.id, body: { admin_notes: 'star' } },
    { base: '/api/v1/products', id: product.id, body: { name: 'Star' } },
    { base: '/api/v1/webhooks', id: hook.id, body: { description: 'star' } },
  ];
  for (const { base, id, body } of resources) {
    const res = await patch(key, `${base}/${id}`, body, { 'If-Match': '*' });
    assert.equal(res.status, 200, `${base}: ${res.text}`);
    assert.equal(res.headers.get('etag'), (await read(key, `${base}/${id}`)).etag);
    const missing = `${base}/${crypto.randomUUID()}`;
    for (const headers of [{ 'If-Match': '*' }, { 'If-Match': '"abc"' }, { 'If-Match': '*', 'X-Merx-Dry-Run': '1' }, {}] as Array<
      Record<string, string>
    >) {
      const gone = await patch(key, missing, body, headers);
      assert.equal(gone.status, 404, `${missing} ${JSON.stringify(headers)}: ${gone.text}`);
      assert.equal(gone.body.error.code, 'not_found');
      assertResponseMatches(doc, 'PATCH', missing, gone);
    }
  }
  // Another account's order is missing too: its ETag is not disclosed.
  const other = await tenant();
  const theirs = await patch(other.key, `/api/v1/orders/${order.id}`, { admin_notes: 'x' }, { 'If-Match': '"abc"' });
  assert.equal(theirs.status, 404);
  assert.equal(theirs.headers.get('etag'), null);
});

test('GET with a matching If-None-Match is 304 with no body; another tag is a full 200', async () => {
  const { accountId, key, op } = await tenant();
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const product = await op.createProduct(accountId, { name: 'Cached mug', sku: `CM-${crypto.randomUUID().slice(0, 6)}` });
  const hook = await newWebhook(key);
  for (const path of [`/api/v1/orders/${order.id}`, `/api/v1/products/${product.id}`, `/api/v1/webhooks/${hook.id}`]) {
    const { etag, data } = await read(key, path);
    for (const value of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const cached = await http(svc.url, 'GET', path, { token: key, headers: { 'If-None-Match': value } });
      assert.equal(cached.status, 304, `${path} If-None-Match ${value}`);
      assert.equal(cached.text, '', '304 has no body');
      assert.equal(cached.headers.get('etag'), etag);
      assertResponseMatches(doc, 'GET', path, cached);
    }
    const fresh = await read(key, path, { 'If-None-Match': '"other"' });
    assert.deepEqual(fresh.data, data);
  }
});

test('GET /api/v1/webhooks/{id} answers {data: subscription} as the list shows it; webhooks:read is required', async () => {
  const { key, accountId, op } = await tenant();
  const hook = await newWebhook(key);
  const { data } = await read(key, `/api/v1/webhooks/${hook.id}`);
  const listed = await http(svc.url, 'GET', '/api/v1/webhooks', { token: key });
  assert.deepEqual(
    data,
    listed.body.data.find((s: any) => s.id === hook.id),
  );
  assert.equal('secret' in data, false, 'never the secret');
  const writeOnly = await op.issueKey(accountId, { scopes: ['webhooks:write'] });
  const refused = await http(svc.url, 'GET', `/api/v1/webhooks/${hook.id}`, { token: writeOnly });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error.scope, 'webhooks:read');
  const missing = await http(svc.url, 'GET', `/api/v1/webhooks/${crypto.randomUUID()}`, { token: key });
  assert.equal(missing.status, 404);
  assertResponseMatches(doc, 'GET', `/api/v1/webhooks/${hook.id}`, missing);
});

test('two concurrent PATCHes with the same If-Match: exactly one applies, the other is 412', async () => {
  const { accountId, key } = await tenant();
  for (let round = 0; round < 3; round++) {
    const order = await checkoutWith(svc, accountId, 'courier_a');
    const path = `/api/v1/orders/${order.id}`;
    const { etag } = await read(key, path);
    const answers = await Promise.all(['left', 'right', 'middle'].map((who) => patch(key, path, { admin_notes: who }, { 'If-Match': etag })));
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, 412, 412], answers.map((a) => a.text).join('\n'));
    const winner = answers.find((a) => a.status === 200)!;
    const now = await read(key, path);
    assert.equal(now.data.admin_notes, winner.body.data.admin_notes, 'the one that applied is what the order holds');
    const updates = (await outboxEvents(svc.service, accountId)).filter((e: any) => e.event === 'order.updated' && e.data.order.id === order.id);
    assert.equal(updates.length, 1, 'one change, one event');
  }
});

test('an idempotent PATCH replay repeats the ETag of the first answer', async () => {
  const { accountId, key } = await tenant();
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const path = `/api/v1/orders/${order.id}`;
  const { etag } = await read(key, path);
  const headers = { 'If-Match': etag, 'Idempotency-Key': `etag-${crypto.randomUUID()}` };
  const first = await patch(key, path, { admin_notes: 'once' }, headers);
  assert.equal(first.status, 200, first.text);
  const again = await patch(key, path, { admin_notes: 'once' }, headers);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.equal(again.text, first.text);
  assert.match(first.headers.get('etag') ?? '', STRONG_ETAG);
  assert.equal(again.headers.get('etag'), first.headers.get('etag'), 'the replay carries the ETag');

  // A 412 is stored and replayed too, with the ETag that was current then.
  const staleHeaders = { 'If-Match': etag, 'Idempotency-Key': `etag-${crypto.randomUUID()}` };
  const refused = await patch(key, path, { admin_notes: 'twice' }, staleHeaders);
  assert.equal(refused.status, 412);
  const refusedAgain = await patch(key, path, { admin_notes: 'twice' }, staleHeaders);
  assert.equal(refusedAgain.headers.get('idempotent-replayed'), 'true');
  assert.equal(refusedAgain.text, refused.text);
  assert.equal(refusedAgain.headers.get('etag'), refused.headers.get('etag'));
});

test('the document declares If-Match and 412 on exactly the versioned writes; ETag, If-None-Match and 304 on every JSON read', () => {
  const operationOf = (method: string, path: string) => doc.paths[path.replace(/:([A-Za-z_]+)/g, '{$1}')][method.toLowerCase()];
  const versioned = operations
    .filter((op) => op.etag)
    .map((op) => op.name)
    .sort();
  assert.deepEqual(versioned, ['get_order', 'get_product', 'get_webhook', 'update_order', 'update_product', 'update_webhook']);
  let reads = 0;
  for (const op of operations.filter((o) => o.rest !== false)) {
    const operation = operationOf(op.method, op.path);
    const headerNames = (operation.parameters ?? [])
      .map((p: any) => deref(doc, p))
      .filter((p: any) => p.in === 'header')
      .map((p: any) => p.name);
    const responses = operation.responses as Record<string, any>;
    const isRead = op.annotations.readOnlyHint;
    const note = op.name;
    if (op.etag && !isRead) {
      assert.ok(headerNames.includes('If-Match') && !headerNames.includes('If-None-Match'), `${note}: If-Match`);
      assert.ok(deref(doc, responses['200']).headers.ETag, `${note}: ETag on 200`);
      assert.ok(deref(doc, responses['412']).headers.ETag, `${note}: ETag on 412`);
      assert.equal(responses['304'], undefined, note);
    } else if (isRead && op.method === 'GET' && !op.produces) {
      reads++;
      assert.ok(headerNames.includes('If-None-Match') && !headerNames.includes('If-Match'), `${note}: If-None-Match`);
      assert.ok(deref(doc, responses['200']).headers.ETag, `${note}: ETag on 200`);
      assert.ok(deref(doc, responses['304']).headers.ETag, `${note}: 304 with its ETag`);
      assert.equal(responses['412'], undefined, note);
    } else {
      assert.ok(!headerNames.includes('If-Match') && !headerNames.includes('If-None-Match'), `${note}: no conditional header`);
      assert.equal(responses['304'], undefined, note);
      assert.equal(responses['412'], undefined, note);
      assert.equal(deref(doc, responses[String(op.successStatus ?? 200)]).headers?.ETag, undefined, `${note}: no ETag`);
    }
  }
  assert.ok(reads >= 14, `every JSON read is covered (${reads})`);
  assert.match(String(doc.info.description), /precondition_failed/);
});

test('a poller: every list answers with an ETag of its bytes, 304 with no body while nothing changed, a new tag once something did', async () => {
  const { accountId, key, op } = await tenant();
  await checkoutWith(svc, accountId, 'courier_a');
  const hook = await newWebhook(key);
  const paths = [
    '/api/v1/orders?limit=5',
    '/api/v1/products',
    '/api/v1/inventory/stock',
    '/api/v1/inventory/movements',
    '/api/v1/webhooks',
    `/api/v1/webhooks/${hook.id}/deliveries`,
    '/api/v1/events?limit=5',
  ];
  const tags = new Map<string, string>();
  for (const path of paths) {
    const first = await read(key, path);
    const again = await read(key, path);
    assert.equal(again.etag, first.etag, `${path}: the same bytes, the same tag`);
    assert.equal(again.res.text, first.res.text);
    for (const value of [first.etag, `W/${first.etag}`, `"other", ${first.etag}`]) {
      const cached = await http(svc.url, 'GET', path, { token: key, headers: { 'If-None-Match': value } });
      assert.equal(cached.status, 304, `${path} If-None-Match ${value}`);
      assert.equal(cached.text, '', '304 has no body');
      assert.equal(cached.headers.get('etag'), first.etag);
      assert.ok(cached.headers.get('x-ratelimit-remaining'), '304 still counts and says so');
      assertResponseMatches(doc, 'GET', path, cached);
    }
    assert.equal((await read(key, path, { 'If-None-Match': '"other"' })).res.text, first.res.text);
    tags.set(path, first.etag);
  }
  // Something new: the order list and the event feed change, and so do their tags.
  await checkoutWith(svc, accountId, 'courier_a');
  await op.createProduct(accountId, { name: 'Poll mug', sku: `PM-${crypto.randomUUID().slice(0, 6)}` });
  for (const path of ['/api/v1/orders?limit=5', '/api/v1/products', '/api/v1/events?limit=5']) {
    const poll = () => http(svc.url, 'GET', path, { token: key, headers: { 'If-None-Match': tags.get(path)! } });
    // The feed shows an event once no transaction still running can precede it (EXTENSIONS 1): on PostgreSQL the
    // suite's other files write to the same database meanwhile, so the new events may take a moment to show.
    const changed = async () => {
      const answer = await poll();
      return answer.status === 304 ? null : answer;
    };
    const stale = path.startsWith('/api/v1/events') ? await eventually(changed, `${path} to change`) : await poll();
    assert.equal(stale.status, 200, `${path}: changed, so a full answer`);
    assert.notEqual(stale.headers.get('etag'), tags.get(path));
    assertResponseMatches(doc, 'GET', path, stale);
  }
});
