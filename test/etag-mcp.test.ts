// EXTENSIONS 3 over MCP, through the official SDK client: get_order,
// get_product and get_webhook (and the update tools) give the resource's
// ETag in _meta.etag, the same one REST sends; the update tools honour
// params._meta.if_match, refusing a stale one as PRECONDITION_FAILED in the
// shape of every refusal, and changing nothing (dry runs included).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, outboxEvents, type TestService } from './helpers/harness.ts';
import { connectSdk, structuredOf } from './helpers/sdk-client.ts';
import { assertRefusal } from './helpers/mcp.ts';
import { checkoutWith, shipTenant } from './helpers/shipments.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService({ WORKERS: '0' });
});
after(async () => {
  await svc.close();
});

const ALL_SCOPES = {
  scopes: ['orders:read', 'orders:write', 'shipments:read', 'products:read', 'products:write', 'webhooks:read', 'webhooks:write'],
};

async function restEtag(key: string, path: string) {
  const res = await http(svc.url, 'GET', path, { token: key });
  assert.equal(res.status, 200, res.text);
  return { etag: res.headers.get('etag')!, body: res.body };
}

test('over the SDK: reads give _meta.etag as REST gives ETag; a stale _meta.if_match is refused PRECONDITION_FAILED and changes nothing; the current one and * apply', async () => {
  const { op, accountId, key } = await shipTenant(svc, ALL_SCOPES);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const product = await op.createProduct(accountId, { name: 'Agent mug', sku: `AM-${crypto.randomUUID().slice(0, 6)}` });
  const hook = await http(svc.url, 'POST', '/api/v1/webhooks', {
    token: key,
    body: { url: 'https://93.184.216.34/hooks/merx', events: ['order.created'] },
  });
  assert.equal(hook.status, 201, hook.text);
  const resources = [
    {
      get: 'get_order',
      update: 'update_order',
      id: order.id,
      path: `/api/v1/orders/${order.id}`,
      first: { admin_notes: 'agent one' },
      second: { admin_notes: 'agent two' },
    },
    {
      get: 'get_product',
      update: 'update_product',
      id: product.id,
      path: `/api/v1/products/${product.id}`,
      first: { name: 'One' },
      second: { name: 'Two' },
    },
    {
      get: 'get_webhook',
      update: 'update_webhook',
      id: hook.body.data.id,
      path: `/api/v1/webhooks/${hook.body.data.id}`,
      first: { description: 'one' },
      second: { description: 'two' },
    },
  ];
  const { client, errors, close } = await connectSdk(svc.url, key);
  try {
    const call = (name: string, args: Record<string, unknown>, ifMatch?: string) =>
      client.callTool({ name, arguments: args, ...(ifMatch === undefined ? {} : { _meta: { if_match: ifMatch } }) }) as Promise<any>;
    for (const r of resources) {
      const read = await call(r.get, { id: r.id });
      const rest = await restEtag(key, r.path);
      assert.deepEqual(structuredOf(read), rest.body, `${r.get}: the REST body`);
      assert.equal(read._meta?.etag, rest.etag, `${r.get}: _meta.etag is the REST ETag`);
      const stale = read._meta.etag as string;

      const applied = await call(r.update, { id: r.id, ...r.first }, stale);
      structuredOf(applied);
      const now = await restEtag(key, r.path);
      assert.notEqual(now.etag, stale);
      assert.equal(applied._meta?.etag, now.etag, `${r.update}: _meta.etag is the new version`);

      const eventsBefore = await outboxEvents(svc.service, accountId);
      for (const dryRun of [false, true]) {
        const refused = await call(r.update, { id: r.id, ...r.second, ...(dryRun ? { dry_run: true } : {}) }, stale);
        assertRefusal(refused, 'PRECONDITION_FAILED');
        assert.match(refused.structuredContent.reason, /changed since you read it/);
        assert.equal(refused._meta?.etag, now.etag, 'the refusal names the current version');
      }
      assert.deepEqual(await restEtag(key, r.path), now, `${r.update}: nothing changed`);
      assert.deepEqual(await outboxEvents(svc.service, accountId), eventsBefore, `${r.update}: no event`);

      const dry = await call(r.update, { id: r.id, ...r.second, dry_run: true }, now.etag);
      assert.equal(structuredOf(dry).dry_run, true);
      // An unquoted tag, as an agent may copy it, is the same tag.
      structuredOf(await call(r.update, { id: r.id, ...r.second }, now.etag.slice(1, -1)));
      structuredOf(await call(r.update, { id: r.id, ...r.first }, '*'));
      assertRefusal(await call(r.update, { id: crypto.randomUUID(), ...r.first }, '*'), 'NOT_FOUND');
    }
    const bad = await call('update_order', { id: order.id, admin_notes: 'x' }, 42 as never);
    assertRefusal(bad, 'VALIDATION_FAILED');
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});

test('an MCP update replayed by its idempotency key repeats its _meta.etag; REST replays it as ETag', async () => {
  const { accountId, key } = await shipTenant(svc, ALL_SCOPES);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const idempotencyKey = `mcp-etag-${crypto.randomUUID()}`;
  const { client, close } = await connectSdk(svc.url, key);
  try {
    const params = { name: 'update_order', arguments: { id: order.id, admin_notes: 'kept' }, _meta: { idempotency_key: idempotencyKey } };
    const first = (await client.callTool(params)) as any;
    structuredOf(first);
    assert.match(first._meta?.etag ?? '', /^"[A-Za-z0-9_-]+"$/);
    const again = (await client.callTool(params)) as any;
    assert.deepEqual(again._meta, { etag: first._meta.etag, idempotent_replayed: true, request_id: again._meta.request_id });
    const viaRest = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, {
      token: key,
      body: { admin_notes: 'kept' },
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    assert.equal(viaRest.headers.get('idempotent-replayed'), 'true');
    assert.equal(viaRest.headers.get('etag'), first._meta.etag);
  } finally {
    await close();
  }
});
