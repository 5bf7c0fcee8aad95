// EXTENSIONS 2, idempotency keys on REST writes and MCP write tools: exact
// replays marked Idempotent-Replayed (nothing runs again: no second waybill,
// movement, event or delivery), 409 on reuse and while the first request
// runs, per-account keys shared by REST and MCP, what is stored and what is
// not, dry runs, key format, expiry, and recovery from a request that died.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, outboxEvents, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { assertRefusal, rpc } from './helpers/mcp.ts';
import { checkoutWith, newParcels, parcelKeys, shipTenant, shipmentRows, withMode } from './helpers/shipments.ts';
import { sinkSubscription, deliveriesOf } from './helpers/webhooks.ts';
import { claimIdempotencyKey } from '../src/platform/operations/idempotency.ts';
import { startHttpsReceiver, type HttpsReceiver } from './helpers/https-receiver.ts';

let svc: TestService;
let receiver: HttpsReceiver;
before(async () => {
  receiver = await startHttpsReceiver();
  process.env.NODE_EXTRA_CA_CERTS = receiver.caFile;
  svc = await startTestService({ COURIER_TIMEOUT_MS: '1500', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
});
after(async () => {
  await svc?.close();
  await receiver?.close();
});

const newKey = () => `key-${crypto.randomUUID()}`;
const post = (key: string, path: string, body: unknown, idempotencyKey?: string, headers: Record<string, string> = {}) =>
  http(svc.url, 'POST', path, {
    token: key,
    body,
    headers: { ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }), ...headers },
  });
const postRaw = (key: string, path: string, rawBody: string, idempotencyKey: string) =>
  http(svc.url, 'POST', path, { token: key, rawBody, headers: { 'content-type': 'application/json', 'Idempotency-Key': idempotencyKey } });

/** tools/call with params._meta (SPEC MCP, EXTENSIONS 2). */
async function toolWithKey(key: string, name: string, args: Record<string, unknown>, idempotencyKey: unknown) {
  const res = await rpc(svc.url, key, {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: args, _meta: { idempotency_key: idempotencyKey } },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.error, undefined, res.text);
  return res.body.result;
}

function assertReplay(first: { status: number; text: string }, again: { status: number; text: string; headers: Headers }, note: string) {
  assert.equal(again.status, first.status, `${note}: same status`);
  assert.equal(again.text, first.text, `${note}: byte-identical body`);
  assert.equal(again.headers.get('idempotent-replayed'), 'true', `${note}: Idempotent-Replayed`);
}

test('a shipment created with a key is replayed exactly, and no second waybill, shipment or event is made (REST, then MCP with the same key)', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const parcelsBefore = await parcelKeys(svc);
  const k = newKey();
  const first = await post(key, '/api/v1/shipments', { order_id: order.id }, k);
  assert.equal(first.status, 201, first.text);
  assert.equal(first.headers.get('idempotent-replayed'), null, 'the first answer is not a replay');
  const eventsAfterFirst = await outboxEvents(svc.service, accountId);

  assert.equal(first.headers.get('location'), `/api/v1/shipments/${first.body.data.id}`, 'a create says where to read what it made');
  const again = await post(key, '/api/v1/shipments', { order_id: order.id }, k);
  assertReplay(first, again, 'REST replay');
  assert.equal(again.headers.get('location'), first.headers.get('location'), 'the replay repeats Location');
  const viaMcp = await toolWithKey(key, 'create_shipment', { order_id: order.id }, k);
  assert.equal(viaMcp.isError, false, JSON.stringify(viaMcp.structuredContent));
  assert.deepEqual(viaMcp.structuredContent, first.body, 'MCP replays what REST answered');
  assert.deepEqual(viaMcp._meta, { idempotent_replayed: true, request_id: viaMcp._meta.request_id });

  assert.equal((await newParcels(svc, parcelsBefore)).length, 1, 'one waybill at the courier');
  assert.equal((await shipmentRows(svc, accountId)).length, 1, 'one shipment');
  assert.deepEqual(await outboxEvents(svc.service, accountId), eventsAfterFirst, 'no event from the replays');
  // Without the key the same request is a new one: the live shipment makes it a 409.
  assertError(await post(key, '/api/v1/shipments', { order_id: order.id }), 409, 'conflict');
});

