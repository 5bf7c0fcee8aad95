// Every tool of SPEC's MCP table, called through the official SDK client
// (@modelcontextprotocol/sdk, Streamable HTTP) on each of the three protocol
// versions, answers with the same JSON as its REST twin (SPEC MCP:
// "structuredContent (same JSON as REST)").
//   - reads: the same call both ways, compared exactly;
//   - writes: the dry-run previews both ways (dry_run: true vs X-Merx-Dry-Run: 1),
//     compared exactly; then the real write, compared exactly with a REST read
//     of what it made, and with the same REST write on a twin resource where
//     only ids, numbers, times and per-resource secrets may differ;
//   - bridge tools (MCP only): the shapes of GAPS "Bridge tools", driven
//     through the operator API (briefs status, asset activity).
// tools/list for an every-scope key is checked against the operation
// registry (SPEC's table among it), the OpenAPI twin of each tool's arguments,
// and truthful annotations. Which tools there are, their scopes and their REST
// twins are read from the registry; what is claimed of each tool is keyed by
// its name, and a new tool without a claim or a walk fails, saying what to add.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startTestService, http, freshTenant, operator, type TestService } from './helpers/harness.ts';
import { MCP_VERSIONS } from './helpers/mcp.ts';
import { portableSchema } from '../src/transports/portable-schema.ts';
import { compactSchema } from '../src/transports/compact-schema.ts';
import { connectSdk, structuredOf, type SdkConnection } from './helpers/sdk-client.ts';
import { SCOPES } from '../src/platform/contract/scopes.ts';
import { withPublicText } from '../src/transports/public-text.ts';
import { operations } from '../src/app.ts';

// SPEC MCP, the tool table: tool -> scope. The contract, not a copy of the operation list: the registry must serve each.
const SPEC_TOOLS: Record<string, string> = {
  list_orders: 'orders:read',
  get_order: 'orders:read',
  update_order: 'orders:write',
  get_shipment: 'shipments:read',
  create_shipment: 'shipments:write',
  cancel_shipment: 'shipments:write',
  get_inventory_stock: 'inventory:read',
  list_stock_movements: 'inventory:read',
  record_stock_movement: 'inventory:write',
  list_products: 'products:read',
  get_product: 'products:read',
  create_product: 'products:write',
  update_product: 'products:write',
  list_customers: 'customers:read',
  list_segments: 'customers:read',
  create_segment: 'customers:write',
  update_segment: 'customers:write',
  delete_segment: 'customers:write',
  add_segment_members: 'customers:write',
  remove_segment_members: 'customers:write',
  add_customer_note: 'customers:write',
  list_webhooks: 'webhooks:read',
  list_webhook_deliveries: 'webhooks:read',
  create_webhook: 'webhooks:write',
  update_webhook: 'webhooks:write',
  delete_webhook: 'webhooks:write',
  test_webhook: 'webhooks:write',
  submit_brief: 'submit_brief',
  get_status: 'get_status',
  get_facts: 'get_facts',
};

// Everything else is read from the operation list, so a new tool is checked here without a line of this file
// (and the walk's last test asks where its parity is proven).
const MCP_OPERATIONS = operations.filter((op) => op.mcp !== false);
/** Each tool and every scope whose key lists it: its scope and alsoAdmittedBy; EXTENSIONS 7: no scope = every key. */
const TOOL_SCOPES: Record<string, string[]> = Object.fromEntries(
  MCP_OPERATIONS.map((op) => [op.name, op.scope === null ? [...SCOPES] : [op.scope, ...(op.alsoAdmittedBy ?? [])]]),
);
// A read is named for what it does (SPEC MCP's names), not for its annotations, which the tests below check.
const READ_TOOLS = Object.keys(TOOL_SCOPES).filter((name) => /^(list|get|verify)_/.test(name));
const WRITE_TOOLS = Object.keys(TOOL_SCOPES).filter((name) => !READ_TOOLS.includes(name));
const ALL_SCOPES = [...SCOPES];
const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');
/** The REST twin of each tool: its own route, and the REST-only routes MCP reaches through it (get_shipment has two); bridge tools none. */
const REST_TWINS: Record<string, Array<{ method: string; path: string }>> = Object.fromEntries(
  MCP_OPERATIONS.map((tool) => [
    tool.name,
    operations
      .filter((op) => op.rest !== false && (op.name === tool.name || op.mcpVia === tool.name))
      .map((op) => ({ method: op.method.toLowerCase(), path: openApiPath(op.path) })),
  ]).filter(([, twins]) => twins.length > 0),
);
/**
 * Tools the walk below does not call, and the test that compares each with
 * its REST twin through MCP instead. A tool neither walked nor named here
 * fails the walk's last test.
 */
const PARITY_ELSEWHERE: Record<string, string> = {
  list_events: 'test/events-feed.test.ts',
  rotate_webhook_secret: 'test/webhooks-standard.test.ts',
  verify_webhook_signature: 'test/webhooks-verify-signature.test.ts',
  list_request_logs: 'test/request-log.test.ts',
  get_approval: 'test/approvals.test.ts',
  list_delivery_attempts: 'test/webhook-attempts.test.ts',
  get_webhook_health: 'test/webhook-attempts.test.ts',
  recover_webhook_deliveries: 'test/webhook-recovery.test.ts',
  get_recovery: 'test/webhook-recovery.test.ts',
  cancel_recovery: 'test/webhook-recovery.test.ts',
  create_shipment_batch: 'test/shipment-batches.test.ts',
  get_shipment_batch: 'test/shipment-batches.test.ts',
  list_shipment_batch_items: 'test/shipment-batches.test.ts',
  cancel_shipment_batch: 'test/shipment-batches.test.ts',
  get_webhook_flow: 'test/webhook-flow.test.ts',
  update_webhook_flow: 'test/webhook-flow.test.ts',
};

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const DRY = { 'X-Merx-Dry-Run': '1' };

let svc: TestService;
before(async () => {
  // This file is about parity, not limits (test/mcp.test.ts and test/mcp-batch.test.ts prove those):
  // one key makes a few hundred calls here, so the per-key limits are raised through their config knobs.
  svc = await startTestService({ RATE_LIMIT_MCP_PER_MINUTE: '100000', RATE_LIMIT_REST_PER_MINUTE: '100000' });
});
after(async () => {
  await svc.close();
});

interface World {
  op: ReturnType<typeof operator>;
  accountId: string;
  key: string;
  conn: SdkConnection;
  called: Set<string>;
}

/** A fresh account with an every-scope key and the three couriers enabled. */
async function everyScopeTenant() {
  const t = await freshTenant(svc.url, { scopes: ALL_SCOPES });
  for (const slug of ['courier_a', 'courier_b', 'courier_c']) await t.op.call('PUT', `/accounts/${t.accountId}/couriers/${slug}`, { enabled: true });
  return t;
}

