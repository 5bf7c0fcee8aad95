// EXTENSIONS 10, OAuth 2.1 for /api/mcp: metadata (RFC 9728, RFC 8414) and
// the 401's hint, the official MCP SDK client through the whole flow
// (discovery from the 401, registration, PKCE, consent through the form,
// token, tools, a call, refresh, revocation), and every refusal §10 lists.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { ADMIN_TOKEN, freshTenant, http, operator, startTestService, type TestService } from './helpers/harness.ts';
import { freePort } from './helpers/service-child.ts';
import { connectSdk } from './helpers/sdk-client.ts';
import { rpc, toolCall } from './helpers/mcp.ts';
import { assertResponseMatches } from './helpers/openapi-validator.ts';
import { MemoryProvider, REDIRECT_URI, authorizationRequest, connectedClient, consent, form, pkce, registerClient } from './helpers/oauth.ts';

let svc: TestService;
let base: string;
const SCOPES = [
  'orders:read',
  'orders:write',
  'shipments:read',
  'shipments:write',
  'inventory:read',
  'inventory:write',
  'products:read',
  'products:write',
  'customers:read',
  'customers:write',
  'webhooks:read',
  'webhooks:write',
  'submit_brief',
  'get_status',
  'get_facts',
];

before(async () => {
  // The resource must be the URL clients reach (the SDK compares them), so PUBLIC_BASE_URL names this very port.
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  svc = await startTestService({ PORT: String(port), PUBLIC_BASE_URL: base });
});
after(async () => {
  await svc.close();
});

const token = (res: { status: number; text: string; body: any }, error: string) => {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.error, error, res.text);
  assert.equal(typeof res.body.error_description, 'string');
};

test('protected resource metadata at both well-known paths, and the 401 of /api/mcp points to it (SPEC body unchanged)', async () => {
  const expected = { resource: `${base}/api/mcp`, authorization_servers: [base], scopes_supported: SCOPES, bearer_methods_supported: ['header'] };
  for (const path of ['/.well-known/oauth-protected-resource/api/mcp', '/.well-known/oauth-protected-resource']) {
    const res = await http(base, 'GET', path);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, expected);
  }
  for (const auth of [undefined, 'merx_wrongwrongwrongwrongwrongwrongwrongwrong', 'merx_at_0000000000000000000000000000000000000000']) {
    const res = await rpc(base, auth, toolCall('list_orders', {}));
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/api/mcp"`);
    assert.equal(res.body.error.code, 'unauthorized');
  }
  // REST keeps its own challenge.
  const rest = await http(base, 'GET', '/api/v1/orders');
  assert.equal(rest.status, 401);
  assert.equal(rest.headers.get('www-authenticate'), 'Bearer realm="Merx API"');
});

test("the OAuth and well-known routes are documented in docs, not in the API's OpenAPI document", async () => {
  const doc = (await http(base, 'GET', '/api/v1/openapi.json')).body;
  const paths = Object.keys(doc.paths);
  assert.ok(paths.length > 10);
  assert.deepEqual(
    paths.filter((p) => p.startsWith('/oauth') || p.startsWith('/.well-known')),
    [],
  );
});

test('authorization server metadata (RFC 8414) exactly as EXTENSIONS 10 lists it', async () => {
  const res = await http(base, 'GET', '/.well-known/oauth-authorization-server');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: SCOPES,
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  });
});