test('the same key with another body or path is 409 idempotency_key_reused; JSON is compared by meaning (3 equals 3.0, key order is free)', async () => {
  const { op, accountId, key } = await shipTenant(svc);
  const product = await op.createProduct(accountId, { name: 'Idem mug', sku: `IM-${crypto.randomUUID().slice(0, 6)}`, stock_quantity: 10 });
  const k = newKey();
  const first = await postRaw(key, '/api/v1/inventory/movements', `{"product_id":"${product.id}","type":"delivery","qty":3}`, k);
  assert.equal(first.status, 201, first.text);
  const same = await postRaw(key, '/api/v1/inventory/movements', `{ "qty": 3.0, "type": "delivery", "product_id": "${product.id}" }`, k);
  assertReplay(first, same, 'the same JSON written differently');

  const reused = assertError(
    await post(key, '/api/v1/inventory/movements', { product_id: product.id, type: 'delivery', qty: 4 }, k),
    409,
    'conflict',
  );
  assert.equal(reused.details.reason, 'idempotency_key_reused');
  const otherPath = assertError(await post(key, '/api/v1/webhooks', { url: receiver.endpoint().url, events: ['order.created'] }, k), 409, 'conflict');
  assert.equal(otherPath.details.reason, 'idempotency_key_reused');
  const mcpReused = await toolWithKey(key, 'record_stock_movement', { product_id: product.id, type: 'delivery', qty: 9 }, k);
  assertRefusal(mcpReused, 'CONFLICT');
  assert.match(mcpReused.structuredContent.reason, /idempotency_key_reused/);

  const stock = await http(svc.url, 'GET', `/api/v1/inventory/stock?product_id=${product.id}`, { token: key });
  assert.equal(stock.body.data[0].stock_quantity, 13, 'the delivery was applied once');
  const moves = await http(svc.url, 'GET', `/api/v1/inventory/movements?product_id=${product.id}`, { token: key });
  assert.equal(moves.body.data.filter((m: any) => m.type === 'delivery').length, 1, 'one movement');
});