/** tools/call through the SDK that must succeed; returns structuredContent. */
async function tool(w: World, name: string, args: Record<string, unknown> = {}): Promise<any> {
  w.called.add(name);
  return structuredOf(await w.conn.client.callTool({ name, arguments: args }));
}

/** tools/call through the SDK that must be a domain refusal (isError); returns structuredContent. */
async function refused(w: World, name: string, args: Record<string, unknown>): Promise<any> {
  w.called.add(name);
  const result: any = await w.conn.client.callTool({ name, arguments: args });
  assert.equal(result.isError, true, `${name} should be refused: ${JSON.stringify(result.structuredContent)}`);
  assert.equal(result.content[0].text, JSON.stringify(result.structuredContent));
  return result.structuredContent;
}

/** A REST call with the same key that must answer `status`; returns the JSON body. */
async function rest(w: World, method: string, path: string, status: number, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await http(svc.url, method, path, { token: w.key, body, headers });
  assert.equal(res.status, status, `${method} ${path} -> ${res.status} ${res.text}`);
  return res.body;
}

const qs = (query: Record<string, string | number | undefined>) =>
  new URLSearchParams(
    Object.entries(query)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, String(v)]),
  ).toString();

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * What two answers about twin resources must share: every UUID becomes a tag
 * by order of first appearance (so references keep their structure), every
 * date-time becomes <time>, and the values of `differ` keys become their type.
 */
function twinShape(value: unknown, differ: string[] = []): unknown {
  const ids = new Map<string, string>();
  const tag = (id: string) => {
    const lower = id.toLowerCase();
    if (!ids.has(lower)) ids.set(lower, `<id${ids.size + 1}>`);
    return ids.get(lower)!;
  };
  const walk = (v: unknown, key?: string): unknown => {
    if (key !== undefined && differ.includes(key)) return `<${v === null ? 'null' : typeof v}>`;
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    if (typeof v === 'string') return TIME.test(v) ? '<time>' : v.replace(UUID, tag);
    return v;
  };
  return walk(value);
}

function assertTwins(mcpAnswer: unknown, restAnswer: unknown, differ: string[] = [], message?: string) {
  assert.deepEqual(twinShape(mcpAnswer, differ), twinShape(restAnswer, differ), message);
}

/** The service's debug sink as a webhook URL (SPEC Debug sink; own host from PUBLIC_BASE_URL). */
function sinkUrl(webhookId?: string): string {
  const own = new URL(svc.service.services.config.publicBaseUrl);
  return `${own.protocol}//${own.hostname}/api/webhooks/sink${webhookId ? `?id=${webhookId}` : ''}`;
}

// ---------------------------------------------------------------- tools/list

test("tools/list for an every-scope key lists exactly the registry's tools, SPEC's table among them, each with description, schemas and annotations", async () => {
  const t = await everyScopeTenant();
  const conn = await connectSdk(svc.url, t.key);
  try {
    const { tools } = await conn.client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), Object.keys(TOOL_SCOPES).sort(), "no more, no fewer than the registry's MCP operations");
    for (const [name, scope] of Object.entries(SPEC_TOOLS)) assert.deepEqual(TOOL_SCOPES[name], [scope], `SPEC's table: ${name} under ${scope}`);
    for (const x of tools) {
      assert.ok(typeof x.description === 'string' && x.description.length >= 40, `${x.name}: a description an agent can act on`);
      assert.equal(x.inputSchema.type, 'object', `${x.name}: inputSchema`);
      // EXTENSIONS 10 token budgets: the shown schema leaves out additionalProperties: false; the server still refuses.
      const unknown = await conn.client.callTool({ name: x.name, arguments: { not_an_argument: 1 } }).then(
        () => null,
        (err) => err,
      );
      assert.equal(unknown?.code, -32602, `${x.name}: unknown arguments are refused`);
      assert.ok(x.outputSchema && x.outputSchema.type === 'object', `${x.name}: outputSchema`);
      assert.ok(x.annotations, `${x.name}: annotations`);
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint'] as const) {
        assert.equal(typeof x.annotations[hint], 'boolean', `${x.name}: annotations.${hint} is set`);
      }
      assert.equal(x.annotations.readOnlyHint, READ_TOOLS.includes(x.name), `${x.name}: readOnlyHint is true exactly for the read tools`);
      const dryRun = (x.inputSchema.properties as any)?.dry_run;
      if (WRITE_TOOLS.includes(x.name)) assert.equal(dryRun?.type, 'boolean', `${x.name}: write tools take dry_run (SPEC MCP)`);
      else assert.equal(dryRun, undefined, `${x.name}: read tools take no dry_run`);
    }
    // Each scope alone lists exactly its own tools (SPEC: tools/list returns only tools whose scope the key holds).
    for (const scope of ALL_SCOPES) {
      const key = await t.op.issueKey(t.accountId, { scopes: [scope] });
      const one = await connectSdk(svc.url, key);
      try {
        const names = (await one.client.listTools()).tools.map((x) => x.name).sort();
        assert.deepEqual(
          names,
          Object.keys(TOOL_SCOPES)
            .filter((n) => TOOL_SCOPES[n].includes(scope))
            .sort(),
          `a key with only ${scope}`,
        );
      } finally {
        await one.close();
      }
      // At most 10 active keys per account (SPEC Authentication 4): revoke each one after use.
      const keys = (await t.op.call('GET', `/accounts/${t.accountId}/keys`)).data as any[];
      for (const k of keys.filter((k) => k.prefix === key.slice(0, 11))) await t.op.call('DELETE', `/keys/${k.id}`);
    }
  } finally {
    await conn.close();
  }
});