test('the official SDK client: discovery from the 401, registration, PKCE, consent by form, token, tools of the grant, a call, refresh, revocation', async () => {
  const t = await freshTenant(base, { preset: 'fulfilment' });
  const provider = new MemoryProvider();
  const url = new URL(`${base}/api/mcp`);
  const first = new Client({ name: 'oauth-test', version: '1.0.0' });
  await assert.rejects(first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider })), UnauthorizedError);
  // The SDK registered and sent the person to the consent page.
  const asked = provider.authorizationUrl!;
  assert.ok(asked.href.startsWith(`${base}/oauth/authorize?`), asked.href);
  assert.equal(asked.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(asked.searchParams.get('resource'), `${base}/api/mcp`);
  const page = await fetch(asked);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /SDK test agent/);
  assert.match(html, /127\.0\.0\.1:9/);
  // The person grants two scopes, writes direct.
  const params = Object.fromEntries(asked.searchParams);
  const answer = await form(base, '/oauth/authorize', {
    ...params,
    scope: 'orders:read shipments:read',
    credential: t.key,
    approval: 'off',
    decision: 'approve',
  });
  assert.equal(answer.status, 302, answer.text);
  const back = answer.location!;
  assert.equal(back.origin + back.pathname, REDIRECT_URI);
  assert.equal(back.searchParams.get('state'), 'sdk-state');
  assert.equal(back.searchParams.get('iss'), base);
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await transport.finishAuth(back.searchParams.get('code')!);
  const tokens = provider.tokens()!;
  assert.equal(tokens.token_type, 'Bearer');
  assert.equal(tokens.expires_in, 3600);
  assert.equal(tokens.scope, 'orders:read shipments:read');

  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    // Exactly the tools an API key with the granted scopes lists.
    const listed = (await client.listTools()).tools.map((tool) => tool.name).sort();
    const keyOfSameScopes = await operator(base).issueKey(t.accountId, { scopes: ['orders:read', 'shipments:read'] });
    const reference = await connectSdk(base, keyOfSameScopes);
    const expected = (await reference.client.listTools()).tools.map((tool) => tool.name).sort();
    await reference.close();
    assert.deepEqual(listed, expected);
    assert.ok(listed.includes('list_orders') && !listed.includes('update_order') && !listed.includes('list_products'));
    const result = await client.callTool({ name: 'list_orders', arguments: { limit: 1 } });
    assert.equal(result.isError, false);
  } finally {
    await client.close();
  }

  // Refresh through the SDK (its auth() refreshes when it holds a refresh token): it rotates; the previous access token lives until it expires.
  assert.equal(await auth(provider, { serverUrl: url }), 'AUTHORIZED');
  const refreshed = { body: provider.tokens()! };
  assert.notEqual(refreshed.body.refresh_token, tokens.refresh_token);
  assert.notEqual(refreshed.body.access_token, tokens.access_token);
  assert.equal(refreshed.body.scope, 'orders:read shipments:read');
  assert.equal((await http(base, 'GET', '/api/v1/orders', { token: tokens.access_token })).status, 200);
  assert.equal((await http(base, 'GET', '/api/v1/orders', { token: refreshed.body.access_token })).status, 200);
  const again = new Client({ name: 'oauth-test', version: '1.0.0' });
  await again.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  assert.equal((await again.callTool({ name: 'list_orders', arguments: { limit: 1 } })).isError, false);
  await again.close();

  // Revocation (RFC 7009) of the refresh token ends the grant and every access token of it, on both transports.
  const revoked = await form(base, '/oauth/revoke', { token: refreshed.body.refresh_token, client_id: provider.clientInformation()!.client_id });
  assert.equal(revoked.status, 200);
  for (const access of [tokens.access_token, refreshed.body.access_token]) {
    assert.equal((await http(base, 'GET', '/api/v1/orders', { token: access })).status, 401);
    assert.equal((await rpc(base, access, toolCall('list_orders', {}))).status, 401);
  }
});

test('registration (RFC 7591): public clients; redirect URIs https or http on a loopback host, else 400 invalid_redirect_uri', async () => {
  for (const uris of [['https://app.example/cb'], ['http://localhost:3000/cb'], ['http://127.0.0.1/cb'], ['http://[::1]:8080/cb']]) {
    const res = await http(base, 'POST', '/oauth/register', { body: { redirect_uris: uris, client_name: 'Ok' } });
    assert.equal(res.status, 201, res.text);
    assert.match(res.body.client_id, /^merx_client_/);
    assert.deepEqual(res.body.redirect_uris, uris);
    assert.equal(res.body.token_endpoint_auth_method, 'none');
    assert.equal(res.body.client_secret, undefined);
  }
  for (const body of [
    {},
    { redirect_uris: [] },
    { redirect_uris: ['http://app.example/cb'] },
    { redirect_uris: ['ftp://x/cb'] },
    { redirect_uris: ['not a url'] },
    { redirect_uris: ['https://a.example/cb#frag'] },
  ]) {
    token(await http(base, 'POST', '/oauth/register', { body }), 'invalid_redirect_uri');
  }
  token(
    await http(base, 'POST', '/oauth/register', {
      body: { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'client_secret_basic' },
    }),
    'invalid_client_metadata',
  );
});

