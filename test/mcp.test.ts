// MCP over raw HTTP (SPEC MCP, Errors "MCP errors", Limits; GAPS "MCP
// details"): JSON-RPC 2.0 on POST /api/mcp, what each message gets back and
// how HTTP frames it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, freshTenant, outboxEvents, type TestService } from './helpers/harness.ts';
import {
  MCP_PATH,
  MCP_VERSIONS,
  rpc,
  request,
  notification,
  toolCall,
  callTool,
  callToolError,
  assertRefusal,
  assertToolResultShape,
} from './helpers/mcp.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const initParams = (protocolVersion: string) => ({
  protocolVersion,
  capabilities: {},
  clientInfo: { name: 'merx-tests', version: '0.0.0' },
});

// ---------------------------------------------------------------- lifecycle

for (const version of MCP_VERSIONS) {
  test(`initialize with protocol version ${version} echoes it back with capabilities, serverInfo and instructions`, async () => {
    const { key } = await freshTenant(svc.url);
    const res = await rpc(svc.url, key, request('initialize', initParams(version), 1));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.body.jsonrpc, '2.0');
    assert.equal(res.body.id, 1);
    assert.equal(res.body.error, undefined);
    const result = res.body.result;
    assert.equal(result.protocolVersion, version);
    assert.deepEqual(result.capabilities, { tools: { listChanged: false } });
    assert.equal(typeof result.serverInfo.name, 'string');
    assert.ok(result.serverInfo.name.length > 0);
    assert.equal(typeof result.serverInfo.version, 'string');
    assert.ok(result.serverInfo.version.length > 0);
    assert.equal(typeof result.instructions, 'string');
    assert.ok(result.instructions.length > 0);
  });
}

test('initialize with an unknown protocol version gets 2025-06-18', async () => {
  const { key } = await freshTenant(svc.url);
  for (const asked of ['1999-01-01', '2025-11-25']) {
    const res = await rpc(svc.url, key, request('initialize', initParams(asked)));
    assert.equal(res.status, 200);
    assert.equal(res.body.result.protocolVersion, '2025-06-18', `asked ${asked}`);
  }
});

test('notifications/initialized alone answers HTTP 202 with an empty body', async () => {
  const { key } = await freshTenant(svc.url);
  const res = await rpc(svc.url, key, notification('notifications/initialized'));
  assert.equal(res.status, 202);
  assert.equal(res.text, '');
});

test('ping answers an empty result', async () => {
  const { key } = await freshTenant(svc.url);
  const res = await rpc(svc.url, key, request('ping', undefined, 'p-1'));
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { jsonrpc: '2.0', id: 'p-1', result: {} });
});

test('MCP responses carry X-RateLimit-Limit: 120 and X-RateLimit-Remaining', async () => {
  const { key } = await freshTenant(svc.url);
  const first = await rpc(svc.url, key, request('ping'));
  assert.equal(first.headers.get('x-ratelimit-limit'), '120');
  assert.equal(first.headers.get('x-ratelimit-remaining'), '119');
  const second = await rpc(svc.url, key, [request('ping'), request('ping')]);
  assert.equal(second.headers.get('x-ratelimit-remaining'), '117', 'a batch of 2 counts 2');
  assert.ok(first.headers.get('x-deploy-sha'));
});

// ---------------------------------------------------------------- tools/list

