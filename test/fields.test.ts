// EXTENSIONS 10, fields: every read of orders, shipments, products,
// customers, stock, movements, events and webhook deliveries, on REST and its
// MCP tool: only the named fields plus the identifier, in SPEC's order, no
// ETag, an unknown name refused with details.allowed, and without `fields`
// the very bytes the service answered before (the stored documents).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { http, startTestService } from './helpers/harness.ts';
import { callTool } from './helpers/mcp.ts';
import { checkoutWith, ship, shipTenant } from './helpers/shipments.ts';
import { assertResponseMatches, type OpenApiDoc } from './helpers/openapi-validator.ts';
import { SCOPES } from '../src/platform/contract/scopes.ts';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const Ajv2020 = Ajv2020Module as unknown as new (options: object) => import('ajv').Ajv;
const addFormats = addFormatsModule as unknown as (ajv: import('ajv').Ajv) => unknown;

const INERT_URL = 'https://93.184.216.34/hooks/merx';

const svc = await startTestService();
test.after(() => svc.close());
const { op, accountId, key } = await shipTenant(svc, { scopes: [...SCOPES] });
const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body as OpenApiDoc;
const get = (path: string, headers: Record<string, string> = {}) => http(svc.url, 'GET', path, { token: key, headers });

// One of everything, so that every read has something to project.
assert.equal((await http(svc.url, 'POST', '/api/v1/webhooks', { token: key, body: { url: INERT_URL, events: ['order.created'] } })).status, 201);
const product = await op.createProduct(accountId, { sku: 'FLD-1' });
const dims = await http(svc.url, 'PATCH', `/api/v1/products/${product.id}`, { token: key, body: { dim_cm: { l: 10, w: 8, h: 6 } } });
assert.equal(dims.status, 200, dims.text);
const movement = await http(svc.url, 'POST', '/api/v1/inventory/movements', {
  token: key,
  body: { product_id: product.id, type: 'delivery', qty: 5 },
});
assert.equal(movement.status, 201, movement.text);
const order = await checkoutWith(svc, accountId, 'courier_a', {
  customer: { name: 'Ana Petrova', email: 'ana@example.com', phone: '+359888000111' },
});
const shipment = await ship(svc, key, { order_id: order.id });
const webhookId = (await get('/api/v1/webhooks')).body.data[0].id as string;

interface Read {
  /** The REST path and the MCP tool with its arguments, for the same answer. */
  path: string;
  tool: string;
  args: Record<string, unknown>;
  /** The identifier always kept. */
  id: string;
  /** Names to ask for: one top-level, one dotted when the object has an object field. */
  fields: string;
  /** Names no object of this read has: an unknown field, a dotted name into an array or a scalar, two levels. */
  unknown: string[];
}

const READS: Read[] = [
  {
    path: '/api/v1/orders',
    tool: 'list_orders',
    args: {},
    id: 'id',
    fields: 'total,status,customer.name,shipment.status',
    unknown: ['nope', 'line_items.quantity', 'customer.name.first'],
  },
  {
    path: `/api/v1/orders/${order.id}`,
    tool: 'get_order',
    args: { id: order.id },
    id: 'id',
    fields: 'shipping.city,number',
    unknown: ['total.amount', 'customer.nope'],
  },
  {
    path: `/api/v1/orders/${order.id}/shipment`,
    tool: 'get_shipment',
    args: { order_id: order.id },
    id: 'id',
    fields: 'status,tracking_number',
    unknown: ['status_events.code', 'order'],
  },
  {
    path: `/api/v1/shipments/${shipment.id}`,
    tool: 'get_shipment',
    args: { id: shipment.id },
    id: 'id',
    fields: 'courier_slug,created_at',
    unknown: ['Status'],
  },
  { path: '/api/v1/products', tool: 'list_products', args: {}, id: 'id', fields: 'dim_cm.l,name,sku', unknown: ['variants.name', 'dim_cm.depth'] },
  { path: `/api/v1/products/${product.id}`, tool: 'get_product', args: { id: product.id }, id: 'id', fields: 'price,dim_cm', unknown: ['stock'] },
  { path: '/api/v1/customers', tool: 'list_customers', args: {}, id: 'key', fields: 'total_spent,name', unknown: ['id'] },
  {
    path: '/api/v1/inventory/stock',
    tool: 'get_inventory_stock',
    args: {},
    id: 'product_id',
    fields: 'stock_quantity,low',
    unknown: ['id', 'variants.id'],
  },
  { path: '/api/v1/inventory/movements', tool: 'list_stock_movements', args: {}, id: 'id', fields: 'qty,type', unknown: ['quantity'] },
  { path: '/api/v1/events', tool: 'list_events', args: {}, id: 'id', fields: 'event,created_at', unknown: ['data.order_id', 'type'] },
  {
    path: `/api/v1/webhooks/${webhookId}/deliveries`,
    tool: 'list_webhook_deliveries',
    args: { id: webhookId },
    id: 'id',
    fields: 'status,event',
    unknown: ['response'],
  },
];