test('400, 404 and 409 answers are stored and replayed; 403, 5xx and per-account 429 are not, and leave the key free', async () => {
  const { op, accountId, key } = await shipTenant(svc);
  // 400: a refused URL, replayed.
  const k400 = newKey();
  const bad = await post(key, '/api/v1/webhooks', { url: 'http://example.com/hook', events: ['order.created'] }, k400);
  assert.equal(bad.status, 400);
  assertReplay(bad, await post(key, '/api/v1/webhooks', { url: 'http://example.com/hook', events: ['order.created'] }, k400), '400');
  // 400 from body validation (an unknown field) is stored too.
  const kField = newKey();
  const fieldBody = { order_id: crypto.randomUUID(), bogus: 1 };
  const unknownField = await post(key, '/api/v1/shipments', fieldBody, kField);
  assert.equal(unknownField.status, 400);
  assertReplay(unknownField, await post(key, '/api/v1/shipments', fieldBody, kField), '400 from validation');
  // A body nested 20,000 deep is refused as it is read, like malformed JSON (issue 27, json_too_deep): before the key
  // is claimed, so nothing is stored, the same body is refused afresh, and the key stays free for a real request.
  const kDeep = newKey();
  const deepBody = `${'['.repeat(20000)}${']'.repeat(20000)}`;
  const deep = await postRaw(key, '/api/v1/shipments', deepBody, kDeep);
  assert.equal(assertError(deep, 400, 'validation_failed', 'a very deep body').details.reason, 'json_too_deep');
  const deepAgain = await postRaw(key, '/api/v1/shipments', deepBody, kDeep);
  assert.equal(assertError(deepAgain, 400, 'validation_failed').details.reason, 'json_too_deep');
  assert.equal(deepAgain.headers.get('idempotent-replayed'), null, 'a deep body is never stored');
  const afterDeep = await post(key, '/api/v1/shipments', { order_id: crypto.randomUUID() }, kDeep);
  assert.equal(afterDeep.status, 404, 'the key was free');
  // 404: no such order, replayed even after such a request would now differ.
  const k404 = newKey();
  const missing = crypto.randomUUID();
  const notFound = await post(key, '/api/v1/shipments', { order_id: missing }, k404);
  assert.equal(notFound.status, 404);
  assertReplay(notFound, await post(key, '/api/v1/shipments', { order_id: missing }, k404), '404');

  // 403: a key without the scope; the same idempotency key then works with the right key.
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const k403 = newKey();
  const readOnly = await op.issueKey(accountId, { preset: 'read_only' });
  assertError(await post(readOnly, '/api/v1/shipments', { order_id: order.id }, k403), 403, 'scope_missing');
  const afterForbidden = await post(key, '/api/v1/shipments', { order_id: order.id }, k403);
  assert.equal(afterForbidden.status, 201, 'a 403 was not stored');
  assert.equal(afterForbidden.headers.get('idempotent-replayed'), null);

  // 502: the courier does not answer; the key stays free and the retry creates the waybill.
  const second = await checkoutWith(svc, accountId, 'courier_b');
  const k502 = newKey();
  const down = await withMode(svc, 'courier_b', 'down', () => post(key, '/api/v1/shipments', { order_id: second.id }, k502));
  assertError(down, 502, 'courier_error');
  const retried = await post(key, '/api/v1/shipments', { order_id: second.id }, k502);
  assert.equal(retried.status, 201, `a 502 was not stored: ${retried.text}`);
  assert.equal(retried.headers.get('idempotent-replayed'), null);
  // 409 (a live shipment now exists) is stored.
  const k409 = newKey();
  const conflict = await post(key, '/api/v1/shipments', { order_id: second.id }, k409);
  assert.equal(conflict.status, 409);
  assertReplay(conflict, await post(key, '/api/v1/shipments', { order_id: second.id }, k409), '409');

  // 429 from the per-account limit of webhook tests (SPEC Limits) is not stored.
  const hook = await sinkSubscription(svc, key, ['order.created']);
  const limited: number[] = [];
  for (let i = 0; i < 31; i++) limited.push((await post(key, `/api/v1/webhooks/${hook.id}/test`, undefined)).status);
  assert.equal(limited.at(-1), 429, `the 31st test in a minute is limited: ${limited.join(',')}`);
  const k429 = newKey();
  assertError(await post(key, `/api/v1/webhooks/${hook.id}/test`, undefined, k429), 429, 'rate_limited');
  const { rows: stored } = await svc.service.db.query('SELECT 1 FROM idempotency_keys WHERE account_id = $1 AND key = $2', [accountId, k429]);
  assert.equal(stored.length, 0, 'a 429 leaves no trace of the key');
});

