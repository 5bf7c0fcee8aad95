// OPERATOR_API.md: the operator API that provisions accounts, keys, pages,
// checkouts and bulk data, with its own token and OpenAPI document.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, freshTenant, operator, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError, assertOrderView, assertSameSet, ISO_RE, listIds, PRESET_SCOPES, UUID_RE } from './helpers/contract.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const ACCOUNT_FIELDS = ['active', 'created_at', 'default_threshold', 'email', 'id', 'name', 'notification_settings', 'plan'];
const KEY_FIELDS = ['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at', 'scopes', 'writes'];
const admin = (method: string, path: string, body?: unknown) => http(svc.url, method, `/admin/api${path}`, { token: ADMIN_TOKEN, body });

function assertAccountView(account: any): void {
  assert.deepEqual(Object.keys(account).sort(), ACCOUNT_FIELDS);
  assert.match(account.id, UUID_RE);
  assert.match(account.created_at, ISO_RE);
  assert.ok(['free', 'pro', 'business'].includes(account.plan));
  assert.equal(typeof account.active, 'boolean');
  assert.ok(Number.isInteger(account.default_threshold));
  assert.deepEqual(Object.keys(account.notification_settings).sort(), ['email_on_shipped', 'sms_on_shipped']);
}

test('the operator API needs the admin token: 401 without it, with a wrong one, or with an API key', async () => {
  const { accountId, key } = await freshTenant(svc.url);
  const routes: Array<[string, string, unknown?]> = [
    ['POST', '/accounts', { name: 'X', email: 'x@example.com' }],
    ['GET', `/accounts/${accountId}`],
    ['PATCH', `/accounts/${accountId}`, { plan: 'free' }],
    ['POST', `/accounts/${accountId}/keys`, { name: 'k', preset: 'fulfilment' }],
    ['GET', `/accounts/${accountId}/keys`],
    ['DELETE', `/keys/${crypto.randomUUID()}`],
    ['POST', `/accounts/${accountId}/pages`, { title: 'T', product_ids: [] }],
    ['POST', `/accounts/${accountId}/orders`, {}],
    ['POST', `/accounts/${accountId}/seed`, { orders: 1, products: 1 }],
    ['GET', `/accounts/${accountId}/messages`],
    ['PUT', '/faults', { plan_lookup: 'fail' }],
  ];
  for (const [method, path, body] of routes) {
    for (const [label, token] of [
      ['none', undefined],
      ['wrong', `${ADMIN_TOKEN}x`],
      ['short', 'nope'],
      ['api key', key],
    ] as const) {
      const res = await http(svc.url, method, `/admin/api${path}`, { token, body });
      assertError(res, 401, 'unauthorized', `${method} ${path} token=${label}`);
    }
  }
  // Nothing was changed by the refused calls.
  const account = await admin('GET', `/accounts/${accountId}`);
  assert.equal(account.body.data.plan, 'pro');
  assert.equal((await admin('GET', `/accounts/${accountId}/keys`)).body.data.length, 1);
  // And the admin token is not an API key.
  assertError(await http(svc.url, 'GET', '/api/v1/orders', { token: ADMIN_TOKEN }), 401, 'unauthorized', 'admin token on the public API');
  assert.equal((await http(svc.url, 'GET', '/api/v1/orders', { token: key })).status, 200, 'the plan fault was never set');
});

