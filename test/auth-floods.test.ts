// Issue 27, floods: an unknown well-formed key sent again costs no database
// transaction (a brief negative cache that any key or account change clears),
// and failed authentications are limited per client address: past N, 429
// rate_limited with Retry-After before any lookup, on the API keys (REST and
// MCP) and on the operator token (/admin/api, /metrics). A key the instance
// already admitted keeps working from a limited address.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, freshTenant, operator, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError, assertUnauthorized } from './helpers/contract.ts';
import { rpc, toolCall } from './helpers/mcp.ts';
import { generateApiKey } from '../src/platform/edge/auth.ts';

const LIMIT = 5;
// Without Redis: the counters are this process's own, so other test files sending bad keys from 127.0.0.1 do not count here.
let roomy: TestService;
let strict: TestService;
before(async () => {
  roomy = await startTestService({ REDIS_URL: '' });
  strict = await startTestService({ REDIS_URL: '', AUTH_FAILURES_PER_WINDOW: String(LIMIT), AUTH_FAILURES_WINDOW_SEC: '60' });
});
after(async () => {
  await roomy?.close();
  await strict?.close();
});

const listOrders = (svc: TestService, key: string) => http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: key });
const lookups = (svc: TestService) => svc.service.services.keys.lookups;

function assertLimited(res: Awaited<ReturnType<typeof http>>, where: string): void {
  const error = assertError(res, 429, 'rate_limited', where);
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `${where}: Retry-After ${retryAfter}`);
  assert.deepEqual(error.details, { retry_after_sec: retryAfter }, where);
}

test('200 requests with the same unknown key make at most one lookup, REST and MCP', async () => {
  const unknown = generateApiKey().key;
  const before = lookups(roomy);
  for (let i = 0; i < 100; i++) assertUnauthorized(await listOrders(roomy, unknown), `REST #${i}`);
  for (let i = 0; i < 100; i++) assert.equal((await rpc(roomy.url, unknown, toolCall('list_orders', { limit: 1 }))).status, 401, `MCP #${i}`);
  assert.ok(lookups(roomy) - before <= 1, `${lookups(roomy) - before} lookups`);
});

test('a refused key admitted again (account reactivated) works on the next request', async () => {
  const { key, accountId, op } = await freshTenant(roomy.url);
  await op.call('PATCH', `/accounts/${accountId}`, { active: false });
  assertUnauthorized(await listOrders(roomy, key), 'deactivated');
  const before = lookups(roomy);
  assertUnauthorized(await listOrders(roomy, key), 'deactivated, again');
  assert.equal(lookups(roomy), before, 'the refusal is remembered');
  await op.call('PATCH', `/accounts/${accountId}`, { active: true });
  assert.equal((await listOrders(roomy, key)).status, 200, 'reactivated: the remembered refusal is forgotten');
});

test(`past ${LIMIT} failed keys an address gets 429 before any lookup; a cached valid key keeps working`, async () => {
  const { key: cached, accountId } = await freshTenant(strict.url);
  const uncached = await operator(strict.url).issueKey(accountId);
  assert.equal((await listOrders(strict, cached)).status, 200, 'admitted once, so cached');
  // Missing and malformed keys guess nothing and are not counted.
  for (let i = 0; i < LIMIT * 2; i++) assertUnauthorized(await http(strict.url, 'GET', '/api/v1/orders'), 'no key');
  assertUnauthorized(await listOrders(strict, 'merx_short'), 'malformed');
  for (let i = 0; i < LIMIT; i++) assertUnauthorized(await listOrders(strict, generateApiKey().key), `failure ${i + 1}`);
  assertLimited(await listOrders(strict, generateApiKey().key), 'REST, past the limit');
  const before = lookups(strict);
  assertLimited(await listOrders(strict, generateApiKey().key), 'REST, a new unknown key');
  assertLimited(await rpc(strict.url, generateApiKey().key, toolCall('list_orders', { limit: 1 })), 'MCP');
  assertLimited(await listOrders(strict, uncached), 'a valid key this instance has not seen needs a lookup: limited too');
  assert.equal(lookups(strict), before, 'no lookup while limited');
  assert.equal((await listOrders(strict, cached)).status, 200, 'the cached valid key works from the limited address');
  assert.equal((await rpc(strict.url, cached, toolCall('list_orders', { limit: 1 }))).status, 200, 'over MCP too');
});

test(`past ${LIMIT} wrong operator tokens an address gets 429 on /admin/api and /metrics; the right token still works`, async () => {
  const wrong = 'wrong-operator-token-0123456789';
  for (let i = 0; i < LIMIT * 2; i++) assertUnauthorized(await http(strict.url, 'GET', '/admin/api/accounts'), 'no token: not counted');
  for (let i = 0; i < LIMIT; i++) assertUnauthorized(await http(strict.url, 'GET', '/admin/api/accounts', { token: wrong }), `failure ${i + 1}`);
  assertLimited(await http(strict.url, 'GET', '/admin/api/accounts', { token: wrong }), '/admin/api');
  assertLimited(await http(strict.url, 'GET', '/metrics', { token: `${wrong}x` }), '/metrics');
  assert.equal((await http(strict.url, 'GET', '/admin/api/accounts', { token: ADMIN_TOKEN })).status, 200, 'the right token');
  assert.equal((await http(strict.url, 'GET', '/metrics', { token: ADMIN_TOKEN })).status, 200, 'the right token on /metrics');
});