const withFields = (path: string, fields: string) => `${path}${path.includes('?') ? '&' : '?'}fields=${encodeURIComponent(fields)}`;
const items = (data: unknown): Array<Record<string, any>> => (Array.isArray(data) ? data : [data]) as Array<Record<string, any>>;

/** What `fields` must make of a full object: the identifier and the asked names, in the object's own (SPEC's) order. */
function expectedProjection(full: Record<string, any>, id: string, fields: string): Record<string, any> {
  const asked = fields.split(',');
  const out: Record<string, any> = {};
  for (const [name, value] of Object.entries(full)) {
    if (name === id || asked.includes(name)) out[name] = value;
    else {
      const inner = asked.filter((f) => f.startsWith(`${name}.`)).map((f) => f.slice(name.length + 1));
      if (inner.length) out[name] = value === null ? null : Object.fromEntries(Object.entries(value).filter(([k]) => inner.includes(k)));
    }
  }
  return out;
}

for (const read of READS) {
  test(`${read.path} and ${read.tool}: fields=${read.fields}`, async () => {
    const full = await get(read.path);
    assert.equal(full.status, 200, full.text);
    assert.ok(items(full.body.data).length >= 1 && full.body.data !== null, `${read.path} has something to project`);
    const res = await get(withFields(read.path, read.fields), { 'if-none-match': full.headers.get('etag') ?? '*' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('etag'), null, 'a projected answer carries no ETag (and so never a 304)');
    assertResponseMatches(doc, 'GET', read.path, res, { projected: true });
    // Everything beside data (paging) as it was; each object exactly its projection, in SPEC's order (compared as text).
    const expected = {
      ...full.body,
      data: Array.isArray(full.body.data)
        ? full.body.data.map((o: any) => expectedProjection(o, read.id, read.fields))
        : expectedProjection(full.body.data, read.id, read.fields),
    };
    assert.equal(res.text, JSON.stringify(expected));
    for (const item of items(res.body.data))
      assert.equal(Object.keys(item)[0] === read.id || read.id in item, true, `the identifier ${read.id} is kept`);

    const mcp = await callTool(svc.url, key, read.tool, { ...read.args, fields: read.fields });
    assert.equal(mcp.isError, false, mcp.content[0].text);
    assert.equal(mcp.content[0].text, res.text, 'the tool answers the same projection');
    assert.deepEqual(mcp.structuredContent, res.body);
  });

  test(`${read.path} and ${read.tool}: unknown names are 400 validation_failed with details.allowed`, async () => {
    for (const name of [...read.unknown, `${read.fields},nope`]) {
      const res = await get(withFields(read.path, name));
      assert.equal(res.status, 400, `${name}: ${res.text}`);
      assert.equal(res.body.error.code, 'validation_failed');
      const allowed = res.body.error.details.allowed as string[];
      assert.ok(allowed.includes(read.id) && read.fields.split(',').every((f) => allowed.includes(f)), `${name}: allowed ${allowed}`);
      for (const bad of name.split(',').filter((f) => !read.fields.split(',').includes(f)))
        assert.ok(!allowed.includes(bad), `${bad} is not allowed`);
      assert.ok(res.body.error.message.includes(name.split(',').at(-1)!), res.body.error.message);
      assertResponseMatches(doc, 'GET', read.path, res);
      const mcp = await callTool(svc.url, key, read.tool, { ...read.args, fields: name });
      assert.equal(mcp.isError, true);
      assert.equal(mcp.structuredContent.error, 'VALIDATION_FAILED');
    }
    // An empty name between commas is unknown too; an empty parameter is refused by the parameter's own schema.
    assert.equal((await get(withFields(read.path, `${read.id},`))).status, 400);
    assert.equal((await get(withFields(read.path, ''))).status, 400);
  });
}

test('the identifier alone, duplicates and a whole object beside its dotted name', async () => {
  const res = await get(withFields(`/api/v1/orders/${order.id}`, 'id'));
  assert.equal(res.text, JSON.stringify({ data: { id: order.id } }));
  const both = await get(withFields(`/api/v1/orders/${order.id}`, 'customer.name,customer,status,status'));
  const full = (await get(`/api/v1/orders/${order.id}`)).body.data;
  assert.equal(both.text, JSON.stringify({ data: { id: order.id, status: full.status, customer: full.customer } }));
  // Spaces around names are read as the names.
  const spaced = await get(withFields(`/api/v1/orders/${order.id}`, ' status , customer.email '));
  assert.equal(spaced.text, JSON.stringify({ data: { id: order.id, status: full.status, customer: { email: full.customer.email } } }));
});

test('without fields every answer is what it was: the stored documents as PostgreSQL wrote them, with their ETag', async () => {
  const { rows } = await svc.service.db.query<{ view_json: string }>('SELECT view_json::text AS view_json FROM orders WHERE id = $1', [order.id]);
  const one = await get(`/api/v1/orders/${order.id}`);
  assert.equal(one.text, `{"data":${rows[0].view_json}}`);
  assert.ok(one.headers.get('etag'));
  const list = await get('/api/v1/orders');
  assert.ok(list.text.startsWith(`{"data":[${rows[0].view_json}]`), list.text.slice(0, 200));
  for (const read of READS) {
    const res = await get(read.path);
    assert.ok(res.headers.get('etag'), `${read.path} keeps its ETag`);
    assertResponseMatches(doc, 'GET', read.path, res);
    // And MCP sends the same bytes it always did: the REST answer's.
    if (read.tool !== 'get_shipment') assert.equal((await callTool(svc.url, key, read.tool, read.args)).content[0].text, res.text, read.tool);
  }
});

test('the OpenAPI document and the tools describe fields on exactly these reads', async () => {
  const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.values(item)
      .filter((o: any) => o?.['x-merx-fields'])
      .map((o: any) => `${o.operationId} ${path}`),
  );
  assert.equal(documented.length, 11, documented.join('\n'));
  for (const read of READS) {
    const template = Object.keys(doc.paths).find((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(read.path))!;
    const operation = doc.paths[template].get;
    assert.equal(operation['x-merx-fields'].identifier, read.id);
    assert.ok(
      operation.parameters.some((p: any) => p.name === 'fields' && p.in === 'query' && !p.required),
      `${template} takes fields`,
    );
    assert.match(operation.responses['200'].description, /required lists .* do not apply/);
  }
  const tools = (await http(svc.url, 'POST', '/api/mcp', { token: key, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).body.result.tools;
  const withFieldsArg = tools
    .filter((t: any) => t.inputSchema.properties.fields)
    .map((t: any) => t.name)
    .sort();
  assert.deepEqual(withFieldsArg, [...new Set(READS.map((r) => r.tool))].sort());
  // GAPS MCP details: the official client validates structuredContent against outputSchema, a projected one too.
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  for (const read of READS) {
    const validate = ajv.compile(tools.find((t: any) => t.name === read.tool).outputSchema);
    const mcp = await callTool(svc.url, key, read.tool, { ...read.args, fields: read.fields });
    assert.ok(validate(mcp.structuredContent), `${read.tool}: ${JSON.stringify(validate.errors)}`);
  }
});

test('the next page of a projected delivery list (Link rel="next") keeps the fields', async () => {
  await checkoutWith(svc, accountId, 'courier_a');
  const path = `/api/v1/webhooks/${webhookId}/deliveries?limit=1&fields=status`;
  const first = await get(path);
  assert.equal(first.status, 200, first.text);
  const link = first.headers.get('link') ?? '';
  const next = /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
  assert.ok(next && new URL(next, svc.url).searchParams.get('fields') === 'status', link);
  const second = await get(next);
  assert.equal(second.status, 200, second.text);
  assert.deepEqual(
    second.body.data.map((d: any) => Object.keys(d)),
    [['id', 'status']],
  );
  assert.notEqual(second.body.data[0].id, first.body.data[0].id);
});
