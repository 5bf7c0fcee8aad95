// Issues 28 and 41: the public docs speak to users. One site: the guides are
// documentation pages, the references one Redoc page per API, every page under
// one bar with one search over all of it, in the running instance's base URL;
// nothing internal shows, and every operation of the reference has request
// samples with curl and merx-client, generated from the registry.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';
import { GUIDES } from '../src/transports/guides.ts';
import { assertResponseMatches } from './helpers/openapi-validator.ts';

let svc: TestService;
const BASE = 'https://merx.example.test';
before(async () => {
  // Served somewhere else than npm start's address: every page says this instance's (issue 41).
  svc = await startTestService({ PUBLIC_BASE_URL: BASE });
});
after(async () => {
  await svc?.close();
});

const GUIDE_PAGES = GUIDES.map((g) => `/docs/guides/${g.slug}`);
const REFERENCES = [
  ['/docs', '/docs/openapi.json'],
  ['/docs/mcp', '/docs/mcp/openapi.json'],
  ['/admin/docs', '/admin/api/openapi.json'],
] as const;
const BAR_LINKS = ['/docs/guides/getting-started', '/docs', '/docs/mcp', '/admin/docs', '/admin'];
const INTERNAL = [/beyond SPEC/i, /Part [123]\b/, /specification left room/i, /\bGAPS\b/, /settings → integrations/];

/** The bar every page shows: its links, in order. */
const barOf = (html: string) =>
  [...(/<header class="bar">([^]*?)<\/header>/.exec(html)?.[1] ?? '').matchAll(/<nav[^]*?<\/nav>/g)].flatMap((nav) =>
    [...nav[0].matchAll(/href="([^"]+)"/g)].map((m) => m[1]),
  );

test('the guides are documentation pages: their own HTML, a title without a version, no OpenAPI download, nothing internal', async () => {
  for (const guide of GUIDES) {
    const page = await http(svc.url, 'GET', `/docs/guides/${guide.slug}`);
    assert.equal(page.status, 200, guide.slug);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    // As HTML writes it: "Ship a day's orders" has its apostrophe escaped.
    assert.ok(page.text.includes(`<h1>${guide.title.replaceAll("'", '&#39;')}</h1>`), `${guide.slug}: the guide's title, as written`);
    assert.doesNotMatch(page.text, /redoc|data-spec|Download OpenAPI|\(1\.0\.0\)/i, `${guide.slug}: not rendered as an API document`);
    assert.ok(page.text.length > 3000, `${guide.slug}: its text is on the page, rendered on the server`);
    assert.doesNotMatch(page.text.replace(/<pre>[^]*?<\/pre>/g, ''), /^#{1,3} /m, `${guide.slug}: Markdown headings are rendered`);
    for (const pattern of INTERNAL) assert.doesNotMatch(page.text, pattern, `${guide.slug} says nothing internal (${pattern})`);
    // The sidebar: every guide, this guide's sections by anchor, every reference.
    for (const other of GUIDES) assert.ok(page.text.includes(`href="/docs/guides/${other.slug}"`), `${guide.slug} links ${other.slug}`);
    for (const [reference] of REFERENCES) assert.ok(page.text.includes(`href="${reference}"`), `${guide.slug} links ${reference}`);
    for (const [, id] of page.text.matchAll(/<h2 id="([^"]+)"/g))
      assert.ok(page.text.includes(`href="#${id}"`), `${guide.slug}: section ${id} is in the sidebar`);
  }
  const started = (await http(svc.url, 'GET', '/docs/guides/getting-started')).text;
  assert.doesNotMatch(started, /href="(?!#|https?:|\/|mailto:)[^"]*\.md/, 'links between guides point at their pages');
  assert.ok(started.includes('href="/docs/guides/webhooks"'));
});

test('one site: every page (guides and references) has the same bar with the one search', async () => {
  for (const page of [...GUIDE_PAGES, ...REFERENCES.map(([path]) => path)]) {
    const html = (await http(svc.url, 'GET', page)).text;
    assert.deepEqual(barOf(html), BAR_LINKS, `${page}: the bar's links`);
    assert.match(html, /<input id="docs-search" type="search"/, `${page}: the search`);
    assert.match(html, /<script src="\/docs\/site.js"><\/script>/, page);
  }
  const script = await http(svc.url, 'GET', '/docs/site.js');
  assert.match(script.headers.get('content-type') ?? '', /javascript/);
  assert.match(script.text, /\/docs\/search\.json/);
});