test('a request running with a key makes a second one 409 idempotency_key_in_use; nothing runs twice however many race for one key', async () => {
  const { accountId, key } = await shipTenant(svc);
  // A webhook test waits for its first attempt; the receiver takes its time, outside any transaction.
  const endpoint = receiver.endpoint('slow');
  endpoint.script([{ status: 200, body: 'slowly', delayMs: 1500 }]);
  const subscribed = await post(key, '/api/v1/webhooks', { url: endpoint.url, events: ['order.created'] });
  assert.equal(subscribed.status, 201, subscribed.text);
  const hook = subscribed.body.data.id;
  const k = newKey();
  const slow = post(key, `/api/v1/webhooks/${hook}/test`, undefined, k);
  await endpoint.waitFor(1);
  const busy = assertError(await post(key, `/api/v1/webhooks/${hook}/test`, undefined, k), 409, 'conflict');
  assert.equal(busy.details.reason, 'idempotency_key_in_use');
  const busyTool = await toolWithKey(key, 'test_webhook', { id: hook }, k);
  assertRefusal(busyTool, 'CONFLICT');
  assert.match(busyTool.structuredContent.reason, /idempotency_key_in_use/);
  const first = await slow;
  assert.equal(first.status, 200, first.text);
  assertReplay(first, await post(key, `/api/v1/webhooks/${hook}/test`, undefined, k), 'after the first finished');
  assert.equal(endpoint.requests.length, 1, 'one delivery reached the receiver');

  // Twelve requests at once, REST and MCP, with one key: one waybill, one answer, the rest replays or in_use.
  const order = await checkoutWith(svc, accountId, 'courier_c');
  const parcelsBefore = await parcelKeys(svc);
  const eventsBefore = (await outboxEvents(svc.service, accountId)).length;
  const race = newKey();
  const outcomes = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      i % 3 === 2
        ? toolWithKey(key, 'create_shipment', { order_id: order.id }, race).then((r) =>
            r.isError ? `mcp:${r.structuredContent.reason.split(':')[0]}` : 'mcp:ok',
          )
        : post(key, '/api/v1/shipments', { order_id: order.id }, race).then((r) =>
            r.status === 201 ? (r.headers.get('idempotent-replayed') ? 'replay' : 'created') : `${r.status}:${r.body.error.details?.reason}`,
          ),
    ),
  );
  const created = outcomes.filter((o) => o === 'created' || o === 'mcp:ok');
  assert.ok(created.length >= 1, JSON.stringify(outcomes));
  assert.ok(
    outcomes.every((o) => ['created', 'replay', 'mcp:ok', '409:idempotency_key_in_use', 'mcp:idempotency_key_in_use'].includes(o)),
    JSON.stringify(outcomes),
  );
  assert.equal((await newParcels(svc, parcelsBefore)).length, 1, 'one waybill');
  assert.equal((await shipmentRows(svc, accountId)).length, 1, 'one shipment');
  assert.equal(
    (await outboxEvents(svc.service, accountId)).length,
    eventsBefore + 3,
    'one set of events (shipment.created, order.updated, order.status_changed)',
  );
});

test('a webhook created with a key shows its secret again to a replay; a test delivery sent with a key is sent once', async () => {
  const { key } = await shipTenant(svc);
  const k = newKey();
  const body = { url: receiver.endpoint('created').url, events: ['order.created'], description: 'idempotent' };
  const created = await post(key, '/api/v1/webhooks', body, k);
  assert.equal(created.status, 201, created.text);
  assertReplay(created, await post(key, '/api/v1/webhooks', body, k), 'webhook creation');
  assert.match(created.body.secret, /^[0-9a-f]{64}$/);
  const list = await http(svc.url, 'GET', '/api/v1/webhooks', { token: key });
  assert.equal(list.body.data.length, 1, 'one subscription');

  const hook = await sinkSubscription(svc, key, ['order.created']);
  const kTest = newKey();
  const sent = await post(key, `/api/v1/webhooks/${hook.id}/test`, undefined, kTest);
  assert.equal(sent.status, 200, sent.text);
  assertReplay(sent, await post(key, `/api/v1/webhooks/${hook.id}/test`, undefined, kTest), 'webhook test');
  const replayedTool = await toolWithKey(key, 'test_webhook', { id: hook.id }, kTest);
  assert.deepEqual(replayedTool._meta, { idempotent_replayed: true, request_id: replayedTool._meta.request_id });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await deliveriesOf(svc.url, key, hook.id)).length, 1, 'one test delivery');
});