test('authorize: an unknown client or an unregistered redirect URI gets a 400 page and no redirect', async () => {
  const { challenge } = pkce();
  const clientId = await registerClient(base);
  const cases = [
    authorizationRequest(base, 'merx_client_unknown', challenge),
    authorizationRequest(base, clientId, challenge, { redirect_uri: 'https://evil.example/cb' }),
    // A redirect URI check comes before the PKCE check: nothing goes to an unregistered address.
    authorizationRequest(base, clientId, challenge, { redirect_uri: 'https://evil.example/cb', code_challenge: undefined }),
  ];
  for (const request of cases) {
    const get = await fetch(`${base}/oauth/authorize?${new URLSearchParams(request)}`, { redirect: 'manual' });
    assert.equal(get.status, 400);
    assert.equal(get.headers.get('location'), null);
    assert.match(get.headers.get('content-type')!, /text\/html/);
    const post = await form(base, '/oauth/authorize', { ...request, credential: 'x', decision: 'approve' });
    assert.equal(post.status, 400);
    assert.equal(post.location, null);
  }
});

test('authorize: without an S256 challenge (plain too) redirects invalid_request; a missing or foreign resource invalid_target; with state and iss', async () => {
  const t = await freshTenant(base);
  const { challenge } = pkce();
  const clientId = await registerClient(base);
  const cases: Array<[Record<string, string | undefined>, string]> = [
    [{ code_challenge: undefined }, 'invalid_request'],
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ code_challenge_method: undefined }, 'invalid_request'],
    [{ resource: undefined }, 'invalid_target'],
    [{ resource: 'https://other.example/api/mcp' }, 'invalid_target'],
    [{ resource: `${base}/api/v1` }, 'invalid_target'],
  ];
  for (const [change, error] of cases) {
    const request = authorizationRequest(base, clientId, challenge, change);
    const get = await fetch(`${base}/oauth/authorize?${new URLSearchParams(JSON.parse(JSON.stringify(request)))}`, { redirect: 'manual' });
    assert.equal(get.status, 302, JSON.stringify(change));
    const post = await form(base, '/oauth/authorize', { ...request, credential: t.key, decision: 'approve' });
    for (const location of [new URL(get.headers.get('location')!), post.location!]) {
      assert.equal(location.origin + location.pathname, REDIRECT_URI);
      assert.equal(location.searchParams.get('error'), error, JSON.stringify(change));
      assert.equal(location.searchParams.get('state'), 'st-1');
      assert.equal(location.searchParams.get('iss'), base);
      assert.equal(location.searchParams.get('code'), null);
    }
  }
});

test('authorize: a wrong credential answers 401 with the page and redirects nowhere; deny redirects access_denied; an empty grant is refused', async () => {
  const t = await freshTenant(base, { scopes: ['orders:read'] });
  const { challenge } = pkce();
  const request = authorizationRequest(base, await registerClient(base), challenge);
  for (const credential of ['merx_wrongwrongwrongwrongwrongwrongwrongwrong', 'not-a-key', '', 'wrong-operator-token']) {
    const res = await form(base, '/oauth/authorize', { ...request, credential, decision: 'approve' });
    assert.equal(res.status, 401, credential);
    assert.equal(res.location, null);
    assert.match(res.text, /not valid/);
    assert.match(res.text, /<form/);
  }
  const denied = await form(base, '/oauth/authorize', { ...request, credential: t.key, decision: 'deny' });
  assert.equal(denied.status, 302);
  assert.equal(denied.location!.searchParams.get('error'), 'access_denied');
  assert.equal(denied.location!.searchParams.get('state'), 'st-1');
  assert.equal(denied.location!.searchParams.get('iss'), base);
  // The key holds orders:read only: choosing orders:write alone grants nothing; choosing nothing is nothing.
  for (const scope of ['orders:write', '']) {
    const empty = await form(base, '/oauth/authorize', { ...request, scope, credential: t.key, decision: 'approve' });
    assert.equal(empty.status, 400, scope);
    assert.equal(empty.location, null);
    assert.match(empty.text, /at least one scope/);
  }
});

test('granted = asked, chosen and held: a key holding orders:read that is asked orders:read and orders:write grants orders:read', async () => {
  const t = await freshTenant(base, { scopes: ['orders:read'] });
  const { tokens } = await connectedClient(base, t.key);
  assert.equal(tokens.scope, 'orders:read');
  assert.equal(tokens.token_type, 'Bearer');
  assert.equal(tokens.expires_in, 3600);
  // Token secrets are kept only as hashes.
  const kept = (value: string) => svc.service.db.query('SELECT 1 FROM oauth_tokens WHERE token_hash = $1', [value]).then((r) => r.rows.length);
  for (const secret of [tokens.access_token, tokens.refresh_token]) {
    assert.equal(await kept(secret), 0);
    assert.equal(await kept(crypto.createHash('sha256').update(secret).digest('hex')), 1);
  }
});