test('accounts: create (defaults and given values), get, patch; the view is exactly {id,name,email,plan,active,default_threshold,notification_settings,created_at}', async () => {
  const created = await admin('POST', '/accounts', { name: 'Shop One', email: 'one@example.com' });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(Object.keys(created.body), ['data']);
  const account = created.body.data;
  assertAccountView(account);
  assert.equal(account.name, 'Shop One');
  assert.equal(account.email, 'one@example.com');
  assert.equal(account.plan, 'pro', 'plan defaults to pro');
  assert.equal(account.active, true);
  assert.equal(account.default_threshold, 5, 'default_threshold defaults to 5');
  assert.deepEqual(account.notification_settings, { email_on_shipped: true, sms_on_shipped: false });

  const full = await admin('POST', '/accounts', {
    name: 'Shop Two',
    email: 'two@example.com',
    plan: 'business',
    default_threshold: 12,
    notification_settings: { email_on_shipped: false, sms_on_shipped: true },
  });
  assert.equal(full.status, 201, full.text);
  assertAccountView(full.body.data);
  assert.equal(full.body.data.plan, 'business');
  assert.equal(full.body.data.default_threshold, 12);
  assert.deepEqual(full.body.data.notification_settings, { email_on_shipped: false, sms_on_shipped: true });

  const got = await admin('GET', `/accounts/${account.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.body, { data: account });

  const patched = await admin('PATCH', `/accounts/${account.id}`, {
    name: 'Shop Renamed',
    email: 'new@example.com',
    plan: 'free',
    active: false,
    default_threshold: 0,
    notification_settings: { email_on_shipped: false, sms_on_shipped: true },
  });
  assert.equal(patched.status, 200, patched.text);
  assertAccountView(patched.body.data);
  assert.deepEqual(patched.body.data, {
    ...account,
    name: 'Shop Renamed',
    email: 'new@example.com',
    plan: 'free',
    active: false,
    default_threshold: 0,
    notification_settings: { email_on_shipped: false, sms_on_shipped: true },
  });
  assert.deepEqual((await admin('GET', `/accounts/${account.id}`)).body.data, patched.body.data);
  const partial = await admin('PATCH', `/accounts/${account.id}`, { plan: 'pro' });
  assert.equal(partial.body.data.plan, 'pro');
  assert.equal(partial.body.data.name, 'Shop Renamed', 'other fields are kept');

  assertError(await admin('GET', `/accounts/${crypto.randomUUID()}`), 404, 'not_found', 'unknown account');
  assertError(await admin('PATCH', `/accounts/${crypto.randomUUID()}`, { plan: 'pro' }), 404, 'not_found', 'patch unknown account');
  assertError(await admin('GET', '/accounts/not-a-uuid'), 400, 'validation_failed', 'non-UUID account id');
});

test('operator bodies are validated: unknown fields and bad values are 400', async () => {
  const op = operator(svc.url);
  const account = await op.createAccount();
  const cases: Array<[string, string, unknown]> = [
    ['POST', '/accounts', { name: 'X', email: 'x@example.com', owner: 'me' }],
    ['POST', '/accounts', { name: 'X', email: 'x@example.com', plan: 'gold' }],
    ['POST', '/accounts', { email: 'x@example.com' }],
    ['POST', '/accounts', { name: 'X', email: 'x@example.com', notification_settings: { email_on_shipped: true, push: true } }],
    ['POST', '/accounts', { name: 'X', email: 'x@example.com', default_threshold: -1 }],
    ['PATCH', `/accounts/${account.id}`, { id: crypto.randomUUID() }],
    ['PATCH', `/accounts/${account.id}`, { active: 'no' }],
    ['POST', `/accounts/${account.id}/keys`, { name: 'k', preset: 'fulfilment', expires: 'never' }],
    ['POST', `/accounts/${account.id}/keys`, { name: 'k', preset: 'fulfilment', scopes: ['orders:read'] }],
    ['POST', `/accounts/${account.id}/pages`, { title: 'T', product_ids: ['nope'] }],
    ['POST', `/accounts/${account.id}/pages`, { title: 'T', product_ids: [], theme: 'dark' }],
    ['PUT', '/faults', { plan_lookup: 'sometimes' }],
    ['PUT', '/faults', { plan_lookup: 'ok', courier: 'fail' }],
    ['POST', `/accounts/${account.id}/seed`, { orders: 1, products: 1, extra: true }],
  ];
  for (const [method, path, body] of cases) {
    assertError(await admin(method, path, body), 400, 'validation_failed', `${method} ${path} ${JSON.stringify(body)}`);
  }
  const unknownField = await admin('POST', '/accounts', { name: 'X', email: 'x@example.com', owner: 'me' });
  const allowed = unknownField.body.error.details?.allowed;
  assert.ok(Array.isArray(allowed), 'details.allowed on an unknown field');
  assertSameSet(allowed, ['name', 'email', 'plan', 'default_threshold', 'notification_settings']);
  assert.deepEqual((await admin('GET', `/accounts/${account.id}`)).body.data, account, 'nothing changed');
});

test('keys: issue (201, shown once), list, revoke; revoked keys stay listed with revoked_at', async () => {
  const op = operator(svc.url);
  const account = await op.createAccount();
  const issued = await admin('POST', `/accounts/${account.id}/keys`, { name: 'erp', preset: 'read_only' });
  assert.equal(issued.status, 201, issued.text);
  assert.deepEqual(Object.keys(issued.body).sort(), ['data', 'key']);
  assert.deepEqual(Object.keys(issued.body.data).sort(), KEY_FIELDS);
  assert.deepEqual([...issued.body.data.scopes].sort(), [...PRESET_SCOPES.read_only].sort());
  assert.equal(issued.body.data.prefix, issued.body.key.slice(0, 11));
  assert.match(issued.body.data.created_at, ISO_RE);

  const second = await admin('POST', `/accounts/${account.id}/keys`, { name: 'wms', scopes: ['orders:read', 'orders:write'] });
  assert.equal(second.status, 201);
  assert.notEqual(second.body.key, issued.body.key);

  const list = await admin('GET', `/accounts/${account.id}/keys`);
  assert.equal(list.status, 200);
  assert.deepEqual(Object.keys(list.body), ['data']);
  assertSameSet(
    list.body.data.map((k: any) => k.id),
    [issued.body.data.id, second.body.data.id],
  );
  for (const k of list.body.data) assert.deepEqual(Object.keys(k).sort(), KEY_FIELDS);
  assert.ok(!list.text.includes(issued.body.key) && !list.text.includes(second.body.key));

  const revoked = await admin('DELETE', `/keys/${issued.body.data.id}`);
  assert.equal(revoked.status, 200, revoked.text);
  assert.deepEqual(Object.keys(revoked.body.data).sort(), KEY_FIELDS);
  assert.match(revoked.body.data.revoked_at, ISO_RE);
  assert.equal(revoked.body.data.id, issued.body.data.id);
  assertError(await http(svc.url, 'GET', '/api/v1/orders', { token: issued.body.key }), 401, 'unauthorized', 'revoked key');
  assert.equal((await http(svc.url, 'GET', '/api/v1/orders', { token: second.body.key })).status, 200);
  const after = (await admin('GET', `/accounts/${account.id}/keys`)).body.data;
  assert.match(after.find((k: any) => k.id === issued.body.data.id).revoked_at, ISO_RE);
  assert.equal(after.find((k: any) => k.id === second.body.data.id).revoked_at, null);

  assertError(await admin('DELETE', `/keys/${crypto.randomUUID()}`), 404, 'not_found', 'unknown key');
  assertError(await admin('DELETE', '/keys/not-a-uuid'), 400, 'validation_failed', 'non-UUID key id');
  assertError(
    await admin('POST', `/accounts/${crypto.randomUUID()}/keys`, { name: 'k', preset: 'fulfilment' }),
    404,
    'not_found',
    'keys of an unknown account',
  );
  assertError(await admin('GET', `/accounts/${crypto.randomUUID()}/keys`), 404, 'not_found', 'list keys of an unknown account');
});

test('pages: create returns {id, title, product_ids, public_url}; checkout accepts only own pages', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const product = await op.createProduct(accountId);
  const res = await admin('POST', `/accounts/${accountId}/pages`, { title: 'Summer sale', product_ids: [product.id] });
  assert.equal(res.status, 201, res.text);
  const page = res.body.data;
  assert.deepEqual(Object.keys(page).sort(), ['id', 'product_ids', 'public_url', 'title']);
  assert.match(page.id, UUID_RE);
  assert.equal(page.title, 'Summer sale');
  assert.deepEqual(page.product_ids, [product.id]);
  assert.equal(typeof page.public_url, 'string');
  assert.ok(page.public_url.length > 0);

  const order = await op.checkout(accountId, { page_id: page.id });
  assert.equal(order.page_id, page.id);
  assertSameSet(await listIds(svc.url, key, { page_id: page.id }), [order.id]);

  const other = await freshTenant(svc.url);
  const theirPage = await other.op.createPage(other.accountId, []);
  const foreign = await admin('POST', `/accounts/${accountId}/orders`, {
    page_id: theirPage.id,
    customer: { name: 'A', email: 'a@example.com', phone: '1' },
    shipping: { address: 'a', city: 'b', zip: 'c' },
    legacy: { product_name: 'Mug', quantity: 1, unit_price: 1 },
    payment_method: 'cod',
  });
  assert.ok([400, 404].includes(foreign.status), `another account's page is refused: ${foreign.status}`);
  assertError(
    await admin('POST', `/accounts/${crypto.randomUUID()}/pages`, { title: 'T', product_ids: [] }),
    404,
    'not_found',
    'page for an unknown account',
  );
});

test('checkout: 201 {data: Order}; validation of products, line items vs legacy, required fields', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const product = await op.createProduct(accountId, { name: 'Lamp', price: 40, sku: 'LMP-1' });
  const other = await freshTenant(svc.url);
  const theirProduct = await other.op.createProduct(other.accountId);
  const base = {
    customer: { name: 'Ana', email: 'ana@example.com', phone: '+359888000111' },
    shipping: { address: 'ul. Vitosha 1', city: 'Sofia', zip: '1000' },
    payment_method: 'cod',
  };
  const ok = await admin('POST', `/accounts/${accountId}/orders`, { ...base, line_items: [{ product_id: product.id, qty: 2 }] });
  assert.equal(ok.status, 201, ok.text);
  assert.deepEqual(Object.keys(ok.body), ['data']);
  assertOrderView(ok.body.data, 'checkout');
  assert.equal(ok.body.data.status, 'new');
  assert.equal(ok.body.data.total, 80);
  assert.equal(ok.body.data.payment_status, 'pending');
  const explicitTotal = await admin('POST', `/accounts/${accountId}/orders`, {
    ...base,
    legacy: { product_name: 'X', quantity: 2, unit_price: 10 },
    total: 5,
  });
  assert.equal(explicitTotal.body.data.total, 5, 'an operator-given total wins');

  const bad: Array<[string, unknown]> = [
    ['unknown product id', { ...base, line_items: [{ product_id: crypto.randomUUID(), qty: 1 }] }],
    ["another account's product", { ...base, line_items: [{ product_id: theirProduct.id, qty: 1 }] }],
    ['neither line_items nor legacy', { ...base }],
    ['empty line_items', { ...base, line_items: [] }],
    [
      'both line_items and legacy',
      { ...base, line_items: [{ product_id: product.id, qty: 1 }], legacy: { product_name: 'X', quantity: 1, unit_price: 1 } },
    ],
    ['qty 0', { ...base, line_items: [{ product_id: product.id, qty: 0 }] }],
    ['non-UUID product id', { ...base, line_items: [{ product_id: 'lamp', qty: 1 }] }],
    ['unknown variant', { ...base, line_items: [{ product_id: product.id, variant_id: crypto.randomUUID(), qty: 1 }] }],
    ['missing customer', { shipping: base.shipping, payment_method: 'cod', legacy: { product_name: 'X', quantity: 1, unit_price: 1 } }],
    ['missing payment_method', { customer: base.customer, shipping: base.shipping, legacy: { product_name: 'X', quantity: 1, unit_price: 1 } }],
    ['unknown field', { ...base, legacy: { product_name: 'X', quantity: 1, unit_price: 1 }, utm_source: 'ads' }],
    ['lenient created_at', { ...base, legacy: { product_name: 'X', quantity: 1, unit_price: 1 }, created_at: '2026-01-05 10:00' }],
    [
      'bad delivery mode',
      { ...base, shipping: { ...base.shipping, courier_delivery_mode: 'drone' }, legacy: { product_name: 'X', quantity: 1, unit_price: 1 } },
    ],
  ];
  for (const [name, body] of bad) {
    assertError(await admin('POST', `/accounts/${accountId}/orders`, body), 400, 'validation_failed', name);
  }
  assertSameSet(await listIds(svc.url, key), [ok.body.data.id, explicitTotal.body.data.id], 'refused checkouts created nothing');
  assertError(
    await admin('POST', `/accounts/${crypto.randomUUID()}/orders`, { ...base, legacy: { product_name: 'X', quantity: 1, unit_price: 1 } }),
    404,
    'not_found',
    'unknown account',
  );
});