test('dry runs neither store nor consume a key; keys are per account; a malformed key is 400 (MCP VALIDATION_FAILED)', async () => {
  const { op, accountId, key } = await shipTenant(svc);
  const product = await op.createProduct(accountId, { name: 'Dry mug', sku: `DM-${crypto.randomUUID().slice(0, 6)}`, stock_quantity: 1 });
  const movement = { product_id: product.id, type: 'delivery', qty: 2 };
  const k = newKey();
  const dry = await post(key, '/api/v1/inventory/movements', movement, k, { 'X-Merx-Dry-Run': '1' });
  assert.equal(dry.status, 200);
  assert.equal(dry.body.dry_run, true);
  const real = await post(key, '/api/v1/inventory/movements', movement, k);
  assert.equal(real.status, 201, 'the dry run did not consume the key');
  assert.equal(real.headers.get('idempotent-replayed'), null);
  const dryAgain = await post(key, '/api/v1/inventory/movements', movement, k, { 'X-Merx-Dry-Run': '1' });
  assert.equal(dryAgain.body.dry_run, true, 'a dry run is never a replay');
  const dryTool = await toolWithKey(key, 'record_stock_movement', { ...movement, dry_run: true }, newKey());
  assert.equal(dryTool.structuredContent.dry_run, true);

  // Another account may use the same key value for its own request.
  const other = await shipTenant(svc);
  const otherProduct = await other.op.createProduct(other.accountId, { name: 'Other mug', sku: 'OM', stock_quantity: 1 });
  const theirs = await post(other.key, '/api/v1/inventory/movements', { ...movement, product_id: otherProduct.id }, k);
  assert.equal(theirs.status, 201);
  assert.equal(theirs.headers.get('idempotent-replayed'), null);

  for (const bad of ['', 'has space', 'x'.repeat(256), 'tab\there']) {
    const res = await post(key, '/api/v1/inventory/movements', movement, bad);
    assertError(res, 400, 'validation_failed', `key ${JSON.stringify(bad)}`);
  }
  assert.equal(
    (await post(key, '/api/v1/inventory/movements', movement, '!~' + 'a'.repeat(253))).status,
    201,
    '255 characters from ! to ~ are a key',
  );
  assertRefusal(await toolWithKey(key, 'record_stock_movement', movement, 'no spaces please'), 'VALIDATION_FAILED');
  assertRefusal(await toolWithKey(key, 'record_stock_movement', movement, 42), 'VALIDATION_FAILED');
  // Reads ignore the header.
  const read = await http(svc.url, 'GET', '/api/v1/orders', { token: key, headers: { 'Idempotency-Key': 'has space' } });
  assert.equal(read.status, 200);
});

