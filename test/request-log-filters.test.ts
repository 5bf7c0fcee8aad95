// Issue 41 item 4: the request log does not drown in polling. Filters writes
// (true/false) and errors (true/false) beside operation, on REST, MCP and the
// operator API; `merx listen` backs off while the feed is idle, says where it
// looks, and says "Ready." only once the service answered.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startTestService, http, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { rpc, toolCall } from './helpers/mcp.ts';
import { checkoutWith, shipTenant } from './helpers/shipments.ts';
import { eventually } from './helpers/webhooks.ts';
import { freePort } from './helpers/service-child.ts';
import { listen } from '../src/cli/listen.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService({ WORKERS: '0' });
});
after(async () => {
  await svc?.close();
});

const ROOT = path.join(import.meta.dirname, '..');
/** `merx listen` as a child (the service runs in this process: its event loop must stay free). */
function runListen(env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const args = ['bin/merx.js', 'listen', '--forward-to', 'http://localhost:4000/hooks', '--key', `merx_${'a'.repeat(40)}`];
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, DATA_DIR: '/nonexistent/merx-listen', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const WRITES = new Set(['update_order', 'create_shipment', 'create_webhook']);

test('writes and errors filters on REST, MCP and the operator API, alone, together and with operation', async () => {
  const t = await shipTenant(svc);
  const order = await checkoutWith(svc, t.accountId, 'courier_a');
  const calls = [
    http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: t.key }), // read, 200
    http(svc.url, 'GET', '/api/v1/events?limit=1', { token: t.key }), // read, 200 (what merx listen polls)
    http(svc.url, 'GET', '/api/v1/orders/00000000-0000-4000-8000-000000000000', { token: t.key }), // read, 404
    http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: t.key, body: { admin_notes: 'w' } }), // write, 200
    http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: t.key, body: { status: 'nonsense' } }), // write, 400
    rpc(svc.url, t.key, toolCall('update_order', { id: order.id, admin_notes: 'via mcp' })), // write, 200 (MCP: method POST)
    rpc(svc.url, t.key, toolCall('list_orders', { limit: 1 })), // read, 200 (MCP: method POST too)
  ];
  for (const call of calls) await call;
  const all = await eventually(async () => {
    const res = await http(svc.url, 'GET', '/api/v1/request-logs?limit=100', { token: t.key });
    return res.body.data.length >= 7 && res.body.data;
  }, 'seven entries');
  const expect = (filter: (e: any) => boolean) =>
    all
      .filter(filter)
      .map((e: any) => e.id)
      .sort();
  const cases: Array<[string, (e: any) => boolean]> = [
    ['writes=true', (e) => WRITES.has(e.operation)],
    ['writes=false', (e) => !WRITES.has(e.operation)],
    ['errors=true', (e) => e.status >= 400],
    ['errors=false', (e) => e.status < 400],
    ['writes=true&errors=true', (e) => WRITES.has(e.operation) && e.status >= 400],
    ['writes=false&errors=true', (e) => !WRITES.has(e.operation) && e.status >= 400],
    ['writes=true&operation=update_order', (e) => e.operation === 'update_order'],
    ['writes=false&operation=update_order', () => false],
  ];
  for (const [query, filter] of cases) {
    const wanted = expect(filter);
    const rest = await http(svc.url, 'GET', `/api/v1/request-logs?limit=100&${query}`, { token: t.key });
    assert.equal(rest.status, 200, rest.text);
    // Only the entries of the calls above (the log lists the listing requests themselves too, after them).
    const got = rest.body.data
      .filter((e: any) => all.some((a: any) => a.id === e.id))
      .map((e: any) => e.id)
      .sort();
    assert.deepEqual(got, wanted, `REST ${query}`);
    const params = Object.fromEntries(new URLSearchParams(query));
    const args = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v === 'true' ? true : v === 'false' ? false : v]));
    const mcp = await rpc(svc.url, t.key, toolCall('list_request_logs', { limit: 100, ...args }));
    const mcpIds = mcp.body.result.structuredContent.data
      .filter((e: any) => all.some((a: any) => a.id === e.id))
      .map((e: any) => e.id)
      .sort();
    assert.deepEqual(mcpIds, wanted, `MCP ${query}`);
    const op = await http(svc.url, 'GET', `/admin/api/accounts/${t.accountId}/request-logs?limit=100&${query}`, { token: ADMIN_TOKEN });
    assert.equal(op.status, 200, op.text);
    assert.deepEqual(
      op.body.data
        .filter((e: any) => all.some((a: any) => a.id === e.id))
        .map((e: any) => e.id)
        .sort(),
      wanted,
      `operator ${query}`,
    );
  }
  // Not a boolean: 400 in the contract's shape.
  const bad = await http(svc.url, 'GET', '/api/v1/request-logs?writes=maybe', { token: t.key });
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.body.error.code, 'validation_failed');
});