test('tools/list shows only the tools whose scope the key holds', async () => {
  const { key } = await freshTenant(svc.url, { scopes: ['orders:read'] });
  const res = await rpc(svc.url, key, request('tools/list'));
  assert.equal(res.status, 200);
  const names = res.body.result.tools.map((t: any) => t.name);
  assert.ok(names.includes('list_orders'));
  assert.ok(names.includes('get_order'));
  assert.ok(!names.includes('update_order'), 'update_order needs orders:write');
  for (const tool of res.body.result.tools) {
    assert.equal(typeof tool.description, 'string');
    assert.equal(tool.inputSchema.type, 'object');
  }

  const writer = await freshTenant(svc.url, { scopes: ['orders:write'] });
  const writerTools = (await rpc(svc.url, writer.key, request('tools/list'))).body.result.tools;
  assert.deepEqual(
    writerTools.map((t: any) => t.name).filter((n: string) => ['list_orders', 'get_order', 'update_order'].includes(n)),
    ['update_order'],
    ':write never implies :read',
  );
  const update = writerTools.find((t: any) => t.name === 'update_order');
  assert.equal(update.inputSchema.properties.dry_run.type, 'boolean', 'write tools take dry_run');
  // EXTENSIONS 10 token budgets: the shown schema leaves out the uuid format (compact-schema.ts); the id is still a required string.
  assert.equal(update.inputSchema.properties.id.type, 'string');
  assert.ok(update.inputSchema.required.includes('id'));
});

test('a key with no MCP-visible scopes lists no order tools', async () => {
  const { key } = await freshTenant(svc.url, { preset: 'bridge' });
  const res = await rpc(svc.url, key, request('tools/list'));
  const names = res.body.result.tools.map((t: any) => t.name);
  for (const name of ['list_orders', 'get_order', 'update_order']) assert.ok(!names.includes(name), name);
});

// ---------------------------------------------------------------- tools/call

test('tools/call list_orders, get_order and update_order answer with structuredContent and its text', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);

  const list = await callTool(svc.url, key, 'list_orders', { limit: 10 });
  assert.equal(list.isError, false);
  assert.deepEqual(
    list.structuredContent.data.map((o: any) => o.id),
    [order.id],
  );
  assert.equal(list.structuredContent.has_more, false);
  assert.equal(list.structuredContent.next_cursor, null);

  const one = await callTool(svc.url, key, 'get_order', { id: order.id });
  assert.equal(one.isError, false);
  assert.equal(one.structuredContent.data.id, order.id);
  assert.equal(one.structuredContent.data.status, 'new');

  const updated = await callTool(svc.url, key, 'update_order', { id: order.id, admin_notes: 'packed twice', status: 'confirmed' });
  assert.equal(updated.isError, false);
  assert.equal(updated.structuredContent.data.admin_notes, 'packed twice');
  assert.equal(updated.structuredContent.data.status, 'confirmed');
  assert.equal(updated.structuredContent.status_changed, true);
  assert.equal(updated.structuredContent.email_sent, false);

  // The same JSON as REST (SPEC MCP: structuredContent is the REST body).
  const rest = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  const again = await callTool(svc.url, key, 'get_order', { id: order.id });
  assert.deepEqual(again.structuredContent, rest.body);
});

test('update_order with dry_run: true previews and writes nothing', async () => {
  const { op, accountId, key, account } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const eventsBefore = await outboxEvents(svc.service, accountId);
  const messagesBefore = await op.messages(account.id);

  const preview = await callTool(svc.url, key, 'update_order', { id: order.id, status: 'shipped', tracking_number: 'DRY-1', dry_run: true });
  assert.equal(preview.isError, false);
  assert.equal(preview.structuredContent.dry_run, true);
  assert.equal(preview.structuredContent.data.status, 'new', 'data is the current order');
  assert.deepEqual(preview.structuredContent.changes, { status: 'shipped', tracking_number: 'DRY-1' });
  assert.equal(preview.structuredContent.status_would_change, true);
  assert.equal(preview.structuredContent.would_notify_customer, true);

  const after = await callTool(svc.url, key, 'get_order', { id: order.id });
  assert.equal(after.structuredContent.data.status, 'new');
  assert.equal(after.structuredContent.data.tracking_number, null);
  assert.deepEqual(after.structuredContent.data, order);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(await outboxEvents(svc.service, accountId), eventsBefore);
  assert.deepEqual(await op.messages(account.id), messagesBefore);
});