test('the operator token consents for the account it names', async () => {
  const t = await freshTenant(base, { scopes: ['orders:read'] });
  const clientId = await registerClient(base);
  const { verifier, challenge } = pkce();
  const request = authorizationRequest(base, clientId, challenge, { scope: 'products:read customers:read' });
  const missing = await form(base, '/oauth/authorize', { ...request, credential: ADMIN_TOKEN, decision: 'approve' });
  assert.equal(missing.status, 400);
  assert.match(missing.text, /account/);
  const code = await consent(base, request, ADMIN_TOKEN, { account_id: t.accountId });
  const res = await form(base, '/oauth/token', {
    grant_type: 'authorization_code',
    code,
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    resource: `${base}/api/mcp`,
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.scope, 'products:read customers:read');
  assert.equal((await http(base, 'GET', '/api/v1/products', { token: res.body.access_token })).status, 200);
});

test('token: a wrong PKCE verifier, a missing or foreign resource, an expired code, and a reused code (its grant revoked) are refused', async () => {
  const t = await freshTenant(base);
  const clientId = await registerClient(base);
  const exchange = (code: string, verifier: string, extra: Record<string, string | undefined> = {}) =>
    form(base, '/oauth/token', {
      grant_type: 'authorization_code',
      code,
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
      resource: `${base}/api/mcp`,
      ...extra,
    });
  const fresh = async () => {
    const p = pkce();
    return { ...p, code: await consent(base, authorizationRequest(base, clientId, p.challenge), t.key) };
  };
  let c = await fresh();
  token(await exchange(c.code, pkce().verifier), 'invalid_grant');
  c = await fresh();
  token(await exchange(c.code, c.verifier, { resource: undefined }), 'invalid_target');
  c = await fresh();
  token(await exchange(c.code, c.verifier, { resource: 'https://other.example/api/mcp' }), 'invalid_target');
  c = await fresh();
  token(await exchange(c.code, c.verifier, { redirect_uri: 'http://127.0.0.1:9/other' }), 'invalid_grant');
  c = await fresh();
  token(await exchange(c.code, c.verifier, { client_id: await registerClient(base) }), 'invalid_grant');
  c = await fresh();
  token(await form(base, '/oauth/token', { grant_type: 'password', client_id: clientId }), 'unsupported_grant_type');

  // A code lives 60 s: one past its life is refused.
  c = await fresh();
  await svc.service.db.query(`UPDATE oauth_codes SET expires_at = now() - interval '1 second' WHERE used_at IS NULL AND client_id = $1`, [clientId]);
  token(await exchange(c.code, c.verifier), 'invalid_grant');

  // Used once; the second use revokes what the first gave.
  c = await fresh();
  const first = await exchange(c.code, c.verifier);
  assert.equal(first.status, 200, first.text);
  assert.equal((await http(base, 'GET', '/api/v1/orders', { token: first.body.access_token })).status, 200);
  token(await exchange(c.code, c.verifier), 'invalid_grant');
  assert.equal((await http(base, 'GET', '/api/v1/orders', { token: first.body.access_token })).status, 401);
  token(
    await form(base, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
      client_id: clientId,
      resource: `${base}/api/mcp`,
    }),
    'invalid_grant',
  );
});

test('a used refresh token revokes the whole grant: its access tokens answer 401 on REST and MCP', async () => {
  const t = await freshTenant(base);
  const { clientId, tokens } = await connectedClient(base, t.key);
  const refresh = (refreshToken: string, extra: Record<string, string | undefined> = {}) =>
    form(base, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
      resource: `${base}/api/mcp`,
      ...extra,
    });
  token(await refresh(tokens.refresh_token, { resource: undefined }), 'invalid_target');
  token(await refresh(tokens.refresh_token, { scope: 'orders:read webhooks:write' }), 'invalid_scope');
  const second = await refresh(tokens.refresh_token);
  assert.equal(second.status, 200, second.text);
  token(await refresh(tokens.refresh_token), 'invalid_grant');
  for (const access of [tokens.access_token, second.body.access_token]) {
    assert.equal((await http(base, 'GET', '/api/v1/orders', { token: access })).status, 401);
    const mcp = await rpc(base, access, toolCall('list_orders', {}));
    assert.equal(mcp.status, 401);
  }
  token(await refresh(second.body.refresh_token), 'invalid_grant');
});

