// EXTENSIONS, in the OpenAPI document: every write operation documents the
// Idempotency-Key request header and the Idempotent-Replayed answer header;
// the webhooks section describes a delivery with the X-Merx-* and webhook-*
// headers and the envelope; the events feed names the scopes it accepts; the
// new endpoints are described; and replays and feed pages validate.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { operations } from '../src/app.ts';
import { startTestService, http, type TestService } from './helpers/harness.ts';
import { assertResponseMatches, compileSchema, deref, unresolvedRefs, type OpenApiDoc } from './helpers/openapi-validator.ts';
import { isWriteOp } from './helpers/registry-fixtures.ts';
import { shipTenant, checkoutWith } from './helpers/shipments.ts';

let svc: TestService;
let doc: OpenApiDoc;
before(async () => {
  svc = await startTestService();
  doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
});
after(async () => {
  await svc.close();
});

const operationOf = (method: string, path: string) => doc.paths[path.replace(/:([A-Za-z_]+)/g, '{$1}')][method.toLowerCase()];

test('write operations take Idempotency-Key and document Idempotent-Replayed on their answers; reads do not', () => {
  for (const op of operations.filter((o) => o.rest !== false)) {
    const operation = operationOf(op.method, op.path);
    const header = (operation.parameters ?? []).map((p: any) => deref(doc, p)).find((p: any) => p.in === 'header' && p.name === 'Idempotency-Key');
    const replayed = Object.values<any>(operation.responses).every((r) => deref(doc, r).headers?.['Idempotent-Replayed']);
    if (isWriteOp(op)) {
      assert.ok(header, `${op.name}: Idempotency-Key is documented`);
      assert.equal(header.required, false);
      const validate = compileSchema(doc, header.schema);
      assert.ok(validate('a-key_1!~') && !validate('has space') && !validate('') && !validate('x'.repeat(256)), `${op.name}: the key's shape`);
      assert.ok(replayed, `${op.name}: every answer documents Idempotent-Replayed`);
    } else {
      assert.equal(header, undefined, `${op.name} is a read`);
    }
  }
});

test('creates that can be read back document Location on their 201 (a shipment batch, accepted to run, on its 202)', () => {
  for (const op of operations.filter((o) => o.location)) {
    const created = deref(doc, operationOf(op.method, op.path).responses[String(op.successStatus)]);
    assert.ok(created.headers.Location, `${op.name}: Location`);
  }
  assert.deepEqual(
    operations
      .filter((o) => o.location)
      .map((o) => o.name)
      .sort(),
    ['create_product', 'create_shipment', 'create_shipment_batch'],
  );
});

test('the webhooks section describes a delivery: X-Merx-* and webhook-* headers, and the event envelope', () => {
  const webhooks = doc.webhooks as Record<string, any>;
  assert.ok(webhooks?.event?.post, 'an OpenAPI 3.1 webhooks entry');
  const names = webhooks.event.post.parameters.map((p: any) => p.name);
  for (const name of [
    'X-Merx-Signature',
    'X-Merx-Timestamp',
    'X-Merx-Event-Id',
    'X-Merx-Delivery',
    'webhook-id',
    'webhook-timestamp',
    'webhook-signature',
  ]) {
    assert.ok(names.includes(name), `${name} is described`);
  }
  const envelope = deref(doc, webhooks.event.post.requestBody.content['application/json'].schema);
  assert.deepEqual(Object.keys(envelope.properties).sort(), ['account_id', 'api_version', 'created_at', 'data', 'event', 'id']);
  assert.deepEqual(unresolvedRefs(doc), []);
});

test('the events feed, rotation and self-test are described; the feed names every scope it accepts', () => {
  const feed = operationOf('GET', '/api/v1/events');
  assert.equal(feed['x-required-scope'], 'orders:read');
  assert.deepEqual(feed['x-accepted-scopes'], ['orders:read', 'shipments:read', 'inventory:read']);
  assert.match(feed.description, /any of `orders:read`, `shipments:read`, `inventory:read`/);
  assert.ok(operationOf('POST', '/api/v1/webhooks/:id/rotate-secret'));
  assert.ok(operationOf('POST', '/api/v1/webhooks/:id/verify-signature'));
  assert.match(String((doc.info as any).description), /Idempotency-Key/);
  assert.match(String((doc.info as any).description), /GET \/api\/v1\/events/);
});

test('replayed answers (success and error) and feed pages validate against the document', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  for (const body of [{ order_id: order.id }, { order_id: order.id, bogus: true }]) {
    const headers = { 'Idempotency-Key': `openapi-${Math.random()}` };
    await http(svc.url, 'POST', '/api/v1/shipments', { token: key, body, headers });
    const replay = await http(svc.url, 'POST', '/api/v1/shipments', { token: key, body, headers });
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assertResponseMatches(doc, 'POST', '/api/v1/shipments', replay);
  }
  const page = await http(svc.url, 'GET', '/api/v1/events?limit=2', { token: key });
  assert.equal(page.status, 200);
  assert.ok(page.body.data.length > 0);
  assertResponseMatches(doc, 'GET', '/api/v1/events', page);
});
