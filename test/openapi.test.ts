// The OpenAPI 3.1 contract (SPEC Versioning 4): served publicly, every
// route appears in it, and every response the service sends validates
// against its schema. The validator is helpers/openapi-validator.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { operations } from '../src/app.ts';
import { ERROR_STATUS } from '../src/platform/contract/errors.ts';
import type { HttpMethod, Operation } from '../src/platform/operations/operation.ts';
import { startTestService, http, operator, type HttpResult, type TestService } from './helpers/harness.ts';
import {
  assertResponseMatches,
  collectRefs,
  compileSchema,
  unresolvedRefs,
  validateResponse,
  deref,
  type OpenApiDoc,
} from './helpers/openapi-validator.ts';
import {
  tenant,
  createTargets,
  prepareCall,
  restCall,
  resourceFactories,
  scopesWithout,
  targetArgs,
  pathParams,
  isWriteOp,
  type Tenant,
} from './helpers/registry-fixtures.ts';

let svc: TestService;
let doc: OpenApiDoc;
before(async () => {
  svc = await startTestService();
  const res = await http(svc.url, 'GET', '/api/v1/openapi.json');
  assert.equal(res.status, 200, res.text);
  doc = res.body;
});
after(async () => {
  await svc.close();
});

const restOps = operations.filter((op) => op.rest !== false);
const templateOf = (op: Operation) => op.path.replace(/:([A-Za-z_]+)/g, '{$1}');
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const ALL_METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

function documentedOperations(d: OpenApiDoc) {
  const list: Array<{ path: string; method: string; operation: any }> = [];
  for (const [path, item] of Object.entries(d.paths)) {
    for (const [method, operation] of Object.entries(item)) if (HTTP_METHODS.includes(method)) list.push({ path, method, operation });
  }
  return list;
}

// ---------------------------------------------------------------- the document

test('GET /api/v1/openapi.json is a public OpenAPI 3.1.0 document, version 1.0.0', async () => {
  const res = await http(svc.url, 'GET', '/api/v1/openapi.json');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(res.body.openapi, '3.1.0');
  assert.equal(res.body.info.version, '1.0.0');
  assert.equal(typeof res.body.info.title, 'string');
  assert.ok(res.body.info.title.length > 0);
  assert.ok(res.headers.get('x-deploy-sha'));
});

test('every REST operation of the operation list is documented at its path and method with operationId = its name, and nothing else is', () => {
  for (const op of restOps) {
    const item = doc.paths[templateOf(op)];
    assert.ok(item, `${op.name}: path ${templateOf(op)} is missing`);
    const operation = item[op.method.toLowerCase()];
    assert.ok(operation, `${op.name}: ${op.method} ${templateOf(op)} is missing`);
    assert.equal(operation.operationId, op.name);
    assert.equal(operation['x-required-scope'], op.scope, `${op.name}: scope`);
    const success = String(op.successStatus ?? 200);
    assert.ok(operation.responses[success], `${op.name}: success status ${success} is documented`);
    if (op.dryRunOutput) {
      assert.ok(operation.responses['200'], `${op.name}: the dry-run preview (200) is documented`);
      const header = (operation.parameters ?? []).find((p: any) => p.in === 'header' && p.name.toLowerCase() === 'x-merx-dry-run');
      assert.ok(header, `${op.name}: the X-Merx-Dry-Run header is documented`);
    }
  }
  const documented = documentedOperations(doc)
    .map((o) => `${o.method.toUpperCase()} ${o.path} ${o.operation.operationId}`)
    .sort();
  // Besides the operation list, the document describes the keyless public routes: the debug sink (SPEC Debug sink) and the index.
  const expected = [
    ...restOps.map((op) => `${op.method} ${templateOf(op)} ${op.name}`),
    'POST /api/webhooks/sink webhook_debug_sink',
    'GET /api/v1 api_index',
  ].sort();
  assert.deepEqual(documented, expected);
  for (const op of operations.filter((o) => o.rest === false)) {
    assert.ok(!documented.some((d) => d.endsWith(` ${op.name}`)), `${op.name} is MCP only and must not be documented as a route`);
  }
});