test("get_order of another account's order is a NOT_FOUND refusal", async () => {
  const a = await freshTenant(svc.url);
  const b = await freshTenant(svc.url);
  const order = await a.op.checkout(a.accountId);
  const result = await callTool(svc.url, b.key, 'get_order', { id: order.id });
  assertRefusal(result, 'NOT_FOUND');
  const update = await callTool(svc.url, b.key, 'update_order', { id: order.id, admin_notes: 'x' });
  assertRefusal(update, 'NOT_FOUND');
  const unknown = await callTool(svc.url, b.key, 'get_order', { id: '00000000-0000-4000-8000-000000000000' });
  assertRefusal(unknown, 'NOT_FOUND');
});

test('a tool outside the key scopes is a SCOPE refusal', async () => {
  const { op, accountId, key } = await freshTenant(svc.url, { scopes: ['orders:read'] });
  const order = await op.checkout(accountId);
  const result = await callTool(svc.url, key, 'update_order', { id: order.id, admin_notes: 'x' });
  assertRefusal(result, 'SCOPE');
  const unchanged = await callTool(svc.url, key, 'get_order', { id: order.id });
  assert.equal(unchanged.structuredContent.data.admin_notes, null);
});

test('a Free plan key: initialize, ping and tools/list answer; every tools/call is a PLAN refusal', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  await op.call('PATCH', `/accounts/${accountId}`, { plan: 'free' });
  const order = await op.checkout(accountId);

  const init = await rpc(svc.url, key, request('initialize', initParams('2025-06-18')));
  assert.equal(init.status, 200);
  assert.equal(init.body.result.protocolVersion, '2025-06-18');
  const ping = await rpc(svc.url, key, request('ping'));
  assert.deepEqual(ping.body.result, {});
  const list = await rpc(svc.url, key, request('tools/list'));
  assert.ok(list.body.result.tools.some((t: any) => t.name === 'list_orders'));

  assertRefusal(await callTool(svc.url, key, 'list_orders'), 'PLAN');
  assertRefusal(await callTool(svc.url, key, 'get_order', { id: order.id }), 'PLAN');
  assertRefusal(await callTool(svc.url, key, 'update_order', { id: order.id, admin_notes: 'x', dry_run: true }), 'PLAN');
});

// ---------------------------------------------------------------- protocol errors

test('an unknown tool is JSON-RPC error -32602', async () => {
  const { key } = await freshTenant(svc.url);
  const error = await callToolError(svc.url, key, 'launch_rockets', {});
  assert.equal(error.code, -32602);
  assert.equal(typeof error.message, 'string');
  // A tool without a REST twin on MCP: the PDF label has none (SPEC MCP).
  assert.equal((await callToolError(svc.url, key, 'get_shipment_label', {})).code, -32602);
});

test('bad tool arguments are JSON-RPC error -32602', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const cases: Array<[string, Record<string, unknown>]> = [
    ['get_order', { id: 'not-a-uuid' }],
    ['get_order', { id: '1001' }],
    ['get_order', {}],
    ['get_order', { id: order.id, expand: 'customer' }],
    ['list_orders', { colour: 'red' }],
    ['list_orders', { limit: 0 }],
    ['list_orders', { limit: 'ten' }],
    ['list_orders', { status: 'lost' }],
    ['list_orders', { dry_run: true }],
    ['update_order', { id: order.id, total: 1 }],
    ['update_order', { id: order.id, status: 'teleported' }],
    ['update_order', { id: order.id, admin_notes: 'x', dry_run: 'yes' }],
  ];
  for (const [name, args] of cases) {
    const error = await callToolError(svc.url, key, name, args);
    assert.equal(error.code, -32602, `${name} ${JSON.stringify(args)}: ${JSON.stringify(error)}`);
  }
  const res = await rpc(svc.url, key, request('tools/call', { name: 'get_order', arguments: ['x'] }));
  assert.equal(res.body.error.code, -32602, 'arguments must be an object');
  const unchanged = await callTool(svc.url, key, 'get_order', { id: order.id });
  assert.equal(unchanged.structuredContent.data.total, order.total);
});

