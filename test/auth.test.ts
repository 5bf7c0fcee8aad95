// SPEC Authentication, Errors (401/403/429) and Limits (REST rate); GAPS
// "General" (check order) and "Plans and keys"; OPERATOR_API keys and faults.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, freshTenant, operator, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError, assertScopeMissing, assertUnauthorized, ISO_RE, PRESET_SCOPES, sleep, UUID_RE } from './helpers/contract.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function wellFormedUnknownKey(): string {
  let body = '';
  for (const b of crypto.randomBytes(40)) body += ALNUM[b % 62];
  return `merx_${body}`;
}

async function keysOf(accountId: string): Promise<any[]> {
  const res = await http(svc.url, 'GET', `/admin/api/accounts/${accountId}/keys`, { token: ADMIN_TOKEN });
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

test('401 unauthorized for a missing or malformed Authorization header', async () => {
  const { key } = await freshTenant(svc.url);
  const variants: Array<[string, Record<string, string>]> = [
    ['no header', {}],
    ['empty header', { authorization: '' }],
    ['no scheme', { authorization: key }],
    ['Basic scheme', { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` }],
    ['Bearer without a token', { authorization: 'Bearer ' }],
    ['Bearer with a short key', { authorization: 'Bearer merx_abc' }],
    ['Bearer with a key plus a character', { authorization: `Bearer ${key}x` }],
    ['Bearer with the key missing its last character', { authorization: `Bearer ${key.slice(0, -1)}` }],
    ['Bearer with a wrong service prefix', { authorization: `Bearer svc_${key.slice(5)}` }],
    ['Bearer with two tokens', { authorization: `Bearer ${key} ${key}` }],
  ];
  for (const [name, headers] of variants) {
    for (const [method, path] of [
      ['GET', '/api/v1/orders'],
      ['GET', `/api/v1/orders/${crypto.randomUUID()}`],
    ]) {
      const res = await http(svc.url, method, path, { headers });
      assertUnauthorized(res, `${name} ${method} ${path}`);
    }
  }
  // The valid key itself works, so the refusals above are about the header.
  const ok = await http(svc.url, 'GET', '/api/v1/orders', { token: key });
  assert.equal(ok.status, 200);
});

test('401 unauthorized for a well-formed key that was never issued', async () => {
  await freshTenant(svc.url);
  const res = await http(svc.url, 'GET', '/api/v1/orders', { token: wellFormedUnknownKey() });
  assertUnauthorized(res, 'unknown key');
  const patch = await http(svc.url, 'PATCH', `/api/v1/orders/${crypto.randomUUID()}`, { token: wellFormedUnknownKey(), body: { admin_notes: 'x' } });
  assertUnauthorized(patch, 'unknown key on PATCH');
});

test('revocation is immediate: the next request with the key is 401; other keys keep working', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const other = await op.issueKey(accountId, { preset: 'fulfilment' });
  assert.equal((await http(svc.url, 'GET', '/api/v1/orders', { token: key })).status, 200);
  const keys = await keysOf(accountId);
  const target = keys.find((k) => key.startsWith(k.prefix) && k.revoked_at === null && k.prefix === key.slice(0, 11));
  assert.ok(target, 'the key is listed by its prefix');
  const revoked = await http(svc.url, 'DELETE', `/admin/api/keys/${target.id}`, { token: ADMIN_TOKEN });
  assert.equal(revoked.status, 200, revoked.text);
  assert.match(revoked.body.data.revoked_at, ISO_RE);

  assertUnauthorized(await http(svc.url, 'GET', '/api/v1/orders', { token: key }), 'revoked key');
  assertUnauthorized(
    await http(svc.url, 'PATCH', `/api/v1/orders/${crypto.randomUUID()}`, { token: key, body: { admin_notes: 'x' } }),
    'revoked key on PATCH',
  );
  assert.equal((await http(svc.url, 'GET', '/api/v1/orders', { token: other })).status, 200, 'the other key is unaffected');
  const listed = (await keysOf(accountId)).find((k) => k.id === target.id);
  assert.match(listed.revoked_at, ISO_RE);
});

test('a deactivated account gets 401 on every key at once; reactivation restores access', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  assert.equal((await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key })).status, 200);

  const off = await http(svc.url, 'PATCH', `/admin/api/accounts/${accountId}`, { token: ADMIN_TOKEN, body: { active: false } });
  assert.equal(off.status, 200, off.text);
  assert.equal(off.body.data.active, false);
  assertUnauthorized(await http(svc.url, 'GET', '/api/v1/orders', { token: key }), 'deactivated list');
  assertUnauthorized(await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key }), 'deactivated get');
  assertUnauthorized(await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { admin_notes: 'x' } }), 'deactivated patch');
  // Nothing was written by the refused PATCH.
  const on = await http(svc.url, 'PATCH', `/admin/api/accounts/${accountId}`, { token: ADMIN_TOKEN, body: { active: true } });
  assert.equal(on.status, 200);
  const again = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  assert.equal(again.status, 200);
  assert.equal(again.body.data.admin_notes, null);
});

test('403 scope_missing names the required scope; :write never implies :read', async () => {
  const { op, accountId } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const readOnly = await op.issueKey(accountId, { scopes: ['orders:read'] });
  const writeOnly = await op.issueKey(accountId, { scopes: ['orders:write'] });
  const shipmentsOnly = await op.issueKey(accountId, { scopes: ['shipments:read'] });
  const bridge = await op.issueKey(accountId, { preset: 'bridge' });

  assertScopeMissing(
    await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: readOnly, body: { status: 'confirmed' } }),
    'orders:write',
    'orders:read key PATCHing',
  );
  assertScopeMissing(
    await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, {
      token: readOnly,
      body: { status: 'confirmed' },
      headers: { 'x-merx-dry-run': '1' },
    }),
    'orders:write',
    'orders:read key dry-running a PATCH',
  );
  assertScopeMissing(
    await http(svc.url, 'GET', `/api/v1/orders/${order.id}/shipment`, { token: readOnly }),
    'shipments:read',
    'orders:read key on shipment',
  );

  assertScopeMissing(await http(svc.url, 'GET', '/api/v1/orders', { token: writeOnly }), 'orders:read', 'orders:write key listing');
  assertScopeMissing(await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: writeOnly }), 'orders:read', 'orders:write key reading');
  const patched = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: writeOnly, body: { status: 'confirmed' } });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.body.data.status, 'confirmed');

  assertScopeMissing(await http(svc.url, 'GET', '/api/v1/orders', { token: shipmentsOnly }), 'orders:read', 'shipments:read key listing');
  const shipment = await http(svc.url, 'GET', `/api/v1/orders/${order.id}/shipment`, { token: shipmentsOnly });
  assert.equal(shipment.status, 200, shipment.text);
  assert.deepEqual(shipment.body, { data: null });

  assertScopeMissing(await http(svc.url, 'GET', '/api/v1/orders', { token: bridge }), 'orders:read', 'bridge key on REST');

  // The refused PATCH wrote nothing.
  const read = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: readOnly });
  assert.equal(read.body.data.status, 'confirmed');
});

test('403 plan_required for a Free account, on every route; upgrading takes effect at once', async () => {
  const op = operator(svc.url);
  const account = await op.createAccount({ plan: 'free' });
  assert.equal(account.plan, 'free');
  const key = await op.issueKey(account.id, { preset: 'fulfilment' });
  const order = await op.checkout(account.id);
  assertError(await http(svc.url, 'GET', '/api/v1/orders', { token: key }), 403, 'plan_required', 'free list');
  assertError(await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key }), 403, 'plan_required', 'free get');
  assertError(await http(svc.url, 'GET', `/api/v1/orders/${order.id}/shipment`, { token: key }), 403, 'plan_required', 'free shipment');
  assertError(
    await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { status: 'confirmed' } }),
    403,
    'plan_required',
    'free patch',
  );
  for (const plan of ['pro', 'business']) {
    await op.call('PATCH', `/accounts/${account.id}`, { plan });
    const res = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
    assert.equal(res.status, 200, `${plan}: ${res.text}`);
    assert.equal(res.body.data.status, 'new', 'the refused PATCH wrote nothing');
  }
  await op.call('PATCH', `/accounts/${account.id}`, { plan: 'free' });
  assertError(await http(svc.url, 'GET', '/api/v1/orders', { token: key }), 403, 'plan_required', 'downgraded');
});

test('403 plan_lookup_failed when the plan cannot be verified (fail closed), after 401 and scope checks', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const noScope = await op.issueKey(accountId, { scopes: ['webhooks:read'] });
  try {
    const fault = await http(svc.url, 'PUT', '/admin/api/faults', { token: ADMIN_TOKEN, body: { plan_lookup: 'fail' } });
    assert.equal(fault.status, 200, fault.text);
    assert.equal(fault.body.data.plan_lookup, 'fail');

    assertError(await http(svc.url, 'GET', '/api/v1/orders', { token: key }), 403, 'plan_lookup_failed', 'list');
    assertError(await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key }), 403, 'plan_lookup_failed', 'get');
    assertError(
      await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { status: 'shipped' } }),
      403,
      'plan_lookup_failed',
      'patch',
    );
    // Check order: 401 and scope_missing come before the plan.
    assertUnauthorized(await http(svc.url, 'GET', '/api/v1/orders'), 'no key while plan lookups fail');
    assertScopeMissing(await http(svc.url, 'GET', '/api/v1/orders', { token: noScope }), 'orders:read', 'scope while plan lookups fail');
    // Free accounts cannot be verified either: still 403 (fail closed).
    const free = await op.createAccount({ plan: 'free' });
    const freeKey = await op.issueKey(free.id, { preset: 'fulfilment' });
    const freeRes = await http(svc.url, 'GET', '/api/v1/orders', { token: freeKey });
    assert.equal(freeRes.status, 403);
    assert.ok(['plan_lookup_failed', 'plan_required'].includes(freeRes.body.error.code));
  } finally {
    const reset = await http(svc.url, 'PUT', '/admin/api/faults', { token: ADMIN_TOKEN, body: { plan_lookup: 'ok' } });
    assert.equal(reset.status, 200);
    assert.equal(reset.body.data.plan_lookup, 'ok');
  }
  const res = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  assert.equal(res.status, 200);
  assert.equal(res.body.data.status, 'new', 'the refused PATCH wrote nothing');
});

test('check order: 401 before 400, scope before 400, scope before plan, plan before 400, 400 before 404', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const readOnly = await op.issueKey(accountId, { scopes: ['orders:read'] });
  const shipmentsOnly = await op.issueKey(accountId, { scopes: ['shipments:read'] });
  const free = await op.createAccount({ plan: 'free' });
  const freeRead = await op.issueKey(free.id, { scopes: ['orders:read'] });
  const badJson = { rawBody: '{"status": ', headers: { 'content-type': 'application/json' } };

  // No key: 401 whatever else is wrong.
  assertUnauthorized(await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, badJson), 'no key + malformed JSON');
  assertUnauthorized(await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { body: { nope: 1 } }), 'no key + unknown field');
  assertUnauthorized(await http(svc.url, 'GET', '/api/v1/orders/not-a-uuid'), 'no key + bad id');
  assertUnauthorized(await http(svc.url, 'GET', '/api/v1/orders?limit=0&bogus=1'), 'no key + bad query');
  assertUnauthorized(await http(svc.url, 'GET', '/api/v1/orders', { token: wellFormedUnknownKey(), headers: {} }), 'unknown key');

  // Wrong scope: 403 whatever else is wrong.
  assertScopeMissing(
    await http(svc.url, 'PATCH', '/api/v1/orders/not-a-uuid', { token: readOnly, body: { status: 'x' } }),
    'orders:write',
    'scope + bad id',
  );
  assertScopeMissing(
    await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: readOnly, ...badJson }),
    'orders:write',
    'scope + malformed JSON',
  );
  assertScopeMissing(await http(svc.url, 'GET', '/api/v1/orders/not-a-uuid', { token: shipmentsOnly }), 'orders:read', 'scope + bad id (GET)');
  assertScopeMissing(await http(svc.url, 'GET', '/api/v1/orders?limit=abc', { token: shipmentsOnly }), 'orders:read', 'scope + bad query');

  // Free plan and a missing scope: scope_missing first.
  assertScopeMissing(
    await http(svc.url, 'PATCH', `/api/v1/orders/${crypto.randomUUID()}`, { token: freeRead, body: { status: 'shipped' } }),
    'orders:write',
    'free + missing scope',
  );
  // A deactivated Free account: 401 before the plan.
  const freeOff = await op.createAccount({ plan: 'free' });
  const freeOffKey = await op.issueKey(freeOff.id, { preset: 'fulfilment' });
  await op.call('PATCH', `/accounts/${freeOff.id}`, { active: false });
  assertUnauthorized(await http(svc.url, 'GET', '/api/v1/orders', { token: freeOffKey }), 'deactivated + free');
  // Free plan and bad input: plan first.
  assertError(await http(svc.url, 'GET', '/api/v1/orders/not-a-uuid', { token: freeRead }), 403, 'plan_required', 'free + bad id');
  assertError(await http(svc.url, 'GET', '/api/v1/orders?limit=0', { token: freeRead }), 403, 'plan_required', 'free + bad query');

  // Valid key: 400 for a bad id, 404 for an unknown one.
  assertError(await http(svc.url, 'GET', '/api/v1/orders/not-a-uuid', { token: key }), 400, 'validation_failed', 'bad id');
  assertError(await http(svc.url, 'GET', `/api/v1/orders/${crypto.randomUUID()}`, { token: key }), 404, 'not_found', 'unknown id');
  assertError(
    await http(svc.url, 'PATCH', `/api/v1/orders/${crypto.randomUUID()}`, { token: key, body: { bogus: 1 } }),
    400,
    'validation_failed',
    'unknown id + bad body: 400 before 404',
  );
});

test('the key prefix is its first 11 characters (merx_ + 6); key lists never show the key', async () => {
  const op = operator(svc.url);
  const account = await op.createAccount();
  const issued = await http(svc.url, 'POST', `/admin/api/accounts/${account.id}/keys`, {
    token: ADMIN_TOKEN,
    body: { name: 'warehouse', preset: 'fulfilment' },
  });
  assert.equal(issued.status, 201, issued.text);
  const key: string = issued.body.key;
  assert.match(key, /^merx_[A-Za-z0-9]+$/);
  assert.ok(key.length > 11 + 16, 'the key carries a long secret part');
  const view = issued.body.data;
  assert.deepEqual(Object.keys(view).sort(), ['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at', 'scopes', 'writes']); // EXTENSIONS 7: Key gains writes; OPERATOR_API: expires_at
  assert.equal(view.prefix, key.slice(0, 11));
  assert.equal(view.prefix.length, 11);
  assert.ok(view.prefix.startsWith('merx_'));
  assert.equal(view.name, 'warehouse');
  assert.match(view.id, UUID_RE);
  assert.equal(view.last_used_at, null);
  assert.equal(view.revoked_at, null);
  assert.equal((await http(svc.url, 'GET', '/api/v1/orders', { token: key })).status, 200);

  const list = await http(svc.url, 'GET', `/admin/api/accounts/${account.id}/keys`, { token: ADMIN_TOKEN });
  assert.equal(list.status, 200);
  assert.equal(list.body.data.length, 1);
  for (const k of list.body.data) {
    assert.deepEqual(Object.keys(k).sort(), ['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at', 'scopes', 'writes']);
  }
  assert.ok(!list.text.includes(key), 'the full key is not in the list');
  assert.ok(!list.text.includes(key.slice(11)), 'the secret part is not in the list');
  assert.ok(!list.text.includes(crypto.createHash('sha256').update(key).digest('hex')), 'the hash is not in the list');
  const account2 = await http(svc.url, 'GET', `/admin/api/accounts/${account.id}`, { token: ADMIN_TOKEN });
  assert.ok(!account2.text.includes(key));
});

test('at most 10 active keys: the 11th is 409; revoking one frees a slot', async () => {
  const op = operator(svc.url);
  const account = await op.createAccount();
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await http(svc.url, 'POST', `/admin/api/accounts/${account.id}/keys`, {
      token: ADMIN_TOKEN,
      body: { name: `k${i}`, preset: 'read_only' },
    });
    assert.equal(res.status, 201, `key ${i + 1}: ${res.text}`);
    ids.push(res.body.data.id);
  }
  const eleventh = await http(svc.url, 'POST', `/admin/api/accounts/${account.id}/keys`, {
    token: ADMIN_TOKEN,
    body: { name: 'k10', preset: 'read_only' },
  });
  assertError(eleventh, 409, 'conflict', '11th active key');
  assert.equal((await keysOf(account.id)).length, 10);

  const revoked = await http(svc.url, 'DELETE', `/admin/api/keys/${ids[0]}`, { token: ADMIN_TOKEN });
  assert.equal(revoked.status, 200);
  const again = await http(svc.url, 'POST', `/admin/api/accounts/${account.id}/keys`, {
    token: ADMIN_TOKEN,
    body: { name: 'k11', preset: 'read_only' },
  });
  assert.equal(again.status, 201, again.text);
  const twelfth = await http(svc.url, 'POST', `/admin/api/accounts/${account.id}/keys`, {
    token: ADMIN_TOKEN,
    body: { name: 'k12', preset: 'read_only' },
  });
  assertError(twelfth, 409, 'conflict', 'back at 10 active keys');
  // Another account is not limited by this one's keys.
  const other = await op.createAccount();
  assert.equal(typeof (await op.issueKey(other.id)), 'string');
});

test('last_used_at is set after the key is used', async () => {
  const { accountId, key } = await freshTenant(svc.url);
  const [before] = await keysOf(accountId);
  assert.equal(before.last_used_at, null);
  const res = await http(svc.url, 'GET', '/api/v1/orders', { token: key });
  assert.equal(res.status, 200);
  // The write is asynchronous to the request; wait for it (bounded), not for a time.
  let after: any;
  for (let i = 0; i < 100; i++) {
    [after] = await keysOf(accountId);
    if (after.last_used_at) break;
    await sleep(50);
  }
  assert.match(after.last_used_at, ISO_RE, 'last_used_at is set');
  assert.ok(Date.parse(after.last_used_at) >= Date.parse(after.created_at));
  // Updated at most once a minute: further uses right away leave it as it is.
  for (let i = 0; i < 3; i++) assert.equal((await http(svc.url, 'GET', '/api/v1/orders', { token: key })).status, 200);
  await sleep(200);
  const [later] = await keysOf(accountId);
  assert.equal(later.last_used_at, after.last_used_at);
});

test('presets give exactly SPEC scopes; custom scopes are kept; there is no default preset', async () => {
  const op = operator(svc.url);
  const account = await op.createAccount();
  for (const [preset, scopes] of Object.entries(PRESET_SCOPES)) {
    const res = await http(svc.url, 'POST', `/admin/api/accounts/${account.id}/keys`, { token: ADMIN_TOKEN, body: { name: preset, preset } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual([...res.body.data.scopes].sort(), [...scopes].sort(), `preset ${preset}`);
  }
  const listed = await keysOf(account.id);
  for (const [preset, scopes] of Object.entries(PRESET_SCOPES)) {
    const k = listed.find((x) => x.name === preset);
    assert.deepEqual([...k.scopes].sort(), [...scopes].sort(), `listed preset ${preset}`);
  }
  // fulfilment and read only: products:write and customers:write only through custom.
  for (const scopes of Object.values(PRESET_SCOPES)) {
    assert.ok(!scopes.includes('products:write') && !scopes.includes('customers:write'));
  }
  const custom = await http(svc.url, 'POST', `/admin/api/accounts/${account.id}/keys`, {
    token: ADMIN_TOKEN,
    body: { name: 'custom', scopes: ['products:write', 'customers:write', 'orders:read'] },
  });
  assert.equal(custom.status, 201, custom.text);
  assert.deepEqual([...custom.body.data.scopes].sort(), ['customers:write', 'orders:read', 'products:write']);

  assertError(
    await http(svc.url, 'POST', `/admin/api/accounts/${account.id}/keys`, { token: ADMIN_TOKEN, body: { name: 'none' } }),
    400,
    'validation_failed',
    'neither preset nor scopes',
  );
  assertError(
    await http(svc.url, 'POST', `/admin/api/accounts/${account.id}/keys`, { token: ADMIN_TOKEN, body: { name: 'x', preset: 'admin' } }),
    400,
    'validation_failed',
    'unknown preset',
  );
  assertError(
    await http(svc.url, 'POST', `/admin/api/accounts/${account.id}/keys`, { token: ADMIN_TOKEN, body: { name: 'x', scopes: ['orders:delete'] } }),
    400,
    'validation_failed',
    'unknown scope',
  );
});

test('rate limit: 300 requests per minute per key, then 429 with Retry-After; another key is unaffected', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const other = await op.issueKey(accountId, { preset: 'fulfilment' });
  let previous = Infinity;
  for (let i = 1; i <= 300; i++) {
    const res = await http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: key });
    assert.equal(res.status, 200, `request ${i}: ${res.text}`);
    assert.equal(res.headers.get('x-ratelimit-limit'), '300', `request ${i}: X-RateLimit-Limit`);
    const remaining = Number(res.headers.get('x-ratelimit-remaining'));
    assert.ok(Number.isInteger(remaining), `request ${i}: X-RateLimit-Remaining is an integer`);
    assert.ok(remaining < previous, `request ${i}: remaining decreases (${remaining} after ${previous})`);
    if (i === 1) assert.equal(remaining, 299);
    previous = remaining;
  }
  assert.equal(previous, 0);

  const limited = await http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: key });
  assertError(limited, 429, 'rate_limited', '301st request');
  const retryAfter = limited.headers.get('retry-after');
  assert.match(retryAfter ?? '', /^\d+$/, 'Retry-After in seconds');
  assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60);
  assert.equal(limited.headers.get('x-ratelimit-limit'), '300');
  assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
  if (limited.body.error.details?.retry_after_sec !== undefined) {
    assert.equal(typeof limited.body.error.details.retry_after_sec, 'number');
  }
  // 429 comes before 400 (GAPS check order) and applies to writes too.
  assertError(await http(svc.url, 'GET', '/api/v1/orders?limit=0', { token: key }), 429, 'rate_limited', 'limited + bad query');
  assertError(
    await http(svc.url, 'PATCH', `/api/v1/orders/${crypto.randomUUID()}`, { token: key, body: { admin_notes: 'x' } }),
    429,
    'rate_limited',
    'limited PATCH',
  );
  // ...but not before 401.
  assertUnauthorized(await http(svc.url, 'GET', '/api/v1/orders'), 'no key while another key is limited');

  const fresh = await http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: other });
  assert.equal(fresh.status, 200, 'another key of the same account is unaffected');
  assert.equal(fresh.headers.get('x-ratelimit-limit'), '300');
  assert.equal(fresh.headers.get('x-ratelimit-remaining'), '299');
});
