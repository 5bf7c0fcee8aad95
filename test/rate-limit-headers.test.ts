// GAPS General: every authenticated response carries X-RateLimit-Limit and
// X-RateLimit-Remaining, whatever its status. Walks the operation list:
// every REST route answering 2xx, 400, 403 scope_missing, 403 plan_required
// and 404, every MCP tool answering a result, a refusal (SCOPE, PLAN) and a
// -32602, and MCP's HTTP 400 answers to a request with a valid key. A refused
// request counts like any other (docs/decisions.md "Rate limits"), so
// Remaining goes down by one per request, 403 included.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { operations } from '../src/app.ts';
import { admittingScopes, type Operation } from '../src/platform/operations/operation.ts';
import { SCOPES } from '../src/platform/contract/scopes.ts';
import { startTestService, type HttpResult, type TestService } from './helpers/harness.ts';
import { rpc, toolCall, request } from './helpers/mcp.ts';
import { approvalOf, tenant, createTargets, prepareCall, restCall, scopesWithout, targetArgs, type Tenant } from './helpers/registry-fixtures.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const UNKNOWN_ID = '00000000-0000-4000-8000-00000000abcd';
const onRest = operations.filter((op) => op.rest !== false);
const onMcp = operations.filter((op) => op.mcp !== false);

/** The headers are there, Limit is the transport's limit, and Remaining is one less than the last answer to this key said. */
function counted(res: HttpResult, limit: number, last: Map<string, number>, key: string, note: string): void {
  assert.equal(res.headers.get('x-ratelimit-limit'), String(limit), `${note}: X-RateLimit-Limit on ${res.status} ${res.text.slice(0, 200)}`);
  const remaining = res.headers.get('x-ratelimit-remaining');
  assert.match(remaining ?? '', /^\d+$/, `${note}: X-RateLimit-Remaining on ${res.status}`);
  if (last.has(key)) assert.equal(Number(remaining), last.get(key)! - 1, `${note}: the request was counted`);
  last.set(key, Number(remaining));
}

/** One key per operation's admitting scopes, holding none of them (an account holds at most 10 active keys, so each gets its own account). */
const keysWithout = new Map<string, string>();
async function keyWithout(op: Operation): Promise<string> {
  const refused = admittingScopes(op).join(',');
  if (!keysWithout.has(refused)) {
    const t = await tenant(svc);
    keysWithout.set(refused, await t.op.issueKey(t.accountId, { scopes: scopesWithout(op) }));
  }
  return keysWithout.get(refused)!;
}

/** A key holding every scope on a Free account. */
async function freeKey(): Promise<string> {
  const t = await tenant(svc);
  await t.op.call('PATCH', `/accounts/${t.accountId}`, { plan: 'free' });
  return t.key;
}

/** The sample call; an approval is its asking key's alone (EXTENSIONS 7), so get_approval reads one `key` asked for. */
async function callFor(op: Operation, t: Tenant, key: string) {
  const targets = op.name === 'get_approval' ? { id: await approvalOf(t, key) } : await createTargets(op, t);
  return prepareCall(op, targets, t);
}

/** A second every-scope key of the tenant: the fixtures spend the tenant's own key, this one is spent only by the counted requests. */
const countedKey = (t: Tenant) => t.op.issueKey(t.accountId, { scopes: [...SCOPES] });