test('the document is structurally sound: unique operationIds, path parameters declared, responses described, every $ref resolves', () => {
  assert.ok(doc.paths && typeof doc.paths === 'object');
  assert.ok(doc.components?.schemas && typeof doc.components.schemas === 'object');
  const ids = documentedOperations(doc).map((o) => o.operation.operationId);
  assert.deepEqual(
    ids.filter((id, i) => ids.indexOf(id) !== i),
    [],
    'operationIds are unique',
  );
  for (const { path, method, operation } of documentedOperations(doc)) {
    const where = `${method.toUpperCase()} ${path}`;
    assert.ok(path.startsWith('/'), `${where}: path starts with /`);
    const inTemplate = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    const parameters = (operation.parameters ?? []).map((p: any) => deref(doc, p));
    const declared = parameters.filter((p: any) => p.in === 'path');
    assert.deepEqual(declared.map((p: any) => p.name).sort(), inTemplate, `${where}: path parameters`);
    for (const p of declared) assert.equal(p.required, true, `${where}: path parameter ${p.name} is required`);
    for (const p of parameters) {
      assert.ok(['path', 'query', 'header', 'cookie'].includes(p.in), `${where}: parameter ${p.name} in ${p.in}`);
      assert.ok(p.schema || p.content, `${where}: parameter ${p.name} has a schema`);
    }
    const seen = parameters.map((p: any) => `${p.in}:${p.name}`);
    assert.deepEqual(
      seen.filter((k: string, i: number) => seen.indexOf(k) !== i),
      [],
      `${where}: parameters are unique`,
    );
    assert.ok(operation.responses && Object.keys(operation.responses).some((s) => s.startsWith('2')), `${where}: has a 2xx response`);
    for (const [status, raw] of Object.entries<any>(operation.responses)) {
      assert.match(status, /^([1-5](\d\d|XX)|default)$/, `${where}: status key ${status}`);
      const response = deref(doc, raw);
      assert.equal(typeof response.description, 'string', `${where} ${status}: description`);
    }
    if (operation.requestBody) assert.ok(deref(doc, operation.requestBody).content?.['application/json'], `${where}: JSON request body`);
  }
  assert.ok(collectRefs(doc).length > 0, 'the document names its shared schemas');
  assert.deepEqual(unresolvedRefs(doc), []);
  const schemes = doc.components?.securitySchemes as Record<string, any>;
  assert.deepEqual(schemes?.bearerAuth, { type: 'http', scheme: 'bearer' });
  assert.deepEqual(doc.security, [{ bearerAuth: [] }]);
});

test('every schema in the document is valid JSON Schema 2020-12 (Ajv strict)', () => {
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) compileSchema(doc, schema, `component ${name}`);
  for (const { path, method, operation } of documentedOperations(doc)) {
    for (const p of operation.parameters ?? []) compileSchema(doc, deref(doc, p).schema);
    if (operation.requestBody) compileSchema(doc, deref(doc, operation.requestBody).content['application/json'].schema);
    for (const [status, raw] of Object.entries<any>(operation.responses)) {
      for (const media of Object.values<any>(deref(doc, raw).content ?? {})) {
        if (media.schema) assert.doesNotThrow(() => compileSchema(doc, media.schema), `${method} ${path} ${status}`);
      }
    }
  }
});

test('the sample request bodies of the operation list walk are valid per the document', async () => {
  const t = await tenant(svc);
  for (const op of restOps.filter((o) => isWriteOp(o) && o.body)) {
    const { body } = await prepareCall(op, await createTargets(op, t), t);
    const schema = doc.paths[templateOf(op)][op.method.toLowerCase()].requestBody.content['application/json'].schema;
    const validate = compileSchema(doc, schema);
    assert.ok(validate(body), `${op.name}: ${JSON.stringify(validate.errors)}`);
  }
});

test('every operation names its MCP tool: its own name, the tool a REST-only twin goes through, or none', () => {
  const tools = new Set(operations.filter((op) => op.mcp !== false).map((op) => op.name));
  for (const { path, method, operation } of documentedOperations(doc)) {
    const tool = operation['x-mcp-tool'];
    assert.ok(tool === null || tools.has(tool), `${method.toUpperCase()} ${path}: x-mcp-tool ${tool} is a tool`);
    assert.match(operation.description, tool ? new RegExp(`MCP tool: \`${tool}\``) : /No MCP tool/, `${operation.operationId}: said in words`);
  }
  const byId = Object.fromEntries(documentedOperations(doc).map((o) => [o.operation.operationId, o.operation['x-mcp-tool']]));
  assert.equal(byId.get_shipment_by_id, 'get_shipment');
  assert.equal(byId.get_order_shipment, 'get_shipment');
  assert.equal(byId.list_orders, 'list_orders');
  assert.equal(byId.get_shipment_label, null);
});