test('an answer first given over MCP replays over REST in the REST shape; keys expire after 24 hours and the retention job removes them', async () => {
  const { op, accountId, key } = await shipTenant(svc);
  const product = await op.createProduct(accountId, { name: 'Cross mug', sku: `CM-${crypto.randomUUID().slice(0, 6)}`, stock_quantity: 0 });
  const movement = { product_id: product.id, type: 'delivery', qty: 1 };
  const k = newKey();
  const viaTool = await toolWithKey(key, 'record_stock_movement', movement, k);
  assert.equal(viaTool.isError, false);
  assert.equal(viaTool._meta.idempotent_replayed, undefined, 'a first answer is not marked replayed');
  const viaRest = await post(key, '/api/v1/inventory/movements', movement, k);
  assert.equal(viaRest.status, 201);
  assert.equal(viaRest.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(viaRest.body, viaTool.structuredContent);

  await svc.service.db.query(
    `UPDATE idempotency_keys SET expires_at = now() - interval '1 second', created_at = now() - interval '24 hours' WHERE account_id = $1 AND key = $2`,
    [accountId, k],
  );
  const afterExpiry = await post(key, '/api/v1/inventory/movements', movement, k);
  assert.equal(afterExpiry.status, 201);
  assert.equal(afterExpiry.headers.get('idempotent-replayed'), null, 'an expired key is a new key');
  const stock = await http(svc.url, 'GET', `/api/v1/inventory/stock?product_id=${product.id}`, { token: key });
  assert.equal(stock.body.data[0].stock_quantity, 2);

  await svc.service.db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE account_id = $1`, [accountId]);
  const run = await http(svc.url, 'POST', '/admin/api/jobs/retention/run', { token: ADMIN_TOKEN, body: {} });
  assert.equal(run.status, 200, run.text);
  const { rows } = await svc.service.db.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE account_id = $1', [accountId]);
  assert.equal(rows[0].n, 0, 'expired keys are deleted');
});

test('a request that died: taken over if it committed nothing, never if it did; a request that lost its lease cannot commit', async () => {
  const { op, accountId, key } = await shipTenant(svc);
  const product = await op.createProduct(accountId, { name: 'Lease mug', sku: `LM-${crypto.randomUUID().slice(0, 6)}`, stock_quantity: 0 });
  const movement = { product_id: product.id, type: 'delivery', qty: 1 };
  const stockNow = async () =>
    (await http(svc.url, 'GET', `/api/v1/inventory/stock?product_id=${product.id}`, { token: key })).body.data[0].stock_quantity;

  // A claimed key whose owner stopped renewing its lease, with nothing committed: the next request runs.
  const k = newKey();
  const first = await post(key, '/api/v1/inventory/movements', movement, k);
  assert.equal(first.status, 201);
  const { rows: fp } = await svc.service.db.query('SELECT fingerprint FROM idempotency_keys WHERE account_id = $1 AND key = $2', [accountId, k]);
  const dead = newKey();
  await svc.service.db.query(
    `INSERT INTO idempotency_keys (account_id, key, fingerprint, owner, locked_until, expires_at)
     VALUES ($1, $2, $3, $4, now() - interval '1 second', now() + interval '1 day')`,
    [accountId, dead, fp[0].fingerprint, crypto.randomUUID()],
  );
  const takenOver = await post(key, '/api/v1/inventory/movements', movement, dead);
  assert.equal(takenOver.status, 201, takenOver.text);
  assert.equal(await stockNow(), 2);

  // The same, but its effect had committed: never run again.
  const committed = newKey();
  await svc.service.db.query(
    `INSERT INTO idempotency_keys (account_id, key, fingerprint, owner, locked_until, effect_committed, expires_at)
     VALUES ($1, $2, $3, $4, now() - interval '1 second', true, now() + interval '1 day')`,
    [accountId, committed, fp[0].fingerprint, crypto.randomUUID()],
  );
  const refused = assertError(await post(key, '/api/v1/inventory/movements', movement, committed), 409, 'conflict');
  assert.equal(refused.details.reason, 'idempotency_key_in_use');
  assert.equal(await stockNow(), 2);

  // Fencing: a run whose lease was taken over cannot commit a transaction.
  const fenced = newKey();
  const claim = await claimIdempotencyKey(svc.service.db, accountId, fenced, 'fingerprint-of-a-test');
  assert.ok('run' in claim);
  await svc.service.db.query(`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE account_id = $1 AND key = $2`, [
    accountId,
    fenced,
  ]);
  const successor = await claimIdempotencyKey(svc.service.db, accountId, fenced, 'fingerprint-of-a-test');
  assert.ok('run' in successor, 'the stale claim is taken over');
  await assert.rejects(
    claim.run.fenced().tx((tx) => tx.query(`UPDATE products SET stock_quantity = 99 WHERE id = $1`, [product.id])),
    (err: any) => err.code === 'conflict',
  );
  assert.equal(await stockNow(), 2, 'the fenced-off transaction rolled back');
  await claim.run.abandon();
  await successor.run.abandon();
});