test('an unknown method is JSON-RPC error -32601', async () => {
  const { key } = await freshTenant(svc.url);
  for (const method of ['resources/list', 'prompts/list', 'tools/destroy']) {
    const res = await rpc(svc.url, key, request(method, {}, 7));
    assert.equal(res.status, 200);
    assert.equal(res.body.id, 7);
    assert.equal(res.body.error.code, -32601, method);
  }
});

test('a parse error is HTTP 400 with JSON-RPC error -32700', async () => {
  const { key } = await freshTenant(svc.url);
  for (const raw of ['{"jsonrpc":"2.0","id":1,"method":', 'not json at all', '']) {
    const res = await rpc(svc.url, key, raw);
    assert.equal(res.status, 400, JSON.stringify(raw));
    assert.equal(res.body.jsonrpc, '2.0');
    assert.equal(res.body.id, null);
    assert.equal(res.body.error.code, -32700);
  }
});

test('an empty batch is HTTP 400 with JSON-RPC error -32600', async () => {
  const { key } = await freshTenant(svc.url);
  const res = await rpc(svc.url, key, '[]');
  assert.equal(res.status, 400);
  assert.match(res.headers.get('content-type') ?? '(none)', /^application\/json/);
  assert.equal(res.body.jsonrpc, '2.0');
  assert.equal(res.body.id, null);
  assert.equal(res.body.error.code, -32600);
});