test("one page per API: the REST reference holds every operation and webhook, the MCP page every tool, Redoc's own search off", async () => {
  const publicDoc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
  const reference = (await http(svc.url, 'GET', '/docs/openapi.json')).body;
  assert.deepEqual(reference.paths, publicDoc.paths);
  assert.deepEqual(reference.webhooks, publicDoc.webhooks);
  assert.deepEqual(reference.components, publicDoc.components);
  assert.equal(reference.info.title, 'Merx REST API');
  const init = (await http(svc.url, 'GET', '/docs/reference.js')).text;
  assert.match(init, /"disableSearch":true/);
  for (const [page, spec] of REFERENCES) assert.match((await http(svc.url, 'GET', page)).text, new RegExp(`data-spec="${spec}"`), page);
  for (const gone of ['/docs/reference/catalog', '/docs/reference/webhooks']) assert.equal((await http(svc.url, 'GET', gone)).status, 404, gone);
});

test("the search covers the guides' sections, every REST operation and webhook, every MCP tool and the operator API", async () => {
  const { entries } = (await http(svc.url, 'GET', '/docs/search.json')).body as {
    entries: Array<{ title: string; where: string; url: string; text: string }>;
  };
  const urls = new Set(entries.map((e) => e.url));
  const publicDoc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
  for (const [path, item] of Object.entries<Record<string, any>>(publicDoc.paths)) {
    for (const op of Object.values(item)) assert.ok(urls.has(`/docs#tag/${op.tags[0]}/operation/${op.operationId}`), `${op.operationId} (${path})`);
  }
  for (const name of Object.keys(publicDoc.webhooks)) assert.ok(urls.has(`/docs#/paths/${name}/post`), `webhook ${name}`);
  const key = (
    await freshTenant(svc.url, {
      scopes: [
        'orders:read',
        'orders:write',
        'shipments:read',
        'shipments:write',
        'products:read',
        'products:write',
        'inventory:read',
        'inventory:write',
        'customers:read',
        'customers:write',
        'webhooks:read',
        'webhooks:write',
        'submit_brief',
        'get_status',
        'get_facts',
      ],
    })
  ).key;
  const tools = (await http(svc.url, 'POST', '/api/mcp', { token: key, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).body.result.tools;
  for (const tool of tools) assert.ok(urls.has(`/docs/mcp#tool-${tool.name}`), `tool ${tool.name}`);
  const operatorDoc = (await http(svc.url, 'GET', '/admin/api/openapi.json')).body;
  for (const item of Object.values<Record<string, any>>(operatorDoc.paths)) {
    for (const op of Object.values(item))
      assert.ok(urls.has(`/admin/docs#tag/${op.tags[0].replace(/ /g, '-')}/operation/${op.operationId}`), `operator ${op.operationId}`);
  }
  for (const guide of GUIDES) {
    const html = (await http(svc.url, 'GET', `/docs/guides/${guide.slug}`)).text;
    for (const [, id] of html.matchAll(/<h[23] id="([^"]+)"/g)) assert.ok(urls.has(`/docs/guides/${guide.slug}#${id}`), `${guide.slug}#${id}`);
  }
  // The words a reader types reach the webhooks (issue 41: search on /docs found nothing about them).
  const webhookEntries = entries.filter((e) => `${e.title} ${e.text}`.toLowerCase().includes('webhook'));
  assert.ok(
    webhookEntries.some((e) => e.url.startsWith('/docs#tag/Webhooks/')),
    'REST webhook operations',
  );
  assert.ok(
    webhookEntries.some((e) => e.url.startsWith('/docs/guides/webhooks')),
    'the webhooks guide',
  );
});

test("the running instance's base URL everywhere: guides, samples, the MCP page, the search; never npm start's when served elsewhere", async () => {
  const texts = [
    ...(await Promise.all(GUIDE_PAGES.map(async (p) => (await http(svc.url, 'GET', p)).text))),
    (await http(svc.url, 'GET', '/docs/openapi.json')).text,
    (await http(svc.url, 'GET', '/docs/mcp/openapi.json')).text,
    (await http(svc.url, 'GET', '/docs/search.json')).text,
  ];
  for (const text of texts) assert.doesNotMatch(text, /localhost:3000/);
  assert.ok(
    (await http(svc.url, 'GET', '/docs/guides/getting-started')).text.includes(`${BASE}/api/v1/orders?status=new&amp;limit=2`),
    "a guide's curl names this instance",
  );
  assert.ok((await http(svc.url, 'GET', '/docs/mcp/openapi.json')).body.info.description.includes(`${BASE}/api/mcp`));
  assert.equal((await http(svc.url, 'GET', '/docs/openapi.json')).body.servers[0].url, BASE);
});

test('docs/mcp.md sends the merchant where keys really come from', () => {
  const mcp = fs.readFileSync(path.join(import.meta.dirname, '../docs/mcp.md'), 'utf8');
  assert.doesNotMatch(mcp, /settings → integrations/);
  assert.match(mcp, /operator console \(`\/admin`, \*\*Accounts\*\*/);
  assert.match(mcp, /POST \/admin\/api\/accounts\/\{id\}\/keys/);
});

test('every operation of the served OpenAPI document has a curl and a merx-client sample whose method and path are its own', async () => {
  const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
  const base = doc.servers[0].url;
  let count = 0;
  for (const [pathTemplate, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      count++;
      const samples = op['x-codeSamples'] as Array<{ lang: string; label: string; source: string }>;
      assert.ok(Array.isArray(samples), `${op.operationId} has x-codeSamples`);
      assert.deepEqual(
        samples.map((s) => s.label),
        ['curl', 'merx-client'],
        op.operationId,
      );
      const curl = samples[0].source;
      const m = /^curl -X ([A-Z]+) "([^"?]+)(\?[^"]*)?"/.exec(curl);
      assert.ok(m, `${op.operationId}: ${curl}`);
      assert.equal(m[1], method.toUpperCase(), `${op.operationId}: curl method`);
      assert.equal(m[2], base + pathTemplate.replace(/\{(\w+)\}/g, '<$1>'), `${op.operationId}: curl path`);
      assert.equal(
        /Authorization: Bearer \$MERX_KEY/.test(curl),
        !(op.security && op.security.length === 0),
        `${op.operationId}: the key unless the route needs none`,
      );
      if (op.requestBody) {
        const body = /-d '((?:[^']|'\\'')*)'/.exec(curl);
        assert.ok(body, `${op.operationId}: the curl sample sends a body`);
        assert.doesNotThrow(() => JSON.parse(body[1].replace(/'\\''/g, "'")), `${op.operationId}: the body is JSON`);
      }
      const client = samples[1].source;
      assert.ok(client.includes(`merx.${method.toUpperCase()}('${pathTemplate}'`), `${op.operationId}: ${client}`);
      assert.match(client, /createMerxClient\(\{ baseUrl: '[^']+', apiKey: process\.env\.MERX_KEY \}\)/);
      for (const param of (op.parameters ?? []).filter((p: any) => p.in === 'path'))
        assert.ok(client.includes(`${param.name}: '<${param.name}>'`), `${op.operationId}: path ${param.name}`);
    }
  }
  assert.ok(count > 30, `${count} operations`);
});

test('a curl sample runs as written once its placeholders are filled: the body it sends is one the operation takes', async () => {
  const { key } = await freshTenant(svc.url, { scopes: ['products:write', 'products:read', 'customers:read', 'customers:write'] });
  const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
  for (const [pathTemplate, method] of [
    ['/api/v1/products', 'post'],
    ['/api/v1/segments', 'post'],
  ] as const) {
    const op = doc.paths[pathTemplate]?.[method];
    assert.ok(op, `${method} ${pathTemplate} is in the document`);
    const body = /-d '((?:[^']|'\\'')*)'/.exec(op['x-codeSamples'][0].source)![1].replace(/'\\''/g, "'");
    const res = await http(svc.url, method.toUpperCase(), pathTemplate, {
      token: key,
      rawBody: body,
      headers: { 'content-type': 'application/json', 'X-Merx-Dry-Run': '1' },
    });
    assert.ok(res.status < 300, `${op.operationId}: the sample body is accepted (${res.status} ${res.text})`);
  }
});

test('the public documents cite no internal section ("EXTENSIONS 6", "SPEC"), and a simple read lists only the refusals it gives', async () => {
  for (const path of ['/api/v1/openapi.json', '/admin/api/openapi.json', '/docs/mcp/openapi.json']) {
    const text = (await http(svc.url, 'GET', path)).text;
    assert.doesNotMatch(text, /\b(EXTENSIONS|SPEC|GAPS|DESIGN|OPERATOR_API)\b/, path);
  }
  const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
  assert.deepEqual(Object.keys(doc.paths['/api/v1/orders'].get.responses), ['200', '304', '400', '401', '403', '429', '503', 'default']);
  assert.deepEqual(Object.keys(doc.paths['/api/v1/orders/{id}'].get.responses), ['200', '304', '400', '401', '403', '404', '429', '503', 'default']);
  assert.ok(doc.paths['/api/v1/shipments'].post.responses['502'], "a waybill is the courier's work: 502 listed");
  assert.equal(doc.paths['/api/v1/orders'].get.responses['502'], undefined);
  // What any request can meet is still documented, once: the default answer, in the error shape.
  const tooBig = await http(svc.url, 'GET', '/api/v1/orders', { headers: { 'x-filler': 'x'.repeat(20_000) } });
  assert.equal(tooBig.status, 431);
  assertResponseMatches(doc, 'get', '/api/v1/orders', tooBig);
  for (const item of Object.values<Record<string, any>>(doc.paths)) {
    for (const op of Object.values(item))
      assert.match(op.responses.default?.description ?? '', /^Any other refusal, in the same shape: .*500 internal_error/, op.operationId);
  }
});
