// Issue 41 item 9: each kind of refused credential gets its own 401 message
// (SPEC's error shape unchanged: code unauthorized, WWW-Authenticate), keys can
// be issued with expires_at (OPERATOR_API keys), and a start that cannot reach
// DATABASE_URL names it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { startTestService, http, freshTenant, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError, assertUnauthorized, ISO_RE, sleep } from './helpers/contract.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const unknownKey = () => `merx_${[...crypto.randomBytes(40)].map((b) => ALNUM[b % 62]).join('')}`;

/** The 401's message, on REST and on MCP alike. */
async function refusal(headers: Record<string, string>, note: string): Promise<string> {
  const rest = await http(svc.url, 'GET', '/api/v1/orders', { headers });
  assertUnauthorized(rest, `${note} (REST)`);
  const mcp = await http(svc.url, 'POST', '/api/mcp', { headers, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
  assert.equal(mcp.status, 401, `${note} (MCP): ${mcp.text}`);
  assert.equal(mcp.body.error.message, rest.body.error.message, `${note}: MCP says the same`);
  return rest.body.error.message;
}

test('each refused credential is told apart: no header, not Bearer, the operator token, not a key, unknown, revoked', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const messages = new Map<string, string>();
  messages.set('missing', await refusal({}, 'no header'));
  assert.match(messages.get('missing')!, /no API key.*Authorization: Bearer/);
  messages.set('scheme', await refusal({ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, 'Basic'));
  assert.equal(await refusal({ authorization: key }, 'no scheme'), messages.get('scheme'));
  assert.match(messages.get('scheme')!, /must read "Bearer <API key>"/);
  messages.set('operator', await refusal({ authorization: `Bearer merx_admin_${crypto.randomBytes(32).toString('base64url')}` }, 'operator token'));
  assert.match(messages.get('operator')!, /operator token.*\/admin\/api/);
  messages.set('shape', await refusal({ authorization: `Bearer ${key.slice(0, -1)}` }, 'a key cut short'));
  assert.match(messages.get('shape')!, /not a Merx API key/);
  messages.set('unknown', await refusal({ authorization: `Bearer ${unknownKey()}` }, 'unknown'));
  assert.match(messages.get('unknown')!, /unknown API key/);

  const second = await op.issueKey(accountId);
  const listed = await http(svc.url, 'GET', `/admin/api/accounts/${accountId}/keys`, { token: ADMIN_TOKEN });
  const target = listed.body.data.find((k: any) => k.prefix === second.slice(0, 11));
  assert.equal((await http(svc.url, 'DELETE', `/admin/api/keys/${target.id}`, { token: ADMIN_TOKEN })).status, 200);
  messages.set('revoked', await refusal({ authorization: `Bearer ${second}` }, 'revoked'));
  assert.match(messages.get('revoked')!, new RegExp(`^this API key \\(${second.slice(0, 11)}\\) was revoked at \\d{4}-`));
  // Five kinds, five messages; none names more than the key's public prefix.
  assert.equal(new Set(messages.values()).size, messages.size, [...messages.values()].join('\n'));
  for (const m of messages.values()) assert.ok(!m.includes(second.slice(11)) && !m.includes(key.slice(11)), m);
});

test('expires_at at key creation: shown on the key; the key works until then and answers 401 saying it expired after', async () => {
  const { accountId } = await freshTenant(svc.url);
  const expiresAt = new Date(Date.now() + 2_000).toISOString();
  const issued = await http(svc.url, 'POST', `/admin/api/accounts/${accountId}/keys`, {
    token: ADMIN_TOKEN,
    body: { name: 'short-lived', preset: 'read_only', expires_at: expiresAt },
  });
  assert.equal(issued.status, 201, issued.text);
  assert.equal(issued.body.data.expires_at, expiresAt);
  const key = issued.body.key as string;
  assert.equal((await http(svc.url, 'GET', '/api/v1/orders', { token: key })).status, 200, 'works before its expiry (and is now cached)');
  const listed = await http(svc.url, 'GET', `/admin/api/accounts/${accountId}/keys`, { token: ADMIN_TOKEN });
  for (const k of listed.body.data) assert.ok(k.expires_at === null || ISO_RE.test(k.expires_at), 'every key lists expires_at');
  await sleep(Date.parse(expiresAt) - Date.now() + 300);
  const message = await refusal({ authorization: `Bearer ${key}` }, 'expired');
  assert.equal(message, `this API key (${key.slice(0, 11)}) expired at ${expiresAt}`);

  // A key without expires_at never expires; a past or malformed expiry is a 400.
  const plain = await http(svc.url, 'POST', `/admin/api/accounts/${accountId}/keys`, {
    token: ADMIN_TOKEN,
    body: { name: 'p', preset: 'read_only' },
  });
  assert.equal(plain.body.data.expires_at, null);
  for (const bad of [new Date(Date.now() - 60_000).toISOString(), 'tomorrow', 42]) {
    const res = await http(svc.url, 'POST', `/admin/api/accounts/${accountId}/keys`, {
      token: ADMIN_TOKEN,
      body: { name: 'x', preset: 'read_only', expires_at: bad },
    });
    assertError(res, 400, 'validation_failed', `expires_at ${bad}`);
  }
});

test('a start that cannot reach DATABASE_URL names it, with the password hidden', () => {
  const run = spawnSync(process.execPath, ['src/main.ts'], {
    cwd: path.join(import.meta.dirname, '..'),
    env: { PATH: process.env.PATH, DATABASE_URL: 'postgres://merx:s3cret@127.0.0.1:1/merx', DATA_DIR: 'memory://', PORT: '0' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /could not start: .*ECONNREFUSED/);
  assert.match(run.stderr, /DATABASE_URL=postgres:\/\/merx:\*\*\*@127\.0\.0\.1:1\/merx/);
  assert.ok(!run.stderr.includes('s3cret'), run.stderr);
});