test('annotations are truthful (MCP ToolAnnotations: destructive = not only additive; idempotent = a repeat has no further effect)', async () => {
  const t = await everyScopeTenant();
  const conn = await connectSdk(svc.url, t.key);
  try {
    const byName = new Map((await conn.client.listTools()).tools.map((x) => [x.name, x.annotations!]));
    const problems: string[] = [];
    const expect = (names: string[], hint: 'destructiveHint' | 'idempotentHint' | 'openWorldHint', value: boolean, why: string) => {
      for (const name of names) if (byName.get(name)?.[hint] !== value) problems.push(`${name}.${hint} should be ${value}: ${why}`);
    };
    expect(READ_TOOLS, 'destructiveHint', false, 'a read changes nothing');
    expect(READ_TOOLS, 'idempotentHint', true, 'a read changes nothing');
    // Each write tool's hints, claimed by name: a write tool no claim names fails below.
    const claimed = { destructiveHint: new Set<string>(), idempotentHint: new Set<string>(), openWorldHint: new Set<string>() };
    const claim = (names: string[], hint: 'destructiveHint' | 'idempotentHint' | 'openWorldHint', value: boolean, why: string) => {
      for (const name of names) claimed[hint].add(name);
      expect(names, hint, value, why);
    };
    claim(
      ['cancel_shipment', 'delete_segment', 'remove_segment_members', 'delete_webhook', 'cancel_shipment_batch', 'cancel_recovery'],
      'destructiveHint',
      true,
      'it cancels or deletes',
    );
    claim(
      ['update_order', 'update_product', 'update_segment', 'update_webhook'],
      'destructiveHint',
      true,
      'it overwrites existing values (status cancelled/refunded, active: false, filters, url): not an additive update',
    );
    claim(
      ['create_product', 'create_segment', 'add_segment_members', 'add_customer_note', 'create_webhook', 'submit_brief'],
      'destructiveHint',
      false,
      'it only adds',
    );
    claim(
      ['create_shipment', 'create_shipment_batch', 'record_stock_movement', 'test_webhook', 'recover_webhook_deliveries'],
      'destructiveHint',
      false,
      'it only adds a waybill, a ledger row or a delivery attempt',
    );
    // As the registry declares it (unlike update_webhook: it changes how deliveries are sent, never what a subscription is).
    claim(['update_webhook_flow'], 'destructiveHint', false, 'pausing, a rate or the breaker are undone by the same call');
    claim(['rotate_webhook_secret'], 'destructiveHint', true, 'it replaces the signing secret');
    claim(['rotate_webhook_secret'], 'idempotentHint', false, 'each call issues another secret');
    claim(
      [
        'create_shipment',
        'create_shipment_batch',
        'create_product',
        'create_segment',
        'add_customer_note',
        'record_stock_movement',
        'create_webhook',
        'test_webhook',
        'recover_webhook_deliveries',
      ],
      'idempotentHint',
      false,
      'each call makes one more row, waybill, batch or delivery attempt',
    );
    claim(['cancel_shipment'], 'idempotentHint', false, 'a repeat does not answer as the first did: 409 for a cancelled shipment');
    claim(
      [
        'delete_segment',
        'delete_webhook',
        'add_segment_members',
        'remove_segment_members',
        'submit_brief',
        'cancel_shipment_batch',
        'cancel_recovery',
      ],
      'idempotentHint',
      true,
      'a repeat changes nothing more',
    );
    claim(
      ['update_order', 'update_product', 'update_segment', 'update_webhook', 'update_webhook_flow'],
      'idempotentHint',
      true,
      'the same values again change nothing more',
    );
    claim(
      ['create_shipment', 'cancel_shipment', 'create_shipment_batch'],
      'openWorldHint',
      true,
      'it calls the courier (SPEC: shipment creation and cancellation act through the courier integrations)',
    );
    claim(['test_webhook', 'recover_webhook_deliveries'], 'openWorldHint', true, "it sends HTTP requests to the subscriber's endpoint");
    for (const name of WRITE_TOOLS) {
      for (const hint of ['destructiveHint', 'idempotentHint'] as const) {
        if (!claimed[hint].has(name)) problems.push(`${name}.${hint}: no claim names this write tool; add it to the claims above with why`);
      }
    }
    for (const [name, hints] of byName)
      if (hints.openWorldHint && !claimed.openWorldHint.has(name)) problems.push(`${name}.openWorldHint is true: claim it above with why`);
    assert.deepEqual(problems, []);
  } finally {
    await conn.close();
  }
});

/** Inlines #/components/schemas refs of the OpenAPI document. */
function resolveRefs(schema: unknown, doc: any): unknown {
  if (Array.isArray(schema)) return schema.map((s) => resolveRefs(s, doc));
  if (!schema || typeof schema !== 'object') return schema;
  const record = schema as Record<string, unknown>;
  if (typeof record.$ref === 'string') return resolveRefs(doc.components.schemas[record.$ref.split('/').pop()!], doc);
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, resolveRefs(v, doc)]));
}

const withoutDescription = (schema: any) => {
  const { description: _d, ...rest } = schema ?? {};
  return rest;
};

test("each tool's inputSchema is its REST twin's parameters and body from the OpenAPI document, and its outputSchema admits the REST answers", async () => {
  const t = await everyScopeTenant();
  const conn = await connectSdk(svc.url, t.key);
  try {
    const tools = new Map((await conn.client.listTools()).tools.map((x) => [x.name, x as any]));
    const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
    for (const [name, twins] of Object.entries(REST_TWINS)) {
      const input = tools.get(name).inputSchema;
      const expected: Record<string, unknown> = {};
      const required = new Set<string>();
      const twinOps = twins.map((twin) => doc.paths[twin.path]?.[twin.method]);
      twinOps.forEach((o, i) => assert.ok(o, `${name}: OpenAPI has ${twins[i].method.toUpperCase()} ${twins[i].path}`));
      assert.ok(twins.length === 1 || name === 'get_shipment', `${name}: one REST twin (only get_shipment has two)`);
      const twinAt = (path: string) => twinOps[twins.findIndex((twin) => twin.path === path)];
      // The route whose success answers the outputSchema must admit (get_shipment: the by-order route's {data: Shipment or null}).
      let answering = twinOps[0];
      if (name === 'get_shipment') {
        // GAPS MCP details: by shipment id or by order id, one tool for two routes.
        const byId = twinAt('/api/v1/shipments/{id}');
        const byOrder = twinAt('/api/v1/orders/{id}/shipment');
        expected.id = resolveRefs(byId.parameters.find((p: any) => p.name === 'id').schema, doc);
        expected.order_id = resolveRefs(byOrder.parameters.find((p: any) => p.name === 'id').schema, doc);
        // EXTENSIONS 10: both routes take fields, and so does the tool.
        expected.fields = resolveRefs(byId.parameters.find((p: any) => p.name === 'fields').schema, doc);
        answering = byOrder;
      } else {
        const o = twinOps[0];
        for (const p of o.parameters.filter((p: any) => p.in === 'path' || p.in === 'query')) {
          expected[p.name] = resolveRefs(p.schema, doc);
          if (p.required) required.add(p.name);
        }
        const body = resolveRefs(o.requestBody?.content['application/json'].schema, doc) as any;
        for (const [prop, schema] of Object.entries(body?.properties ?? {})) expected[prop] = schema;
        for (const prop of body?.required ?? []) required.add(prop);
        if (WRITE_TOOLS.includes(name))
          assert.ok(
            o.parameters.some((p: any) => p.name === 'X-Merx-Dry-Run'),
            `${name}: the REST twin takes X-Merx-Dry-Run`,
          );
      }
      // dry_run and (issue 41) the control arguments a model sets instead of _meta are MCP's own, not REST parameters.
      const mcpOwn = new Set(['dry_run', 'approval_id', 'idempotency_key', 'if_match']);
      const actual = Object.fromEntries(
        Object.entries(input.properties)
          .filter(([k]) => !mcpOwn.has(k))
          .map(([k, v]) => [k, withoutDescription(v)]),
      );
      // The same schemas, in the portable spelling tools/list uses (anyOf for nullable types), compact (compact-schema.ts;
      // a tool that creates shows no null branches).
      const creates = twins[0].method.toLowerCase() === 'post';
      const wanted = Object.fromEntries(
        Object.entries(expected).map(([k, v]) => [k, withoutDescription(compactSchema(portableSchema(v), { creates }))]),
      );
      assert.deepEqual(actual, wanted, `${name}: arguments are the REST parameters and body, under their REST names and schemas`);
      assert.deepEqual([...(input.required ?? [])].sort(), [...required].sort(), `${name}: the same required arguments`);

      // outputSchema: the REST success answer and the dry-run preview are among its branches
      // (get_shipment: the by-order route's {data: Shipment or null}, which admits the by-id answer too).
      const output = tools.get(name).outputSchema;
      const responses = answering.responses;
      for (const code of ['200', '201']) {
        const schema = responses[code]?.content?.['application/json']?.schema;
        if (!schema) continue;
        const resolved = portableSchema(resolveRefs(schema, doc)) as any;
        const branches = resolved.anyOf ?? [resolved];
        for (const branch of branches) {
          assert.ok(
            // The published document says its rules without the contract's section names (issue 41).
            output.anyOf.some((b: unknown) => JSON.stringify(withPublicText(b)) === JSON.stringify(branch)),
            `${name}: outputSchema admits the REST ${code} schema`,
          );
        }
      }
    }
    // Tools without a REST twin (the bridge tools: MCP only, SPEC MCP) have no REST route anywhere in the public document.
    const paths = Object.keys(doc.paths).join(' ');
    const mcpOnly = Object.keys(TOOL_SCOPES).filter((name) => !(name in REST_TWINS));
    for (const name of ['submit_brief', 'get_status', 'get_facts']) assert.ok(mcpOnly.includes(name), `${name}: MCP only`);
    for (const name of mcpOnly) assert.ok(!paths.includes(name), `${name} has no REST route`);
  } finally {
    await conn.close();
  }
});