test('checkout of a blocked product without stock is 409 and creates no order', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const blocked = await op.createProduct(accountId, { name: 'Rare', sku: 'RARE-1', price: 10, stock_quantity: 0, block_on_zero_stock: true });
  const res = await admin('POST', `/accounts/${accountId}/orders`, {
    customer: { name: 'A', email: 'a@example.com', phone: '1' },
    shipping: { address: 'a', city: 'b', zip: 'c' },
    line_items: [{ product_id: blocked.id, qty: 1 }],
    payment_method: 'cod',
  });
  assertError(res, 409, 'conflict', 'blocked zero-stock product');
  assert.deepEqual(await listIds(svc.url, key), []);
});

test('merchant status, payment and edit routes: 404 for unknown orders, 400 for bad input', async () => {
  const { op, accountId } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  assertError(await admin('POST', `/orders/${crypto.randomUUID()}/status`, { status: 'shipped' }), 404, 'not_found', 'status of unknown order');
  assertError(
    await admin('POST', `/orders/${crypto.randomUUID()}/payment`, { payment_status: 'paid' }),
    404,
    'not_found',
    'payment of unknown order',
  );
  assertError(await admin('PATCH', `/orders/${crypto.randomUUID()}`, { admin_notes: 'x' }), 404, 'not_found', 'edit unknown order');
  assertError(await admin('POST', `/orders/${order.id}/status`, { status: 'lost' }), 400, 'validation_failed', 'bad status');
  assertError(await admin('POST', `/orders/${order.id}/status`, { status: 'shipped', source: 'api' }), 400, 'validation_failed', 'bad source');
  assertError(await admin('PATCH', `/orders/${order.id}`, { status: 'shipped' }), 400, 'validation_failed', 'edit does not take status');
  const moved = await admin('POST', `/orders/${order.id}/status`, { status: 'shipped' });
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.body.data.status, 'shipped');
  assertOrderView(moved.body.data);
  const messages = await op.messages(accountId);
  assert.equal(messages.length, 1, 'a merchant shipped change notifies the customer too');
  assert.deepEqual(Object.keys(messages[0]).sort(), ['body', 'channel', 'created_at', 'id', 'kind', 'subject', 'to']);
});