test('an invalid top-level message is HTTP 400 with JSON-RPC error -32600', async () => {
  const { key } = await freshTenant(svc.url);
  for (const payload of [42, 'hello', null, { foo: 1 }, { jsonrpc: '1.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 1 }]) {
    const res = await rpc(svc.url, key, JSON.stringify(payload));
    assert.equal(res.status, 400, JSON.stringify(payload));
    assert.equal(res.body.jsonrpc, '2.0');
    assert.equal(res.body.error.code, -32600, JSON.stringify(payload));
  }
});

test('a batch of 21 messages is HTTP 400 with JSON-RPC error -32600, and nothing of it runs', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const batch = [
    toolCall('update_order', { id: order.id, admin_notes: 'from a too-big batch' }),
    ...Array.from({ length: 20 }, () => request('ping')),
  ];
  const res = await rpc(svc.url, key, batch);
  assert.equal(res.status, 400);
  assert.equal(res.body.jsonrpc, '2.0');
  assert.equal(res.body.error.code, -32600);
  const unchanged = await callTool(svc.url, key, 'get_order', { id: order.id });
  assert.equal(unchanged.structuredContent.data.admin_notes, null);
});

test('a batch of 20 mixing allowed, forbidden and unknown tools and a notification answers each request on its own terms', async () => {
  const { op, accountId, key } = await freshTenant(svc.url, { scopes: ['orders:read'] });
  const order = await op.checkout(accountId);
  const batch = [
    request('initialize', initParams('2025-03-26'), 'init'),
    notification('notifications/initialized'),
    request('ping', undefined, 'ping'),
    request('tools/list', {}, 'list'),
    toolCall('list_orders', {}, 'ok-list'),
    toolCall('get_order', { id: order.id }, 'ok-get'),
    toolCall('update_order', { id: order.id, admin_notes: 'x' }, 'scope'),
    toolCall('no_such_tool', {}, 'unknown-tool'),
    toolCall('get_order', { id: 'nope' }, 'bad-args'),
    toolCall('get_order', { id: '00000000-0000-4000-8000-000000000000' }, 'not-found'),
    request('resources/list', {}, 'unknown-method'),
    { jsonrpc: '2.0', id: 'invalid' },
    ...Array.from({ length: 8 }, (_, i) => toolCall('get_order', { id: order.id }, i)),
  ];
  assert.equal(batch.length, 20);
  const res = await rpc(svc.url, key, batch);
  assert.equal(res.status, 200);
  assert.ok(Array.isArray(res.body), 'a batch answers with an array');
  assert.equal(res.body.length, 19, 'one answer per request, none for the notification');
  const byId = new Map<unknown, any>(res.body.map((r: any) => [r.id, r]));
  assert.equal(byId.size, 19, 'ids are distinct');
  for (const r of res.body) assert.equal(r.jsonrpc, '2.0');

  assert.equal(byId.get('init').result.protocolVersion, '2025-03-26');
  assert.deepEqual(byId.get('ping').result, {});
  assert.ok(byId.get('list').result.tools.some((t: any) => t.name === 'get_order'));
  const okList = byId.get('ok-list').result;
  assertToolResultShape(okList);
  assert.equal(okList.isError, false);
  assert.deepEqual(
    okList.structuredContent.data.map((o: any) => o.id),
    [order.id],
  );
  const okGet = byId.get('ok-get').result;
  assert.equal(okGet.isError, false);
  assert.equal(okGet.structuredContent.data.id, order.id);
  assertRefusal(byId.get('scope').result, 'SCOPE');
  assert.equal(byId.get('unknown-tool').error.code, -32602);
  assert.equal(byId.get('bad-args').error.code, -32602);
  assertRefusal(byId.get('not-found').result, 'NOT_FOUND');
  assert.equal(byId.get('unknown-method').error.code, -32601);
  assert.equal(byId.get('invalid').error.code, -32600);
  for (let i = 0; i < 8; i++) assert.equal(byId.get(i).result.structuredContent.data.id, order.id);
});

test('a batch of notifications only answers HTTP 202 with an empty body', async () => {
  const { key } = await freshTenant(svc.url);
  const res = await rpc(svc.url, key, [notification('notifications/initialized'), notification('notifications/cancelled', { requestId: 1 })]);
  assert.equal(res.status, 202);
  assert.equal(res.text, '');
});

// ---------------------------------------------------------------- HTTP framing

test('GET and DELETE /api/mcp answer 405 with Allow', async () => {
  const { key } = await freshTenant(svc.url);
  for (const method of ['GET', 'DELETE']) {
    for (const token of [key, undefined]) {
      const res = await http(svc.url, method, MCP_PATH, { token, headers: { accept: 'text/event-stream' } });
      assert.equal(res.status, 405, `${method} ${token ? 'with' : 'without'} key`);
      const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim());
      assert.ok(allow.includes('POST'), `Allow: ${res.headers.get('allow')}`);
      assert.ok(!allow.includes(method));
      assert.equal(res.body.error.code, 'method_not_allowed');
    }
  }
});

test('POST /api/mcp without a valid key is 401 with WWW-Authenticate and the REST error body', async () => {
  const cases: Array<string | undefined> = [undefined, 'merx_' + 'x'.repeat(40), 'not-a-key'];
  for (const token of cases) {
    const res = await rpc(svc.url, token, request('initialize', initParams('2025-06-18')));
    assert.equal(res.status, 401);
    // EXTENSIONS 10: the challenge names the protected resource metadata (RFC 9728); the body is SPEC's.
    assert.match(
      res.headers.get('www-authenticate')!,
      /^Bearer resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/api\/mcp"$/,
    );
    assert.match(res.headers.get('content-type') ?? '(none)', /^application\/json/, 'the JSON error body is labelled as JSON');
    assert.equal(res.body.error.code, 'unauthorized');
    assert.equal(typeof res.body.error.message, 'string');
    assert.equal(res.body.jsonrpc, undefined, 'the REST error body, not JSON-RPC');
  }
  // A bad key is refused before the body is read: even malformed JSON gets 401.
  const garbage = await rpc(svc.url, undefined, '{{{');
  assert.equal(garbage.status, 401);
});