test('REST: every route carries the rate-limit headers on 2xx, 400, 403 scope_missing, 403 plan_required and 404, and counts each request', async () => {
  const last = new Map<string, number>();
  const t = await tenant(svc);
  const key = await countedKey(t);
  const free = await freeKey();
  for (const op of onRest) {
    const name = `${op.name} (${op.method} ${op.path})`;
    const call = await callFor(op, t, key);

    // EXTENSIONS 7: an operation any valid key may call (scope null) has no scope to miss.
    if (op.scope !== null) {
      const scopeKey = await keyWithout(op);
      const refused = await restCall(svc.url, op, scopeKey, call);
      assert.equal(refused.status, 403, `${name}: ${refused.text}`);
      counted(refused, 300, last, scopeKey, `${name} scope_missing`);
    }

    const plan = await restCall(svc.url, op, free, call);
    assert.equal(plan.body?.error?.code, 'plan_required', `${name}: ${plan.text}`);
    counted(plan, 300, last, free, `${name} plan_required`);

    const separator = call.path.includes('?') ? '&' : '?';
    const bad = await restCall(svc.url, op, key, { ...call, path: `${call.path}${separator}not_a_parameter=1` });
    assert.equal(bad.status, 400, `${name}: ${bad.text}`);
    counted(bad, 300, last, key, `${name} 400`);

    if (targetArgs(op).length) {
      const unknown = Object.fromEntries(targetArgs(op).map((a) => [a.name, UNKNOWN_ID]));
      const missing = await restCall(svc.url, op, key, await prepareCall(op, unknown, t));
      assert.equal(missing.status, 404, `${name}: ${missing.text}`);
      counted(missing, 300, last, key, `${name} 404`);
    }

    const dry: Record<string, string> = op.dryRunOutput ? { 'X-Merx-Dry-Run': '1' } : {};
    const ok = await restCall(svc.url, op, key, call, dry);
    assert.ok(ok.status >= 200 && ok.status < 300, `${name}: ${ok.status} ${ok.text}`);
    counted(ok, 300, last, key, `${name} ${ok.status}`);
  }
});

test('MCP: every tool carries the rate-limit headers on a result, a SCOPE or PLAN refusal and a -32602, and counts each message', async () => {
  const last = new Map<string, number>();
  const t = await tenant(svc);
  const key = await countedKey(t);
  const free = await freeKey();
  for (const op of onMcp) {
    const call = await callFor(op, t, key);
    const args = op.dryRunOutput ? { ...call.args, dry_run: true } : call.args;

    if (op.scope !== null) {
      const scopeKey = await keyWithout(op);
      const refused = await rpc(svc.url, scopeKey, toolCall(op.name, args));
      assert.equal(refused.body?.result?.structuredContent?.error, 'SCOPE', `${op.name}: ${refused.text}`);
      counted(refused, 120, last, scopeKey, `${op.name} SCOPE`);
    }

    const plan = await rpc(svc.url, free, toolCall(op.name, args));
    assert.equal(plan.body?.result?.structuredContent?.error, 'PLAN', `${op.name}: ${plan.text}`);
    counted(plan, 120, last, free, `${op.name} PLAN`);

    const bad = await rpc(svc.url, key, toolCall(op.name, { ...args, not_an_argument: 1 }));
    assert.equal(bad.body?.error?.code, -32602, `${op.name}: ${bad.text}`);
    counted(bad, 120, last, key, `${op.name} -32602`);

    const ok = await rpc(svc.url, key, toolCall(op.name, args));
    assert.equal(ok.body?.result?.isError, false, `${op.name}: ${ok.text}`);
    counted(ok, 120, last, key, `${op.name} result`);
  }
});

test('MCP: HTTP 400 answers to a request with a valid key carry the headers and count as one message; 429 comes before them', async () => {
  const last = new Map<string, number>();
  const t = await tenant(svc);
  const refusedWhole: Array<[string, unknown, Record<string, string>?]> = [
    ['parse error', '{"jsonrpc": "2.0", '],
    ['empty batch', []],
    ['batch over 20', Array.from({ length: 21 }, () => request('ping'))],
    ['not a request', { jsonrpc: '2.0', id: 1 }],
    ['unsupported protocol version', request('ping'), { 'mcp-protocol-version': '1999-01-01' }],
  ];
  for (const [name, payload, headers] of refusedWhole) {
    const res = await rpc(svc.url, t.key, payload, headers);
    assert.equal(res.status, 400, `${name}: ${res.text}`);
    counted(res, 120, last, t.key, name);
  }
  // Spend the rest of the budget, then a request refused whole is a 429 (GAPS check order: 429 before 400).
  let remaining = last.get(t.key)!;
  while (remaining > 0) {
    const batch = Array.from({ length: Math.min(20, remaining) }, () => request('ping'));
    remaining = Number((await rpc(svc.url, t.key, batch)).headers.get('x-ratelimit-remaining'));
  }
  const limited = await rpc(svc.url, t.key, '{"jsonrpc": "2.0", ');
  assert.equal(limited.status, 429, limited.text);
  assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
  assert.match(limited.headers.get('retry-after') ?? '', /^\d+$/);
});