test('seed {orders: 2000, products: 20}: the API lists all 2000 orders', async () => {
  const { accountId, key } = await freshTenant(svc.url);
  const res = await admin('POST', `/accounts/${accountId}/seed`, { orders: 2000, products: 20 });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, { data: { orders: 2000, products: 20 } });

  const visible = await listIds(svc.url, key);
  const archived = await listIds(svc.url, key, { status: 'archived' });
  assert.equal(new Set(visible).size, visible.length, 'no duplicates across pages');
  assert.equal(visible.length + archived.length, 2000, 'every seeded order is listed (archived behind status=archived)');
  assert.ok(visible.length > 1500, 'most seeded orders are not archived');
  let byStatus = 0;
  for (const status of ['new', 'confirmed', 'processing', 'shipped', 'delivered', 'cancelled', 'returned', 'refunded', 'archived']) {
    byStatus += (await listIds(svc.url, key, { status })).length;
  }
  assert.equal(byStatus, 2000, 'the status filters partition the seeded orders');
  const first = await http(svc.url, 'GET', `/api/v1/orders/${visible[0]}`, { token: key });
  assert.equal(first.status, 200);
  assertOrderView(first.body.data, 'seeded order');
  // Another account sees none of them.
  const other = await freshTenant(svc.url);
  assert.deepEqual(await listIds(svc.url, other.key), []);
  assertError(await admin('POST', `/accounts/${crypto.randomUUID()}/seed`, { orders: 1, products: 1 }), 404, 'not_found', 'seed unknown account');
});

