// The official MCP SDK client against /api/mcp (DESIGN "one operation, three
// faces"): it connects, lists and calls tools, and every structuredContent is
// the same JSON REST answers for the same request (parity).
//
// Protocol versions: the SDK's Client has no option to choose the version it
// asks for (connect() always sends its LATEST_PROTOCOL_VERSION, 2025-11-25 in
// SDK 1.32, which Merx does not speak, so Merx answers 2025-06-18 and the SDK
// accepts that). To exercise each of SPEC's three versions through the real
// SDK, the transport's documented `fetch` option is used to rewrite the
// protocolVersion of the initialize request on its way out; everything after
// that (header MCP-Protocol-Version on every later request, result parsing)
// is the SDK's own behaviour.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, http, freshTenant, outboxEvents, type TestService } from './helpers/harness.ts';
import { MCP_VERSIONS } from './helpers/mcp.ts';
import { connectSdk, structuredOf } from './helpers/sdk-client.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

/** The shared SDK connection helper; `transportErrors` names what the client reported through onerror. */
async function connect(key: string, forceVersion?: string) {
  const connection = await connectSdk(svc.url, key, forceVersion);
  return { ...connection, transportErrors: connection.errors };
}

async function rest(method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await http(svc.url, method, path, { token: key, body, headers });
  assert.ok(res.status < 300, `${method} ${path} -> ${res.status} ${res.text}`);
  return res.body;
}

const structured = structuredOf;

test('the SDK connects with its own default version and is answered 2025-06-18', async () => {
  const { key } = await freshTenant(svc.url);
  const { client, transport, seen, transportErrors } = await connect(key);
  try {
    assert.equal(transport.protocolVersion, '2025-06-18');
    assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false } });
    const info = client.getServerVersion();
    assert.ok(info?.name && info.version);
    assert.ok((client.getInstructions() ?? '').length > 0);
    await client.ping();
    const init = seen.find((s) => s.rpcMethods.includes('initialize'));
    assert.equal(init?.status, 200);
    const initialized = seen.find((s) => s.rpcMethods.includes('notifications/initialized'));
    assert.equal(initialized?.status, 202);
    // The SDK probes GET for a server-to-client stream; 405 tells it there is none (SPEC MCP: GET answers 405).
    for (const s of seen.filter((x) => x.method === 'GET')) assert.equal(s.status, 405);
    assert.deepEqual(transportErrors, []);
  } finally {
    await client.close();
  }
});