test("the introduction holds the error table, and the routes' error responses name each code under its status: both from the code table", () => {
  const said = new Map<string, string[]>();
  for (const { operation } of documentedOperations(doc)) {
    for (const [status, response] of Object.entries<any>(operation.responses)) {
      if (/^[45]\d\d$|^default$/.test(status)) said.set(status, [...(said.get(status) ?? []), response.description]);
    }
  }
  for (const [code, status] of Object.entries(ERROR_STATUS)) {
    assert.match(doc.info.description ?? '', new RegExp(`\\| \`${code}\` \\| ${status} \\| \\S`), `${code} ${status}, with when it is answered`);
    const listed = (said.get(String(status)) ?? []).some((d) => d.split(/; /).some((part) => part.startsWith(code)));
    // The default response sums up the rest: "408 request_timeout: ...; 413 payload_too_large: ...", one status's codes after its number.
    const summed = (said.get('default') ?? []).some((d) => new RegExp(`\\b${status} (?:[^;]*; (?!\\d{3} ))*${code}\\b`).test(d));
    assert.ok(listed || summed, `${code}: some route lists it under ${status}`);
  }
});

test("/docs is Redoc from this service (no CDN): the reference, the MCP page with every tool's input schema from the registry; the guides pages of their own", async () => {
  const page = await http(svc.url, 'GET', '/docs');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
  const scripts = [...page.text.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(scripts, ['/docs/redoc.standalone.js', '/docs/reference.js', '/docs/site.js']);
  assert.doesNotMatch(page.text, /https?:\/\//, 'no absolute URL: nothing from another host');
  const bundle = await fetch(`${svc.url}/docs/redoc.standalone.js`);
  assert.equal(bundle.status, 200);
  assert.match(bundle.headers.get('content-type') ?? '', /javascript/);
  assert.ok((await bundle.arrayBuffer()).byteLength > 500_000, 'the Redoc bundle itself');

  // Issue 41: one page per API, the reference whole (its operations and its webhooks).
  const readable = (await http(svc.url, 'GET', '/docs/openapi.json')).body;
  assert.deepEqual(readable.paths, doc.paths, 'the same operations as the public document');
  assert.deepEqual(readable.components, doc.components, 'the schemas the operations refer to');
  // Issue 41: each guide is a documentation page, rendered here, not an OpenAPI document.
  for (const [slug, title] of [
    ['getting-started', 'Getting started'],
    ['webhooks', 'Receiving webhooks'],
    ['mcp', 'MCP clients'],
    ['operations', 'Running Merx'],
    ['operator-console', 'Operator console'],
    ['contract', 'The contract'],
  ]) {
    const guidePage = await http(svc.url, 'GET', `/docs/guides/${slug}`);
    assert.equal(guidePage.status, 200, slug);
    assert.ok(guidePage.text.includes(`<h1>${title}</h1>`), slug);
    assert.ok(guidePage.text.length > 5000, `guide ${slug} has its text`);
    assert.equal((await http(svc.url, 'GET', `/docs/guides/${slug}/openapi.json`)).status, 404, `${slug}: a guide, not an API document`);
  }
  assert.match((await http(svc.url, 'GET', '/docs/guides/mcp')).text, /Streamable HTTP/, 'the MCP guide: connecting a client');
  const mcpPage = (await http(svc.url, 'GET', '/docs/mcp/openapi.json')).body;
  assert.match(mcpPage.info.description, /Streamable HTTP/, 'the MCP page says where the server is');
  const tools = mcpPage.tags.find((t: any) => t.name === 'MCP tools').description as string;
  const key = await freshKeyWithEveryScope();
  const listed = (await http(svc.url, 'POST', '/api/mcp', { token: key, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).body.result.tools;
  assert.equal(listed.length, operations.filter((op) => op.mcp !== false).length);
  for (const tool of listed) {
    assert.ok(tools.includes(`id="tool-${tool.name}"`), `${tool.name} is listed`);
    assert.deepEqual(mcpPage.components.schemas[`mcp_${tool.name}_arguments`], tool.inputSchema, `${tool.name}: the input schema tools/list serves`);
    assert.ok(tools.includes(`schemaRef="#/components/schemas/mcp_${tool.name}_arguments"`), `${tool.name}: its schema is shown`);
  }
  for (const name of ['get_order_shipment', 'get_shipment_by_id', 'get_shipment_label', 'retry_webhook_delivery']) {
    assert.ok(!tools.includes(`id="tool-${name}"`), `${name} is not presented as a tool`);
  }

  const operatorPage = await http(svc.url, 'GET', '/admin/docs');
  assert.equal(operatorPage.status, 200);
  assert.match(operatorPage.text, /data-spec="\/admin\/api\/openapi.json"/);
});

test('/ redirects to /docs, and /api/v1 is an index of the public addresses, described in the document', async () => {
  const root = await fetch(`${svc.url}/`, { redirect: 'manual' });
  assert.equal(root.status, 302);
  assert.equal(root.headers.get('location'), '/docs');
  const index = await http(svc.url, 'GET', '/api/v1');
  assert.equal(index.status, 200);
  assertResponseMatches(doc, 'get', '/api/v1', index);
  const base = svc.service.services.config.publicBaseUrl;
  assert.deepEqual(index.body.links, {
    docs: `${base}/docs`,
    openapi: `${base}/api/v1/openapi.json`,
    mcp: `${base}/api/mcp`,
    health: `${base}/healthz`,
  });
  assert.equal(index.body.version, doc.info.version);
  assert.equal((await http(svc.url, 'POST', '/api/v1')).status, 405);
});

async function freshKeyWithEveryScope() {
  const op = operator(svc.url);
  const account = await op.createAccount();
  return op.issueKey(account.id, { scopes: [...new Set(operations.flatMap((o) => (o.scope ? [o.scope] : [])))] });
}

// ---------------------------------------------------------------- every response validates

/**
 * Collects every mismatch of one exercise instead of stopping at the first,
 * so a failure lists all the responses that disagree with the document.
 */
class Findings {
  readonly problems: string[] = [];
  /** The status is what the scenario needs; false (and noted) when it is not. */
  status(res: HttpResult, status: number, note: string): boolean {
    if (res.status === status) return true;
    this.problems.push(`${note}: expected ${status}, got ${res.status} ${res.text.slice(0, 300)}`);
    return false;
  }
  /** The body validates, and its Content-Type is one the document gives for that response (JSON bodies: application/json). */
  matches(method: string, template: string, res: HttpResult, note: string): void {
    if (res.text !== '' && !res.headers.get('content-type')) {
      this.problems.push(`${note}: ${res.status} body sent without a Content-Type (documented: application/json)`);
    }
    try {
      assertResponseMatches(doc, method, template, res);
    } catch (err) {
      this.problems.push(`${note}: ${(err as Error).message}`);
    }
  }
  that(ok: boolean, note: string): void {
    if (!ok) this.problems.push(note);
  }
  done(): void {
    assert.deepEqual(this.problems, [], `\n${this.problems.join('\n')}`);
  }
}

/** Gives list operations something to list: resources of the kind their path names. */
async function populate(op: Operation, t: Tenant): Promise<void> {
  const collection = op.path.split('/').at(-1)!;
  if (!collection.startsWith(':') && resourceFactories[collection]) {
    await resourceFactories[collection](t);
    await resourceFactories[collection](t);
  }
}

for (const op of restOps) {
  test(`${op.name} (${op.method} ${op.path}): success, dry run and error responses validate against the document`, async () => {
    const f = new Findings();
    const template = templateOf(op);
    const t = await tenant(svc);
    await populate(op, t);
    const targets = await createTargets(op, t);
    const call = await prepareCall(op, targets, t);

    // 401: no key, and a malformed one.
    for (const token of [undefined, 'merx_not-a-real-key']) {
      const res = await restCall(svc.url, op, token, call);
      if (f.status(res, 401, `401 (${token ? 'malformed key' : 'no key'})`)) f.matches(op.method, template, res, '401');
    }

    // 403: a key without the scope (EXTENSIONS 7: an operation without a scope admits any valid key).
    if (op.scope !== null) {
      const noScope = await t.op.issueKey(t.accountId, { scopes: scopesWithout(op) });
      const forbidden = await restCall(svc.url, op, noScope, call);
      if (f.status(forbidden, 403, '403 scope_missing')) f.matches(op.method, template, forbidden, '403 scope_missing');
    }

    // 403: Free plan (the scope check passes).
    const free = await t.op.createAccount({ plan: 'free' });
    const freeKey = await t.op.issueKey(free.id, { scopes: [op.scope ?? 'orders:read'] });
    const planned = await restCall(svc.url, op, freeKey, call);
    if (f.status(planned, 403, '403 plan_required')) {
      f.that(planned.body?.error?.code === 'plan_required', `403 plan: code ${planned.body?.error?.code}`);
      f.matches(op.method, template, planned, '403 plan_required');
    }

    // 400: a non-UUID id, an unknown query parameter, an unknown body field.
    for (const { name: param } of targetArgs(op)) {
      const res = await restCall(svc.url, op, t.key, await prepareCall(op, { ...targets, [param]: 'not-a-uuid' }, t));
      if (f.status(res, 400, `400 non-UUID ${param}`)) f.matches(op.method, template, res, '400 id');
    }
    const unknownQuery = await restCall(svc.url, op, t.key, { ...call, path: call.path + (call.path.includes('?') ? '&' : '?') + 'bogus_param=1' });
    if (f.status(unknownQuery, 400, '400 unknown query parameter')) f.matches(op.method, template, unknownQuery, '400 query');
    if (isWriteOp(op)) {
      const unknownField = await restCall(svc.url, op, t.key, { ...call, body: { ...(call.body ?? {}), bogus_field: 1 } });
      if (f.status(unknownField, 400, '400 unknown body field')) {
        f.matches(op.method, template, unknownField, '400 body');
        f.that(Array.isArray(unknownField.body?.error?.details?.allowed), '400 unknown body field: details.allowed lists the accepted fields');
      }
    }

    // 404: a UUID that is no row of this account.
    for (const { name: param } of targetArgs(op)) {
      const res = await restCall(svc.url, op, t.key, await prepareCall(op, { ...targets, [param]: crypto.randomUUID() }, t));
      if (f.status(res, 404, `404 ${param}`)) f.matches(op.method, template, res, '404');
    }

    // 405: a method the path does not serve.
    const served = restOps.filter((o) => o.path === op.path).map((o) => o.method);
    const other = ALL_METHODS.find((m) => !served.includes(m));
    if (other) {
      const res = await http(svc.url, other, call.path.split('?')[0], { token: t.key });
      if (f.status(res, 405, `405 ${other}`)) {
        f.that(Boolean(res.headers.get('allow')), '405: Allow header');
        f.matches(other, template, res, `405 ${other}`);
      }
    }

    // The dry run, then the real call.
    if (op.dryRunOutput) {
      const res = await restCall(svc.url, op, t.key, call, { 'X-Merx-Dry-Run': '1' });
      if (f.status(res, 200, 'dry run')) {
        f.that(res.body?.dry_run === true, 'dry run: dry_run is true');
        f.matches(op.method, template, res, 'dry run');
      }
    }
    const res = await restCall(svc.url, op, t.key, call);
    if (f.status(res, op.successStatus ?? 200, 'success')) f.matches(op.method, template, res, 'success');
    f.done();
  });
}

test('orders with line items, legacy fields, every filter and a second page validate as list_orders and get_order', async () => {
  const f = new Findings();
  const t = await tenant(svc);
  const product = await t.op.createProduct(t.accountId, { name: 'Kettle', price: 30, sku: 'KET-1', weight_g: 900 });
  const page = await t.op.createPage(t.accountId, [product.id]);
  const withItems = await t.op.checkout(t.accountId, {
    page_id: page.id,
    legacy: undefined,
    line_items: [{ product_id: product.id, qty: 2 }],
    customer: { name: 'Mira Koleva', email: 'mira@example.com', phone: '+359888000333', vat: 'BG123' },
    delivery_price: 5,
    discount_amount: 2.5,
    coupon_code: 'SPRING',
    payment_method: 'card',
    payment_status: 'paid',
  });
  const legacy = await t.op.checkout(t.accountId, { shipping: { address: null, city: null, zip: null, courier_office_id: 'SOF-7' } });
  const patched = await http(svc.url, 'PATCH', `/api/v1/orders/${legacy.id}`, {
    token: t.key,
    body: { status: 'shipped', tracking_number: 'TRK-9', tracking_url: 'https://track.example/TRK-9', courier: 'courier_b' },
  });
  if (f.status(patched, 200, 'PATCH shipped')) f.matches('PATCH', '/api/v1/orders/{id}', patched, 'PATCH shipped');
  const queries = [
    '',
    '?limit=1',
    '?status=shipped',
    '?payment=paid',
    `?page_id=${page.id}`,
    `?product_id=${product.id}`,
    '?courier=none',
    '?q=mira',
    '?from=2020-01-01&to=2100-01-01',
    '?since=2020-01-01T00:00:00Z',
  ];
  for (const q of queries) {
    const res = await http(svc.url, 'GET', `/api/v1/orders${q}`, { token: t.key });
    if (f.status(res, 200, `list_orders${q}`)) f.matches('GET', '/api/v1/orders', res, `list_orders${q}`);
  }
  const first = await http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: t.key });
  const second = await http(svc.url, 'GET', `/api/v1/orders?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: t.key });
  if (f.status(second, 200, 'second page')) f.matches('GET', '/api/v1/orders', second, 'second page');
  f.that(second.body?.next_cursor === null, 'the last page has next_cursor null');
  for (const bad of ['?cursor=garbage', '?limit=0', '?from=yesterday']) {
    const res = await http(svc.url, 'GET', `/api/v1/orders${bad}`, { token: t.key });
    if (f.status(res, 400, bad)) f.matches('GET', '/api/v1/orders', res, bad);
  }
  for (const id of [withItems.id, legacy.id]) {
    const res = await http(svc.url, 'GET', `/api/v1/orders/${id}`, { token: t.key });
    if (f.status(res, 200, `get_order ${id}`)) f.matches('GET', '/api/v1/orders/{id}', res, `get_order ${id}`);
  }
  f.done();
});

test('a 429 from the REST rate limit validates against the document', async () => {
  const t = await tenant(svc);
  let limited: HttpResult | undefined;
  for (let round = 0; round < 7 && !limited; round++) {
    const batch = await Promise.all(Array.from({ length: 50 }, () => http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: t.key })));
    limited = batch.find((r) => r.status === 429);
  }
  assert.ok(limited, '300 requests a minute: the 301st is refused');
  assert.equal(limited.body.error.code, 'rate_limited');
  assert.ok(Number(limited.headers.get('retry-after')) >= 1, 'Retry-After');
  const f = new Findings();
  f.matches('GET', '/api/v1/orders', limited, '429');
  f.done();
});

test('the validator itself refuses what the document does not allow', () => {
  const order = (path: string, status: number, body: unknown) => validateResponse(doc, 'GET', path, status, body);
  assert.equal(order('/api/v1/orders/{id}', 200, { data: { id: 'x' } }).valid, false, 'an incomplete order');
  assert.equal(order('/api/v1/orders/{id}', 404, { error: { code: 'not_found', message: 'm', extra: 1 } }).valid, false, 'a closed error object');
  assert.equal(order('/api/v1/orders/{id}', 404, { error: { code: 'not_found', message: 'm' } }).valid, true);
  assert.equal(order('/api/v1/orders/{id}', 299, {}).valid, false, 'an undocumented status');
  assert.equal(order('/api/v1/nowhere', 200, {}).valid, false, 'an undocumented path');
  assert.equal(
    validateResponse(doc, 'GET', `/api/v1/orders/${crypto.randomUUID()}`, 404, { error: { code: 'not_found', message: 'm' } }).valid,
    true,
    'concrete paths match their template',
  );
  assert.equal(order('/api/v1/orders', 200, { data: [], has_more: false, next_cursor: null }).valid, true);
  assert.equal(order('/api/v1/orders', 200, { data: [], has_more: false, next_cursor: null, total: 0 }).valid, false, 'a closed list');
});

// Path parameters are all declared by the operation (keeps pathParams honest for the walk).
test('every path parameter of the operation list is declared in the operation params', () => {
  for (const op of restOps) {
    for (const name of pathParams(op)) assert.ok(op.params?.properties[name], `${op.name}: :${name} has a schema`);
  }
});