test('revoking one access token (RFC 7009) ends it alone; unknown tokens answer 200', async () => {
  const t = await freshTenant(base);
  const { clientId, tokens } = await connectedClient(base, t.key);
  const next = await form(base, '/oauth/token', {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
    client_id: clientId,
    resource: `${base}/api/mcp`,
  });
  assert.equal((await http(base, 'GET', '/api/v1/orders', { token: tokens.access_token })).status, 200);
  assert.equal((await form(base, '/oauth/revoke', { token: tokens.access_token, client_id: clientId })).status, 200);
  assert.equal((await http(base, 'GET', '/api/v1/orders', { token: tokens.access_token })).status, 401);
  assert.equal((await rpc(base, tokens.access_token, toolCall('list_orders', {}))).status, 401);
  assert.equal((await http(base, 'GET', '/api/v1/orders', { token: next.body.access_token })).status, 200);
  assert.equal((await form(base, '/oauth/revoke', { token: 'nothing-like-a-token' })).status, 200);
  token(await form(base, '/oauth/revoke', {}), 'invalid_request');
});

test('scopes outside the grant answer 403 scope_missing; the account plan rules apply', async () => {
  const t = await freshTenant(base);
  const { tokens } = await connectedClient(base, t.key, { scope: 'orders:read' });
  const rest = await http(base, 'GET', '/api/v1/webhooks', { token: tokens.access_token });
  assert.equal(rest.status, 403);
  assert.equal(rest.body.error.code, 'scope_missing');
  const mcp = await rpc(base, tokens.access_token, toolCall('list_webhooks', {}));
  assert.equal(mcp.status, 200);
  assert.equal(mcp.body.result.isError, true, mcp.text);
  assert.deepEqual(mcp.body.result.structuredContent, { error: 'SCOPE', reason: 'this API key lacks the scope webhooks:read' });
  await operator(base).call('PATCH', `/accounts/${t.accountId}`, { plan: 'free' });
  const free = await http(base, 'GET', '/api/v1/orders', { token: tokens.access_token });
  assert.equal(free.status, 403);
  assert.equal(free.body.error.code, 'plan_required');
});

test('approval mode (on by default): a write answers an approval on REST and MCP', async () => {
  const t = await freshTenant(base);
  const order = await t.op.checkout(t.accountId);
  const { tokens } = await connectedClient(base, t.key, { approval: undefined });
  const res = await http(base, 'PATCH', `/api/v1/orders/${order.id}`, { token: tokens.access_token, body: { admin_notes: 'from claude' } });
  assert.equal(res.status, 202, res.text);
  assert.equal(res.body.data.status, 'pending');
  assert.equal(res.body.data.operation, 'update_order');
  const mcp = await rpc(base, tokens.access_token, toolCall('update_order', { id: order.id, admin_notes: 'from claude' }));
  assert.equal(mcp.body.result.isError, false, mcp.text);
  assert.ok(mcp.body.result._meta.approval_id);
  // Off: writes run at once.
  const direct = await connectedClient(base, t.key, { approval: 'off' });
  const done = await http(base, 'PATCH', `/api/v1/orders/${order.id}`, { token: direct.tokens.access_token, body: { admin_notes: 'direct' } });
  assert.equal(done.status, 200, done.text);
});