test('GET /admin/api/openapi.json is an OpenAPI 3.1 document of the operator API, apart from the public one', async () => {
  const res = await http(svc.url, 'GET', '/admin/api/openapi.json', { token: ADMIN_TOKEN });
  assert.equal(res.status, 200, res.text.slice(0, 200));
  const doc = res.body;
  assert.match(doc.openapi, /^3\.1\.\d+$/);
  assert.equal(typeof doc.info?.title, 'string');
  assert.equal(typeof doc.info?.version, 'string');
  const paths = Object.keys(doc.paths ?? {});
  for (const p of [
    '/admin/api/accounts',
    '/admin/api/accounts/{id}',
    '/admin/api/accounts/{id}/keys',
    '/admin/api/keys/{id}',
    '/admin/api/accounts/{id}/orders',
    '/admin/api/accounts/{id}/seed',
  ]) {
    assert.ok(paths.includes(p), `operator document lists ${p}: ${paths.join(', ')}`);
  }
  assert.ok(!paths.some((p) => p.startsWith('/api/v1')), 'no public routes in the operator document');

  const pub = await http(svc.url, 'GET', '/api/v1/openapi.json');
  assert.equal(pub.status, 200);
  assert.match(pub.body.openapi, /^3\.1\.\d+$/);
  assert.equal(pub.body.info.version, '1.0.0');
  const publicPaths = Object.keys(pub.body.paths);
  assert.ok(publicPaths.includes('/api/v1/orders'));
  assert.ok(!publicPaths.some((p) => p.startsWith('/admin')), 'the operator API is not part of the public document');
});