test('merx listen backs off while the feed is idle: the wait between polls doubles up to the idle cap', async () => {
  const t = await shipTenant(svc);
  const stop = new AbortController();
  const lines: string[] = [];
  const running = listen({
    forwardTo: 'http://127.0.0.1:9/unused',
    baseUrl: svc.url,
    key: t.key,
    events: [],
    pollMs: 60,
    maxIdleMs: 240,
    print: (line) => lines.push(line),
    signal: stop.signal,
  });
  const polls = await eventually(async () => {
    const res = await http(svc.url, 'GET', `/admin/api/accounts/${t.accountId}/request-logs?operation=list_events&limit=100`, { token: ADMIN_TOKEN });
    return res.body.data.length >= 7 && res.body.data;
  }, 'seven polls');
  stop.abort();
  await running;
  assert.ok(lines.includes('Ready. Ctrl-C stops.'));
  const at = polls.map((e: any) => Date.parse(e.at)).reverse();
  // The first read is the check before "Ready."; then waits of 120, 240, 240, ... ms (doubling from 60, capped at 240).
  // Lower bounds only: a wait is at least as long as planned, whatever the machine's load.
  const planned = [120, 240, 240, 240, 240, 240];
  for (let i = 1; i < Math.min(at.length, planned.length + 1); i++) {
    assert.ok(at[i] - at[i - 1] >= planned[i - 1] - 2, `poll ${i} came ${at[i] - at[i - 1]} ms after the one before; planned ${planned[i - 1]}`);
  }
  // Polls are reads: the writes filter folds them all away.
  const writes = await http(svc.url, 'GET', `/admin/api/accounts/${t.accountId}/request-logs?writes=true`, { token: ADMIN_TOKEN });
  assert.equal(writes.body.data.filter((e: any) => e.operation === 'list_events').length, 0);
});

test('merx listen without --base-url: says which address it follows and why, and stops before "Ready." when nothing answers there', async () => {
  const port = await freePort();
  const run = await runListen({ PORT: String(port) });
  const out = run.stdout + run.stderr;
  assert.equal(run.code, 1, out);
  assert.match(
    out,
    new RegExp(
      `Following http://localhost:${port}/api/v1/events \\(the base URL from the default \\(no --base-url, MERX_BASE_URL or server running from /nonexistent/merx-listen\\)\\)`,
    ),
  );
  assert.match(out, new RegExp(`cannot reach Merx at http://localhost:${port} \\(ECONNREFUSED\\): is it running\\? Pass --base-url`));
  assert.ok(!out.includes('Ready.'), out);

  // MERX_BASE_URL named as the source; a service that answers, then Ready.
  const named = await runListen({ MERX_BASE_URL: svc.url });
  assert.equal(named.code, 1);
  assert.match(named.stdout + named.stderr, /\(the base URL from MERX_BASE_URL\)/);
  assert.match(named.stderr, /401 unknown API key/, 'the key is checked before Ready.');
  assert.ok(!named.stdout.includes('Ready.'));
});