test('a revoked key is 401 on MCP', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const keys = (await op.call('GET', `/accounts/${accountId}/keys`)).data;
  await op.call('DELETE', `/keys/${keys[0].id}`);
  const res = await rpc(svc.url, key, request('ping'));
  assert.equal(res.status, 401);
  assert.equal(res.body.error.code, 'unauthorized');
});

// ---------------------------------------------------------------- rate limit

test('120 messages a minute: six batches of 20 pass, the next message is HTTP 429 with the JSON-RPC rate-limit body', async () => {
  const { key } = await freshTenant(svc.url);
  for (let round = 0; round < 6; round++) {
    const res = await rpc(
      svc.url,
      key,
      Array.from({ length: 20 }, () => request('ping')),
    );
    assert.equal(res.status, 200, `batch ${round + 1}`);
    assert.equal(res.body.length, 20);
    for (const r of res.body) assert.deepEqual(r.result, {}, `batch ${round + 1}: ${JSON.stringify(r)}`);
    assert.equal(res.headers.get('x-ratelimit-remaining'), String(120 - 20 * (round + 1)));
  }
  const res = await rpc(svc.url, key, request('ping'));
  assert.equal(res.status, 429);
  assert.match(res.headers.get('content-type') ?? '(none)', /^application\/json/);
  assert.equal(res.headers.get('x-ratelimit-limit'), '120');
  assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${res.headers.get('retry-after')}`);
  assert.equal(res.body.jsonrpc, '2.0');
  assert.equal(res.body.id, null);
  assert.equal(res.body.error.code, -32000);
  assert.equal(typeof res.body.error.message, 'string');
  assert.equal(res.body.error.data.retry_after_sec, retryAfter);
  assert.equal(res.body.retryAfterSec, retryAfter);
  assert.deepEqual(Object.keys(res.body).sort(), ['error', 'id', 'jsonrpc', 'retryAfterSec']);

  // tools/call is limited like any other message.
  const blocked = await rpc(svc.url, key, toolCall('list_orders'));
  assert.equal(blocked.status, 429);
});

test('a batch counts N: after 110 messages a batch of 20 gets 10 answers and 10 -32000 errors', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  for (let i = 0; i < 5; i++)
    assert.equal(
      (
        await rpc(
          svc.url,
          key,
          Array.from({ length: 20 }, () => request('ping')),
        )
      ).status,
      200,
    );
  for (let i = 0; i < 10; i++) assert.equal((await rpc(svc.url, key, request('ping'))).status, 200);

  const batch = Array.from({ length: 20 }, (_, i) => (i % 2 ? request('ping', undefined, i) : toolCall('list_orders', {}, i)));
  const res = await rpc(svc.url, key, batch);
  assert.equal(res.status, 200);
  assert.equal(res.body.length, 20);
  const answered = res.body.filter((r: any) => r.result !== undefined);
  const limited = res.body.filter((r: any) => r.error?.code === -32000);
  assert.equal(answered.length, 10);
  assert.equal(limited.length, 10);
  for (const r of limited) {
    assert.equal(typeof r.id, 'number');
    assert.ok(Number.isInteger(r.error.data.retry_after_sec) && r.error.data.retry_after_sec >= 1);
  }
  assert.deepEqual(
    [...answered.map((r: any) => r.id), ...limited.map((r: any) => r.id)].sort((x: number, y: number) => x - y),
    Array.from({ length: 20 }, (_, i) => i),
    'every request is answered, once',
  );
  assert.equal(res.headers.get('x-ratelimit-remaining'), '0');

  // Another key of the same account is counted on its own (SPEC Limits: per key).
  const other = await op.issueKey(accountId);
  assert.equal((await rpc(svc.url, other, request('ping'))).status, 200);
});