test('operator routes answer 405 with Allow for a wrong method and 404 for unknown paths', async () => {
  const res = await http(svc.url, 'DELETE', '/admin/api/accounts', { token: ADMIN_TOKEN });
  assertError(res, 405, 'method_not_allowed', 'DELETE /admin/api/accounts');
  assert.ok((res.headers.get('allow') ?? '').includes('POST'));
  assertError(await http(svc.url, 'GET', '/admin/api/nothing-here', { token: ADMIN_TOKEN }), 404, 'not_found', 'unknown operator path');
});

test('the operator API is not rate limited', async () => {
  const op = operator(svc.url);
  const account = await op.createAccount();
  for (let i = 0; i < 320; i++) {
    const res = await admin('GET', `/accounts/${account.id}`);
    assert.equal(res.status, 200, `operator request ${i + 1}: ${res.text}`);
  }
});

test('GET /metrics serves Prometheus metrics to the operator token only', async () => {
  const anonymous = await http(svc.url, 'GET', '/metrics');
  assert.equal(anonymous.status, 401);
  await http(svc.url, 'GET', '/healthz');
  const res = await http(svc.url, 'GET', '/metrics', { token: ADMIN_TOKEN });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
  assert.match(res.text, /merx_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} \d+/);
  assert.match(res.text, /merx_process_cpu_seconds_total/);
});