// ---------------------------------------------------------------- the walk

// REST and MCP run one pipeline (src/platform/operations/pipeline.ts): what differs between them is each transport's translation
// of the request and the answer, which the walk checks tool by tool on the newest protocol version. The protocol
// version changes the JSON-RPC exchange only, checked for the older versions below.
{
  const version = MCP_VERSIONS[0];
  describe(`protocol ${version}: every tool through the SDK client answers what its REST twin answers`, () => {
    const w = {} as World;
    before(async () => {
      const t = await everyScopeTenant();
      const conn = await connectSdk(svc.url, t.key, version);
      assert.equal(conn.transport.protocolVersion, version, 'the server speaks the version the client asked for');
      // listTools caches each tool's outputSchema: the SDK then validates every structuredContent against it.
      await conn.client.listTools();
      Object.assign(w, { op: t.op, accountId: t.accountId, key: t.key, conn, called: new Set<string>() });
    });
    after(async () => {
      await w.conn?.close();
    });

    test('orders: list_orders, get_order', async () => {
      const first = await w.op.checkout(w.accountId);
      const second = await w.op.checkout(w.accountId, { customer: { name: 'Boris Ivanov', email: 'boris@example.com', phone: '+359888000222' } });
      await w.op.checkout(w.accountId, { payment_method: 'card', payment_status: 'paid' });
      for (const query of [{}, { limit: 2 }, { status: 'new', q: 'boris' }, { payment: 'paid' }, { courier: 'none', limit: 1 }]) {
        assert.deepEqual(
          await tool(w, 'list_orders', query),
          await rest(w, 'GET', `/api/v1/orders?${qs(query)}`, 200),
          `list_orders ${JSON.stringify(query)}`,
        );
      }
      const page = await tool(w, 'list_orders', { limit: 2 });
      assert.equal(page.has_more, true);
      const next = { limit: 2, cursor: page.next_cursor };
      assert.deepEqual(await tool(w, 'list_orders', next), await rest(w, 'GET', `/api/v1/orders?${qs(next)}`, 200));
      const since = { since: second.created_at };
      assert.deepEqual(await tool(w, 'list_orders', since), await rest(w, 'GET', `/api/v1/orders?${qs(since)}`, 200));
      for (const id of [first.id, second.id]) assert.deepEqual(await tool(w, 'get_order', { id }), await rest(w, 'GET', `/api/v1/orders/${id}`, 200));
    });

    test('orders: update_order (dry run both ways, then the write against REST GET and a REST twin)', async () => {
      const a = await w.op.checkout(w.accountId);
      const b = await w.op.checkout(w.accountId);
      const change = { status: 'shipped', tracking_number: 'PARITY-1', courier: 'courier_a', admin_notes: 'parity', notify_customer: false };
      const preview = await tool(w, 'update_order', { id: a.id, ...change, dry_run: true });
      assert.equal(preview.dry_run, true);
      assert.deepEqual(preview, await rest(w, 'PATCH', `/api/v1/orders/${a.id}`, 200, change, DRY));
      assert.deepEqual(await tool(w, 'get_order', { id: a.id }), await rest(w, 'GET', `/api/v1/orders/${a.id}`, 200));
      assert.equal((await rest(w, 'GET', `/api/v1/orders/${a.id}`, 200)).data.status, 'new', 'the dry run wrote nothing');

      const done = await tool(w, 'update_order', { id: a.id, ...change });
      assert.equal(done.status_changed, true);
      assert.equal(done.email_sent, false);
      assert.deepEqual({ data: done.data }, await rest(w, 'GET', `/api/v1/orders/${a.id}`, 200), 'the result is what REST then reads');
      const twin = await rest(w, 'PATCH', `/api/v1/orders/${b.id}`, 200, change);
      assertTwins(done, twin, ['number', 'order_number']);
    });

    test('shipments: create_shipment, get_shipment (by id and by order_id), cancel_shipment', async () => {
      const c = await w.op.checkout(w.accountId);
      const d = await w.op.checkout(w.accountId);
      const fresh = await w.op.checkout(w.accountId);
      const override = { weight_g: 1500, dim_cm: { l: 30, w: 20, h: 10 } };

      const preview = await tool(w, 'create_shipment', { order_id: c.id, ...override, dry_run: true });
      assert.equal(preview.dry_run, true);
      assert.deepEqual(preview, await rest(w, 'POST', '/api/v1/shipments', 200, { order_id: c.id, ...override }, DRY));
      assert.deepEqual(await tool(w, 'get_shipment', { order_id: c.id }), { data: null }, 'the dry run made no waybill');

      const made = await tool(w, 'create_shipment', { order_id: c.id, ...override });
      const twin = await rest(w, 'POST', '/api/v1/shipments', 201, { order_id: d.id, ...override });
      assertTwins(made, twin, ['tracking_number']);
      assert.deepEqual(made, await rest(w, 'GET', `/api/v1/shipments/${made.data.id}`, 200), 'the result is what REST then reads');

      // get_shipment: by id (GET /shipments/{id}) and by order_id (GET /orders/{id}/shipment), with and without a waybill.
      for (const [args, path] of [
        [{ id: made.data.id }, `/api/v1/shipments/${made.data.id}`],
        [{ id: twin.data.id }, `/api/v1/shipments/${twin.data.id}`],
        [{ order_id: c.id }, `/api/v1/orders/${c.id}/shipment`],
        [{ order_id: d.id }, `/api/v1/orders/${d.id}/shipment`],
        [{ order_id: fresh.id }, `/api/v1/orders/${fresh.id}/shipment`],
      ] as const) {
        assert.deepEqual(await tool(w, 'get_shipment', args), await rest(w, 'GET', path, 200), `get_shipment ${JSON.stringify(args)}`);
      }
      assert.deepEqual(await tool(w, 'get_shipment', { order_id: fresh.id }), { data: null });
      // The order moved to processing with the waybill's courier and tracking (SPEC Order status).
      assert.deepEqual(await tool(w, 'get_order', { id: c.id }), await rest(w, 'GET', `/api/v1/orders/${c.id}`, 200));

      // A live shipment: the same 409 both ways.
      const conflict = await refused(w, 'create_shipment', { order_id: c.id });
      const restConflict = await rest(w, 'POST', '/api/v1/shipments', 409, { order_id: c.id });
      assert.deepEqual(conflict, { error: 'CONFLICT', reason: restConflict.error.message });

      const reason = { reason: 'customer changed their mind' };
      const cancelPreview = await tool(w, 'cancel_shipment', { id: made.data.id, ...reason, dry_run: true });
      assert.equal(cancelPreview.cancellable, true);
      assert.deepEqual(cancelPreview, await rest(w, 'POST', `/api/v1/shipments/${made.data.id}/cancel`, 200, reason, DRY));
      const cancelled = await tool(w, 'cancel_shipment', { id: made.data.id, ...reason });
      assert.equal(cancelled.data.status, 'cancelled');
      const twinCancelled = await rest(w, 'POST', `/api/v1/shipments/${twin.data.id}/cancel`, 200, reason);
      assertTwins(cancelled, twinCancelled, ['tracking_number']);
      assert.deepEqual({ data: cancelled.data }, await rest(w, 'GET', `/api/v1/shipments/${made.data.id}`, 200));
      assert.deepEqual(await tool(w, 'get_shipment', { order_id: c.id }), await rest(w, 'GET', `/api/v1/orders/${c.id}/shipment`, 200));
    });

    test('products: list_products, get_product, create_product, update_product', async () => {
      const input = {
        name: 'Desk fan',
        price: 45.5,
        sku: 'FAN-PARITY',
        weight_g: 1200,
        delivery_type: 'physical',
        low_stock_threshold: 4,
        dim_cm: { l: 30, w: 30, h: 40 },
      };
      const preview = await tool(w, 'create_product', { ...input, dry_run: true });
      assert.equal(preview.dry_run, true);
      assert.deepEqual(preview, await rest(w, 'POST', '/api/v1/products', 200, input, DRY));

      const made = await tool(w, 'create_product', input);
      assert.deepEqual(made, await rest(w, 'GET', `/api/v1/products/${made.data.id}`, 200), 'the result is what REST then reads');
      const twin = await rest(w, 'POST', '/api/v1/products', 201, input);
      assertTwins(made, twin);

      const change = { price: 39.9, marketing_name: 'The quiet fan', active: false, catalog_hidden: true };
      const patchPreview = await tool(w, 'update_product', { id: made.data.id, ...change, dry_run: true });
      assert.deepEqual(patchPreview, await rest(w, 'PATCH', `/api/v1/products/${made.data.id}`, 200, change, DRY));
      const updated = await tool(w, 'update_product', { id: made.data.id, ...change });
      assert.deepEqual(updated, await rest(w, 'GET', `/api/v1/products/${made.data.id}`, 200));
      assertTwins(updated, await rest(w, 'PATCH', `/api/v1/products/${twin.data.id}`, 200, change));

      for (const query of [{}, { status: 'all' }, { status: 'all', sku: 'FAN-PARITY' }, { delivery_type: 'physical', limit: 1 }]) {
        assert.deepEqual(
          await tool(w, 'list_products', query),
          await rest(w, 'GET', `/api/v1/products?${qs(query)}`, 200),
          `list_products ${JSON.stringify(query)}`,
        );
      }
      assert.deepEqual(await tool(w, 'get_product', { id: twin.data.id }), await rest(w, 'GET', `/api/v1/products/${twin.data.id}`, 200));
    });

    test('inventory: record_stock_movement, get_inventory_stock, list_stock_movements', async () => {
      const p1 = await w.op.createProduct(w.accountId, { name: 'Kettle', price: 30, sku: 'KET-1' });
      const p2 = await w.op.createProduct(w.accountId, { name: 'Kettle', price: 30, sku: 'KET-1' });
      const delivery = { type: 'delivery', qty: 12, unit_cost: 9.5, note: 'supplier A' };

      const preview = await tool(w, 'record_stock_movement', { product_id: p1.id, ...delivery, dry_run: true });
      assert.equal(preview.enables_tracking, true);
      assert.deepEqual(preview, await rest(w, 'POST', '/api/v1/inventory/movements', 200, { product_id: p1.id, ...delivery }, DRY));

      const applied = await tool(w, 'record_stock_movement', { product_id: p1.id, ...delivery });
      assert.deepEqual(
        applied,
        await rest(w, 'POST', '/api/v1/inventory/movements', 201, { product_id: p2.id, ...delivery }),
        'the twin write answers the same',
      );
      const correction = { type: 'correction', qty: -2, note: 'broken in storage' };
      assert.deepEqual(
        await tool(w, 'record_stock_movement', { product_id: p1.id, ...correction }),
        await rest(w, 'POST', '/api/v1/inventory/movements', 201, { product_id: p2.id, ...correction }),
      );

      const stock = await tool(w, 'get_inventory_stock', { product_id: p1.id });
      assert.deepEqual(stock, await rest(w, 'GET', `/api/v1/inventory/stock?product_id=${p1.id}`, 200));
      assert.equal(stock.data[0].stock_quantity, 10, 'the written movements are what REST reads');
      assertTwins(stock, await rest(w, 'GET', `/api/v1/inventory/stock?product_id=${p2.id}`, 200));
      assert.deepEqual(await tool(w, 'get_inventory_stock', {}), await rest(w, 'GET', '/api/v1/inventory/stock', 200));

      for (const query of [{}, { product_id: p1.id }, { product_id: p2.id, type: 'correction' }, { limit: 1 }]) {
        assert.deepEqual(
          await tool(w, 'list_stock_movements', query),
          await rest(w, 'GET', `/api/v1/inventory/movements?${qs(query)}`, 200),
          `list_stock_movements ${JSON.stringify(query)}`,
        );
      }
      const mine = await tool(w, 'list_stock_movements', { product_id: p1.id });
      assertTwins(mine, await rest(w, 'GET', `/api/v1/inventory/movements?product_id=${p2.id}`, 200), ['next_cursor']);
    });

    test('customers: list_customers, list_segments, create/update/delete_segment, add/remove_segment_members, add_customer_note', async () => {
      await w.op.checkout(w.accountId, {
        customer: { name: 'Vera Koleva', email: 'vera@example.com', phone: '+359888000333' },
        payment_method: 'card',
        payment_status: 'paid',
      });
      for (const query of [{}, { q: 'vera' }, { limit: 1, offset: 0 }, { limit: 1, offset: 1 }]) {
        assert.deepEqual(
          await tool(w, 'list_customers', query),
          await rest(w, 'GET', `/api/v1/customers?${qs(query)}`, 200),
          `list_customers ${JSON.stringify(query)}`,
        );
      }

      // Computed segments.
      const computed = { name: 'Big spenders', filters: { minTotal: 10, hasEmail: true } };
      const preview = await tool(w, 'create_segment', { ...computed, dry_run: true });
      assert.deepEqual(preview, await rest(w, 'POST', '/api/v1/segments', 200, computed, DRY));
      const made = await tool(w, 'create_segment', computed);
      const twin = await rest(w, 'POST', '/api/v1/segments', 201, computed);
      assertTwins(made, twin);
      const listed = (await rest(w, 'GET', '/api/v1/segments', 200)).data.find((s: any) => s.id === made.data.id);
      assert.deepEqual(made.data, listed, 'the result is what REST then lists');

      const change = { name: 'Bigger spenders', filters: { minTotal: 20, hasEmail: true } };
      assert.deepEqual(
        await tool(w, 'update_segment', { id: made.data.id, ...change, dry_run: true }),
        await rest(w, 'PATCH', `/api/v1/segments/${made.data.id}`, 200, change, DRY),
      );
      const updated = await tool(w, 'update_segment', { id: made.data.id, ...change });
      assertTwins(updated, await rest(w, 'PATCH', `/api/v1/segments/${twin.data.id}`, 200, change));
      assert.deepEqual(
        updated.data,
        (await rest(w, 'GET', '/api/v1/segments', 200)).data.find((s: any) => s.id === made.data.id),
      );

      // Membership segments: members in and out.
      const m1 = await tool(w, 'create_segment', { name: 'VIP' });
      const m2 = await rest(w, 'POST', '/api/v1/segments', 201, { name: 'VIP' });
      assertTwins(m1, m2);
      const members = { customers: [{ email: 'Vera@Example.com' }, { phone: '+359888000999' }, { email: 'new@example.com' }] };
      const addPreview = await tool(w, 'add_segment_members', { id: m1.data.id, ...members, dry_run: true });
      assert.deepEqual(addPreview, await rest(w, 'POST', `/api/v1/segments/${m1.data.id}/members`, 200, members, DRY));
      const added = await tool(w, 'add_segment_members', { id: m1.data.id, ...members });
      assert.deepEqual(added, await rest(w, 'POST', `/api/v1/segments/${m2.data.id}/members`, 200, members), 'the twin write answers the same');
      assert.deepEqual(added.data, { added: 3, skipped: 0, total: 3 });
      assert.deepEqual(
        await tool(w, 'add_segment_members', { id: m1.data.id, ...members }),
        await rest(w, 'POST', `/api/v1/segments/${m2.data.id}/members`, 200, members),
      );

      const out = { customers: [{ email: 'new@example.com' }, { email: 'nobody@example.com' }] };
      assert.deepEqual(
        await tool(w, 'remove_segment_members', { id: m1.data.id, ...out, dry_run: true }),
        await rest(w, 'DELETE', `/api/v1/segments/${m1.data.id}/members`, 200, out, DRY),
      );
      const removed = await tool(w, 'remove_segment_members', { id: m1.data.id, ...out });
      assert.deepEqual(removed, await rest(w, 'DELETE', `/api/v1/segments/${m2.data.id}/members`, 200, out));
      assert.deepEqual(removed.data, { removed: 1 });
      assert.deepEqual(await tool(w, 'list_segments', {}), await rest(w, 'GET', '/api/v1/segments', 200));

      // Members on a computed segment: the same 409 both ways.
      const conflict = await refused(w, 'add_segment_members', { id: made.data.id, ...members });
      const restConflict = await rest(w, 'POST', `/api/v1/segments/${made.data.id}/members`, 409, members);
      assert.deepEqual(conflict, { error: 'CONFLICT', reason: restConflict.error.message });

      assert.deepEqual(
        await tool(w, 'delete_segment', { id: m1.data.id, dry_run: true }),
        await rest(w, 'DELETE', `/api/v1/segments/${m1.data.id}`, 200, undefined, DRY),
      );
      const deleted = await tool(w, 'delete_segment', { id: m1.data.id });
      assert.deepEqual(deleted.data, { id: m1.data.id, deleted: true, members_removed: 2 });
      assertTwins(deleted, await rest(w, 'DELETE', `/api/v1/segments/${m2.data.id}`, 200));
      assert.deepEqual(await tool(w, 'list_segments', {}), await rest(w, 'GET', '/api/v1/segments', 200));
      assert.ok(!(await tool(w, 'list_segments', {})).data.some((s: any) => s.id === m1.data.id), 'deleted for REST too');

      const note = { text: 'Prefers delivery after 18:00' };
      const key = 'Vera@Example.com';
      const notePreview = await tool(w, 'add_customer_note', { key, ...note, dry_run: true });
      assert.deepEqual(notePreview, await rest(w, 'POST', `/api/v1/customers/${encodeURIComponent(key)}/notes`, 200, note, DRY));
      assert.deepEqual(notePreview.data, { customer_key: 'vera@example.com', text: note.text });
      const stored = await tool(w, 'add_customer_note', { key, ...note });
      assertTwins(stored, await rest(w, 'POST', `/api/v1/customers/${encodeURIComponent(key)}/notes`, 201, note));
      const byPhone = await tool(w, 'add_customer_note', { key: '+359888000333', ...note });
      assertTwins(byPhone, await rest(w, 'POST', `/api/v1/customers/${encodeURIComponent('+359888000333')}/notes`, 201, note));
    });

    test('webhooks: create/update/test/delete_webhook, get_webhook, list_webhooks, list_webhook_deliveries', async () => {
      const input = { url: sinkUrl(), events: ['order.created', 'order.updated'], description: 'parity' };
      const preview = await tool(w, 'create_webhook', { ...input, dry_run: true });
      assert.deepEqual(preview, await rest(w, 'POST', '/api/v1/webhooks', 200, input, DRY));
      const made = await tool(w, 'create_webhook', input);
      const twin = await rest(w, 'POST', '/api/v1/webhooks', 201, input);
      assertTwins(made, twin, ['secret', 'secret_prefix']);
      assert.match(made.secret, /^[0-9a-f]{64}$/);
      assert.deepEqual(
        made.data,
        (await rest(w, 'GET', '/api/v1/webhooks', 200)).data.find((s: any) => s.id === made.data.id),
        'the result is what REST then lists',
      );

      // Point each at the sink under its own id, so its test delivery succeeds.
      const change = (id: string) => ({ url: sinkUrl(id), events: ['order.status_changed'], description: 'parity, on the sink' });
      assert.deepEqual(
        await tool(w, 'update_webhook', { id: made.data.id, ...change(made.data.id), dry_run: true }),
        await rest(w, 'PATCH', `/api/v1/webhooks/${made.data.id}`, 200, change(made.data.id), DRY),
      );
      const updated = await tool(w, 'update_webhook', { id: made.data.id, ...change(made.data.id) });
      assertTwins(updated, await rest(w, 'PATCH', `/api/v1/webhooks/${twin.data.id}`, 200, change(twin.data.id)), ['secret_prefix']);
      assert.deepEqual(await tool(w, 'list_webhooks', {}), await rest(w, 'GET', '/api/v1/webhooks', 200));
      assert.deepEqual(await tool(w, 'get_webhook', { id: made.data.id }), await rest(w, 'GET', `/api/v1/webhooks/${made.data.id}`, 200));
      assert.deepEqual(await tool(w, 'get_webhook', { id: made.data.id }), { data: updated.data }, 'get_webhook shows what update_webhook answered');

      assert.deepEqual(
        await tool(w, 'test_webhook', { id: made.data.id, dry_run: true }),
        await rest(w, 'POST', `/api/v1/webhooks/${made.data.id}/test`, 200, undefined, DRY),
      );
      const sent = await tool(w, 'test_webhook', { id: made.data.id });
      assert.equal(sent.data.status, 'delivered', JSON.stringify(sent));
      assert.equal(sent.data.event, 'test');
      const twinSent = await rest(w, 'POST', `/api/v1/webhooks/${twin.data.id}/test`, 200);
      assertTwins(sent, twinSent);
      for (const query of [{}, { limit: 1 }]) {
        for (const id of [made.data.id, twin.data.id]) {
          assert.deepEqual(
            await tool(w, 'list_webhook_deliveries', { id, ...query }),
            await rest(w, 'GET', `/api/v1/webhooks/${id}/deliveries?${qs(query)}`, 200),
            `list_webhook_deliveries ${JSON.stringify(query)}`,
          );
        }
      }
      assert.deepEqual(
        (await tool(w, 'list_webhook_deliveries', { id: made.data.id })).data[0],
        sent.data,
        'the test delivery is what REST then lists',
      );
      // What the sink stored is the event the tool reported (operator API).
      const captured = (await w.op.call('GET', `/webhooks/${made.data.id}/sink`)).data;
      assert.equal(JSON.parse(captured[0].body).id, sent.event_id);

      assert.deepEqual(
        await tool(w, 'delete_webhook', { id: made.data.id, dry_run: true }),
        await rest(w, 'DELETE', `/api/v1/webhooks/${made.data.id}`, 200, undefined, DRY),
      );
      const deleted = await tool(w, 'delete_webhook', { id: made.data.id });
      assert.deepEqual(deleted, { data: { id: made.data.id, deleted: true } });
      assertTwins(deleted, await rest(w, 'DELETE', `/api/v1/webhooks/${twin.data.id}`, 200));
      assert.deepEqual(await tool(w, 'list_webhooks', {}), await rest(w, 'GET', '/api/v1/webhooks', 200));
      const gone = await refused(w, 'delete_webhook', { id: made.data.id });
      const restGone = await rest(w, 'DELETE', `/api/v1/webhooks/${made.data.id}`, 404);
      assert.deepEqual(gone, { error: 'NOT_FOUND', reason: restGone.error.message });
    });

    test('bridge: submit_brief and get_status follow GAPS "Bridge tools" and the operator API', async () => {
      const brief = {
        kind: 'PAGE',
        title: 'Spring sale',
        brief: 'A landing page for the spring sale.',
        operation: 'op-1',
        step: 'draft',
        run: `run-${version}`,
      };
      const preview = await tool(w, 'submit_brief', { ...brief, dry_run: true });
      assert.deepEqual(preview, { dry_run: true, kind: 'PAGE', business_id: w.accountId });

      const submitted = await tool(w, 'submit_brief', brief);
      assert.deepEqual(Object.keys(submitted).sort(), ['brief_id', 'status']);
      assert.match(submitted.brief_id, /^[0-9a-f-]{36}$/);
      assert.equal(submitted.status, 'RECEIVED');
      // Idempotent per (business_id, operation, step, run); business_id defaults to the key's account.
      assert.deepEqual(await tool(w, 'submit_brief', { ...brief, title: 'changed', business_id: w.accountId }), submitted);
      const other = await tool(w, 'submit_brief', { ...brief, run: `${brief.run}-b` });
      assert.notEqual(other.brief_id, submitted.brief_id);
      const foreign = await w.op.createAccount();
      assert.equal((await refused(w, 'submit_brief', { ...brief, business_id: foreign.id })).error, 'NOT_FOUND');

      const status = await tool(w, 'get_status', { brief_id: submitted.brief_id });
      assert.deepEqual(Object.keys(status).sort(), ['admin_url', 'asset_id', 'brief_id', 'fail_code', 'kind', 'public_url', 'reason', 'status']);
      assert.deepEqual(
        { ...status, admin_url: typeof status.admin_url },
        {
          brief_id: submitted.brief_id,
          kind: 'PAGE',
          status: 'RECEIVED',
          reason: null,
          fail_code: null,
          admin_url: 'string',
          asset_id: null,
          public_url: null,
        },
      );

      // The admin moves it along (OPERATOR_API: POST /briefs/{id}/status); get_status reports each step.
      for (const step of ['IN_WORK', 'AWAITING_APPROVAL', 'APPROVED']) {
        await w.op.call('POST', `/briefs/${submitted.brief_id}/status`, { status: step });
        assert.equal((await tool(w, 'get_status', { brief_id: submitted.brief_id })).status, step);
      }
      await w.op.call('POST', `/briefs/${other.brief_id}/status`, {
        status: 'FAILED',
        reason: 'the product has no images',
        fail_code: 'MISSING_ASSET',
      });
      const failed = await tool(w, 'get_status', { brief_id: other.brief_id });
      assert.equal(failed.status, 'FAILED');
      assert.equal(failed.reason, 'the product has no images');
      assert.equal(failed.fail_code, 'MISSING_ASSET');
      assert.equal(failed.asset_id, null);

      const page = await w.op.createPage(w.accountId, []);
      await w.op.call('POST', `/briefs/${submitted.brief_id}/status`, { status: 'LIVE', asset_id: page.id, public_url: page.public_url });
      const live = await tool(w, 'get_status', { brief_id: submitted.brief_id });
      assert.equal(live.status, 'LIVE');
      assert.equal(live.asset_id, page.id);
      assert.equal(live.public_url, page.public_url);

      const unknown = await refused(w, 'get_status', { brief_id: UNKNOWN_ID });
      assert.equal(unknown.error, 'NOT_FOUND');
    });

    test('bridge: get_facts counts what the operator API and REST show, with provenance', async () => {
      const product = await w.op.createProduct(w.accountId, { name: 'Lamp', price: 20, sku: 'LAMP-F' });
      const page = await w.op.createPage(w.accountId, [product.id]);
      const inWindow = '2026-03-10T12:00:00Z';
      await w.op.call('POST', `/assets/${page.id}/activity`, { kind: 'page_visit', count: 7, at: inWindow });
      await w.op.call('POST', `/assets/${page.id}/activity`, { kind: 'page_visit', count: 100, at: '2025-12-31T23:59:59Z' }); // before the window
      await w.op.call('POST', `/assets/${page.id}/activity`, { kind: 'registration', count: 2, at: inWindow });
      await w.op.call('POST', `/assets/${page.id}/activity`, { kind: 'attendance', at: inWindow });
      const placed = { page_id: page.id, legacy: undefined, line_items: [{ product_id: product.id, qty: 1 }], created_at: inWindow };
      const kept = await w.op.checkout(w.accountId, placed);
      const dropped = await w.op.checkout(w.accountId, placed);
      await w.op.setStatus(dropped.id, 'cancelled');
      await w.op.checkout(w.accountId, { ...placed, created_at: '2025-06-01T00:00:00Z' }); // before the window
      const window = { from: '2026-01-01', to: '2026-12-31T23:59:59Z' };

      const facts = await tool(w, 'get_facts', { asset_id: page.id, ...window });
      assert.deepEqual(Object.keys(facts).sort(), ['asset_id', 'facts', 'from', 'to']);
      assert.equal(facts.asset_id, page.id);
      assert.deepEqual(Object.keys(facts.facts).sort(), ['attendees', 'page_visits', 'purchases', 'registrations', 'segment_size']);
      for (const [name, fact] of Object.entries<any>(facts.facts)) {
        assert.deepEqual(Object.keys(fact).sort(), ['computed_at', 'source', 'value'], name);
        assert.ok(typeof fact.source === 'string' && fact.source.length > 0, `${name}: provenance`);
        assert.match(fact.computed_at, TIME);
      }
      assert.equal(facts.facts.page_visits.value, 7);
      assert.equal(facts.facts.registrations.value, 2);
      assert.equal(facts.facts.attendees.value, 1);
      assert.equal(facts.facts.segment_size.value, null, 'a page is not a segment');
      // purchases: the page's orders REST lists in the window, cancelled ones excluded (SPEC: customers exclude them likewise).
      const restOrders = (await rest(w, 'GET', `/api/v1/orders?${qs({ page_id: page.id, ...window })}`, 200)).data;
      const counted = restOrders.filter((o: any) => !['cancelled', 'archived', 'refunded'].includes(o.status));
      assert.deepEqual(
        counted.map((o: any) => o.id),
        [kept.id],
      );
      assert.equal(facts.facts.purchases.value, counted.length);

      // A segment asset: segment_size is what REST says its customer_count is.
      const segment = (await rest(w, 'POST', '/api/v1/segments', 201, { name: 'Facts' })).data;
      await rest(w, 'POST', `/api/v1/segments/${segment.id}/members`, 200, { customers: [{ email: 'a@example.com' }, { email: 'b@example.com' }] });
      const segmentFacts = await tool(w, 'get_facts', { asset_id: segment.id, ...window });
      const restSegment = (await rest(w, 'GET', '/api/v1/segments', 200)).data.find((s: any) => s.id === segment.id);
      assert.equal(segmentFacts.facts.segment_size.value, restSegment.customer_count);
      assert.equal(segmentFacts.facts.segment_size.value, 2);
      for (const name of ['page_visits', 'purchases', 'registrations', 'attendees'])
        assert.equal(segmentFacts.facts[name].value, null, `${name} does not apply to a segment`);

      assert.equal((await refused(w, 'get_facts', { asset_id: UNKNOWN_ID, ...window })).error, 'NOT_FOUND');
    });

    test('every tool of the operation list was called through the SDK client on the version asked for, or its parity is proven in a test named in PARITY_ELSEWHERE', () => {
      const unproven = Object.keys(TOOL_SCOPES).filter((name) => !w.called.has(name) && !(name in PARITY_ELSEWHERE));
      assert.deepEqual(
        unproven,
        [],
        'a tool neither walked here (against its REST twin) nor named in PARITY_ELSEWHERE with the test that compares it',
      );
      for (const name of Object.keys(SPEC_TOOLS)) assert.ok(w.called.has(name), `${name}: every tool of SPEC's table is walked here`);
      for (const [name, file] of Object.entries(PARITY_ELSEWHERE)) {
        assert.ok(name in TOOL_SCOPES, `PARITY_ELSEWHERE names ${name}, which is no tool of the operation list`);
        assert.ok(!w.called.has(name), `${name} is walked here: take it out of PARITY_ELSEWHERE`);
        assert.match(fs.readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'), new RegExp(`'${name}'`), `${file} calls ${name}`);
      }
      const later = w.conn.seen.filter((s) => s.method === 'POST' && !s.rpcMethods.includes('initialize'));
      for (const s of later) assert.equal(s.protocolHeader, version);
      assert.deepEqual(w.conn.errors, []);
    });
  });
}

for (const version of MCP_VERSIONS.slice(1)) {
  test(`protocol ${version}: the SDK client negotiates it, lists the tools, and a read and a refusal answer as on REST`, async () => {
    const t = await everyScopeTenant();
    const conn = await connectSdk(svc.url, t.key, version);
    try {
      assert.equal(conn.transport.protocolVersion, version, 'the server speaks the version the client asked for');
      const { tools } = await conn.client.listTools();
      assert.deepEqual(tools.map((x) => x.name).sort(), Object.keys(TOOL_SCOPES).sort());
      const w: World = { op: t.op, accountId: t.accountId, key: t.key, conn, called: new Set() };
      const order = await t.op.checkout(t.accountId);
      assert.deepEqual(await tool(w, 'get_order', { id: order.id }), await rest(w, 'GET', `/api/v1/orders/${order.id}`, 200));
      assert.deepEqual(await tool(w, 'list_orders', { limit: 1 }), await rest(w, 'GET', '/api/v1/orders?limit=1', 200));
      const missing = await rest(w, 'GET', `/api/v1/orders/${UNKNOWN_ID}`, 404);
      assert.deepEqual(await refused(w, 'get_order', { id: UNKNOWN_ID }), { error: 'NOT_FOUND', reason: missing.error.message });
      for (const s of conn.seen.filter((x) => x.method === 'POST' && !x.rpcMethods.includes('initialize'))) assert.equal(s.protocolHeader, version);
      assert.deepEqual(conn.errors, []);
    } finally {
      await conn.close();
    }
  });
}