for (const version of MCP_VERSIONS) {
  test(`SDK client on protocol ${version}: listTools and callTool match REST (parity)`, async () => {
    const { op, accountId, key } = await freshTenant(svc.url);
    const first = await op.checkout(accountId);
    const second = await op.checkout(accountId, { customer: { name: 'Boris Ivanov', email: 'boris@example.com', phone: '+359888000222' } });
    const { client, transport, seen, transportErrors } = await connect(key, version);
    try {
      assert.equal(transport.protocolVersion, version, 'the server echoed the requested version');
      const afterInit = seen.filter((s) => s.method === 'POST' && !s.rpcMethods.includes('initialize'));
      assert.ok(afterInit.length > 0);
      for (const s of afterInit) assert.equal(s.protocolHeader, version, 'later requests carry MCP-Protocol-Version');

      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of ['list_orders', 'get_order', 'update_order']) assert.ok(names.includes(name), name);
      const update = tools.find((t) => t.name === 'update_order')!;
      assert.equal((update.inputSchema.properties as any).dry_run.type, 'boolean');

      // list_orders: the same page as GET /api/v1/orders, filters and paging included.
      const list = structured(await client.callTool({ name: 'list_orders', arguments: {} }));
      assert.deepEqual(list, await rest('GET', '/api/v1/orders', key));
      assert.deepEqual(
        list.data.map((o: any) => o.id),
        [second.id, first.id],
      );
      const page = structured(await client.callTool({ name: 'list_orders', arguments: { limit: 1 } }));
      assert.deepEqual(page, await rest('GET', '/api/v1/orders?limit=1', key));
      assert.equal(page.has_more, true);
      const next = structured(await client.callTool({ name: 'list_orders', arguments: { limit: 1, cursor: page.next_cursor } }));
      assert.deepEqual(next, await rest('GET', `/api/v1/orders?limit=1&cursor=${encodeURIComponent(page.next_cursor)}`, key));
      assert.deepEqual(
        next.data.map((o: any) => o.id),
        [first.id],
      );
      const searched = structured(await client.callTool({ name: 'list_orders', arguments: { q: 'boris', status: 'new' } }));
      assert.deepEqual(searched, await rest('GET', '/api/v1/orders?q=boris&status=new', key));
      assert.deepEqual(
        searched.data.map((o: any) => o.id),
        [second.id],
      );

      // get_order
      const one = structured(await client.callTool({ name: 'get_order', arguments: { id: first.id } }));
      assert.deepEqual(one, await rest('GET', `/api/v1/orders/${first.id}`, key));

      // update_order, dry run: the same preview as PATCH with X-Merx-Dry-Run, and nothing written.
      const events = await outboxEvents(svc.service, accountId);
      const change = { status: 'shipped', tracking_number: 'SDK-1', admin_notes: 'checked' };
      const preview = structured(await client.callTool({ name: 'update_order', arguments: { id: first.id, ...change, dry_run: true } }));
      const restPreview = await rest('PATCH', `/api/v1/orders/${first.id}`, key, change, { 'X-Merx-Dry-Run': '1' });
      assert.deepEqual(preview, restPreview);
      assert.equal(preview.dry_run, true);
      assert.deepEqual(preview.data, one.data);
      assert.deepEqual(await rest('GET', `/api/v1/orders/${first.id}`, key), one, 'the dry run wrote nothing');
      assert.deepEqual(await outboxEvents(svc.service, accountId), events);

      // update_order for real: the result's order is what REST then reads.
      const done = structured(
        await client.callTool({ name: 'update_order', arguments: { id: first.id, admin_notes: `via ${version}`, notify_customer: false } }),
      );
      assert.equal(done.status_changed, false);
      assert.equal(done.email_sent, false);
      assert.deepEqual({ data: done.data }, await rest('GET', `/api/v1/orders/${first.id}`, key));
      assert.equal(done.data.admin_notes, `via ${version}`);

      for (const s of seen.filter((x) => x.method === 'POST' && !x.rpcMethods.includes('initialize'))) assert.equal(s.protocolHeader, version);
      assert.deepEqual(transportErrors, []);
    } finally {
      await client.close();
    }
  });
}

test('SDK client: refusals come back as isError results, protocol errors as McpError', async () => {
  const a = await freshTenant(svc.url);
  const b = await freshTenant(svc.url, { scopes: ['orders:read'] });
  const foreign = await a.op.checkout(a.accountId);
  const own = await b.op.checkout(b.accountId);
  const { client } = await connect(b.key);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('get_order'));
    assert.ok(!names.includes('update_order'), 'orders:read only');

    const notFound: any = await client.callTool({ name: 'get_order', arguments: { id: foreign.id } });
    assert.equal(notFound.isError, true);
    assert.equal(notFound.structuredContent.error, 'NOT_FOUND');
    assert.equal(typeof notFound.structuredContent.reason, 'string');

    const scope: any = await client.callTool({ name: 'update_order', arguments: { id: own.id, admin_notes: 'x' } });
    assert.equal(scope.isError, true);
    assert.equal(scope.structuredContent.error, 'SCOPE');

    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (err: unknown) => err instanceof McpError && err.code === -32602);
    await assert.rejects(
      client.callTool({ name: 'get_order', arguments: { id: 'not-a-uuid' } }),
      (err: unknown) => err instanceof McpError && err.code === -32602,
    );
  } finally {
    await client.close();
  }
});

test('SDK client without a valid key cannot connect', async () => {
  await assert.rejects(connect('merx_' + 'A'.repeat(40)));
});
