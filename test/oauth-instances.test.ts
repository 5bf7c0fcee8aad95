// EXTENSIONS 10: revocation takes effect at once on every instance. Two
// instances share a PostgreSQL database (PGlite is one process's database);
// B has the access token cached when A revokes, by the operator's Revoke, by
// RFC 7009 for one token, or by a used refresh token revoking the grant.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, freshTenant, operator, type TestService } from './helpers/harness.ts';
import { freePort } from './helpers/service-child.ts';
import { rpc, toolCall } from './helpers/mcp.ts';
import { connectedClient, form } from './helpers/oauth.ts';

const twoInstances = process.env.DATABASE_URL ? false : 'two instances share a database only on PostgreSQL (set DATABASE_URL)';

let a: TestService;
let b: TestService;
let base: string;
before(async () => {
  if (twoInstances) return;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  a = await startTestService({ PORT: String(port), PUBLIC_BASE_URL: base });
  b = await startTestService({ PUBLIC_BASE_URL: base });
});
after(async () => {
  await a?.close();
  await b?.close();
});

/** The token works on B (and is cached there) before the revocation on A. */
async function cachedOnB(access: string) {
  assert.equal((await http(b.url, 'GET', '/api/v1/orders', { token: access })).status, 200);
  assert.equal((await rpc(b.url, access, toolCall('list_orders', {}))).status, 200);
}

async function refusedOnB(access: string) {
  assert.equal((await http(b.url, 'GET', '/api/v1/orders', { token: access })).status, 401);
  assert.equal((await rpc(b.url, access, toolCall('list_orders', {}))).status, 401);
}

test('two instances: the operator revokes a connected app on A; its token is 401 on B at once', { skip: twoInstances }, async () => {
  const t = await freshTenant(base);
  const { tokens } = await connectedClient(base, t.key);
  await cachedOnB(tokens.access_token);
  const apps = (await operator(base).call('GET', `/accounts/${t.accountId}/connected-apps`)).data;
  await operator(base).call('POST', `/connected-apps/${apps[0].id}/revoke`);
  await refusedOnB(tokens.access_token);
});

test('two instances: one access token revoked on A (RFC 7009) is 401 on B at once', { skip: twoInstances }, async () => {
  const t = await freshTenant(base);
  const { clientId, tokens } = await connectedClient(base, t.key);
  await cachedOnB(tokens.access_token);
  assert.equal((await form(base, '/oauth/revoke', { token: tokens.access_token, client_id: clientId })).status, 200);
  await refusedOnB(tokens.access_token);
});

test('two instances: a used refresh token presented on A revokes the grant; its tokens are 401 on B at once', { skip: twoInstances }, async () => {
  const t = await freshTenant(base);
  const { clientId, tokens } = await connectedClient(base, t.key);
  const refresh = () =>
    form(base, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
      resource: `${base}/api/mcp`,
    });
  const second = await refresh();
  assert.equal(second.status, 200);
  await cachedOnB(second.body.access_token);
  assert.equal((await refresh()).status, 400);
  await refusedOnB(second.body.access_token);
});