test('connected apps: the operator lists them (client, scopes, approval mode, created, last used), the request log names the grant, Revoke ends it at once', async () => {
  const t = await freshTenant(base);
  const { clientId, tokens } = await connectedClient(base, t.key, { scope: 'orders:read' });
  assert.equal((await http(base, 'GET', '/api/v1/orders', { token: tokens.access_token })).status, 200);
  const op = operator(base);
  // The operator routes are in the operator's OpenAPI document, and their answers match it.
  const operatorDoc = (await http(base, 'GET', '/admin/api/openapi.json')).body;
  const listed = await http(base, 'GET', `/admin/api/accounts/${t.accountId}/connected-apps`, { token: ADMIN_TOKEN });
  assertResponseMatches(operatorDoc, 'GET', `/admin/api/accounts/${t.accountId}/connected-apps`, listed);
  const apps = listed.body.data;
  assert.equal(apps.length, 1);
  const app = apps[0];
  assert.equal(app.client_id, clientId);
  assert.equal(app.client_name, 'Script agent');
  assert.deepEqual(app.scopes, ['orders:read']);
  assert.equal(app.writes, 'direct');
  assert.ok(app.created_at);
  assert.match(app.key_prefix, /^merx_oa[A-Za-z0-9]{4}$/);
  // Not an API key: the account's keys are unchanged.
  const keys = (await op.call('GET', `/accounts/${t.accountId}/keys`)).data;
  assert.ok(keys.every((k: { prefix: string }) => k.prefix !== app.key_prefix));
  // The request log: under the grant's prefix.
  let entries: any[] = [];
  for (let i = 0; i < 50 && !entries.some((e) => e.operation === 'list_orders'); i++) {
    entries = (await op.call('GET', `/accounts/${t.accountId}/request-logs?key_prefix=${app.key_prefix}`)).data;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(entries.some((e) => e.operation === 'list_orders' && e.key_prefix === app.key_prefix));
  await new Promise((r) => setTimeout(r, 10));
  const used = (await op.call('GET', `/accounts/${t.accountId}/connected-apps`)).data[0];
  assert.ok(used.last_used_at, 'last used is stamped');

  const revokedRes = await http(base, 'POST', `/admin/api/connected-apps/${app.id}/revoke`, { token: ADMIN_TOKEN });
  assertResponseMatches(operatorDoc, 'POST', `/admin/api/connected-apps/${app.id}/revoke`, revokedRes);
  assert.equal(revokedRes.body.data.revoked, true);
  assert.equal((await http(base, 'GET', '/api/v1/orders', { token: tokens.access_token })).status, 401);
  assert.equal((await rpc(base, tokens.access_token, toolCall('list_orders', {}))).status, 401);
  assert.deepEqual((await op.call('GET', `/accounts/${t.accountId}/connected-apps`)).data, []);
  const unknown = await http(base, 'POST', '/admin/api/connected-apps/00000000-0000-4000-8000-000000000000/revoke', { token: ADMIN_TOKEN });
  assert.equal(unknown.status, 404);
  assertResponseMatches(operatorDoc, 'POST', '/admin/api/connected-apps/00000000-0000-4000-8000-000000000000/revoke', unknown);
});

test('a client metadata document on a private address is refused by the webhook URL policy (error page, no redirect)', async () => {
  const { challenge } = pkce();
  for (const clientId of [
    'https://127.0.0.1/client.json',
    'https://10.0.0.8/client.json',
    'https://localhost/oauth-client',
    'https://[::1]/client.json',
  ]) {
    const request = authorizationRequest(base, clientId, challenge);
    const res = await fetch(`${base}/oauth/authorize?${new URLSearchParams(request)}`, { redirect: 'manual' });
    assert.equal(res.status, 400, clientId);
    assert.equal(res.headers.get('location'), null);
    assert.match(await res.text(), /URL policy/);
  }
});

test('retention: codes and access tokens a day past their end are deleted; refresh tokens stay while their grant does', async () => {
  const t = await freshTenant(base);
  const { tokens } = await connectedClient(base, t.key);
  const hash = (secret: string) => crypto.createHash('sha256').update(secret).digest('hex');
  const grant = (
    await svc.service.db.query<{ grant_id: string }>('SELECT grant_id FROM oauth_tokens WHERE token_hash = $1', [hash(tokens.access_token)])
  ).rows[0].grant_id;
  await svc.service.db.query(`UPDATE oauth_tokens SET expires_at = now() - interval '2 days' WHERE token_hash = $1`, [hash(tokens.access_token)]);
  await svc.service.db.query(`UPDATE oauth_codes SET expires_at = now() - interval '2 days' WHERE grant_id = $1`, [grant]);
  await operator(base).call('POST', '/jobs/retention/run', {});
  const left = await svc.service.db.query<{ kind: string }>('SELECT kind FROM oauth_tokens WHERE grant_id = $1', [grant]);
  assert.deepEqual(
    left.rows.map((r) => r.kind),
    ['refresh'],
  );
  assert.equal((await svc.service.db.query('SELECT 1 FROM oauth_codes WHERE grant_id = $1', [grant])).rows.length, 0);
  assert.equal((await http(base, 'GET', '/api/v1/orders', { token: tokens.access_token })).status, 401);
});
