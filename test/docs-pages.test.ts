// Issue 28: the public docs speak to users. /docs is several pages (the
// reference, the MCP page, one per guide), none of them showing internal
// headings or raw markup in its navigation, and every operation of the
// reference has request samples with curl and merx-client, generated from
// the registry.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService, http, type TestService } from './helpers/harness.ts';
import { GUIDES } from '../src/transports/guides.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.close();
});

const PAGES = ['/docs', '/docs/reference/catalog', '/docs/reference/webhooks', '/docs/mcp', ...GUIDES.filter((g) => g.slug !== 'mcp').map((g) => `/docs/guides/${g.slug}`)];
const INTERNAL = [/beyond SPEC/i, /Part [123]\b/, /specification left room/i, /\bGAPS\b/, /settings → integrations/];

/** What Redoc puts in a page's navigation: tag names, operation summaries, and the headings (#, ##) of every description. */
function navigationOf(doc: any): string[] {
  const headings = (markdown: string | undefined) => [...(markdown ?? '').matchAll(/^#{1,2} (.*)$/gm)].map((m) => m[1]);
  const entries = [...headings(doc.info.description), ...(doc.tags ?? []).flatMap((t: any) => [t.name, ...headings(t.description)])];
  for (const item of Object.values(doc.paths ?? {}) as any[]) for (const op of Object.values(item) as any[]) entries.push(op.summary);
  return entries;
}

test('every page of /docs serves its own document; the navigation is plain text, and nothing in it is internal', async () => {
  for (const page of PAGES) {
    const html = await http(svc.url, 'GET', page);
    assert.equal(html.status, 200, page);
    assert.match(html.text, new RegExp(`data-spec="${page}/openapi.json"`), page);
    for (const other of ['/docs', '/docs/mcp', '/docs/guides/getting-started', '/docs/guides/contract']) assert.ok(html.text.includes(`href="${other}"`), `${page} links ${other}`);
    const doc = (await http(svc.url, 'GET', `${page}/openapi.json`)).body;
    const nav = navigationOf(doc);
    assert.ok(nav.length > 0, `${page} has a navigation`);
    for (const entry of nav) assert.doesNotMatch(entry, /[`<>]/, `${page}: navigation entry "${entry}" is plain text`);
    const text = JSON.stringify(doc);
    for (const pattern of INTERNAL) assert.doesNotMatch(text, pattern, `${page} says nothing internal (${pattern})`);
  }
});

test('no page holds everything: the reference holds operations only, the MCP page the tools, each guide its own page', async () => {
  const docs: Record<string, string> = {};
  for (const page of PAGES) docs[page] = (await http(svc.url, 'GET', `${page}/openapi.json`)).text;
  for (const page of ['/docs', '/docs/reference/catalog', '/docs/reference/webhooks']) {
    const reference = JSON.parse(docs[page]);
    assert.ok(!reference.tags.some((t: any) => t['x-traitTag']), `${page}: the reference has no guide sections`);
    assert.ok(!docs[page].includes('id=\\"tool-create_shipment\\"'), `${page}: nor the MCP tools`);
  }
  for (const guide of GUIDES) {
    // A sentence of each guide is on its own page only.
    const own = guide.slug === 'mcp' ? '/docs/mcp' : `/docs/guides/${guide.slug}`;
    const text = JSON.parse(docs[own]).info.description as string;
    const sentence = text.split('\n').find((l) => l.length > 60 && !l.startsWith('|') && !l.startsWith('#'))!;
    const holders = PAGES.filter((p) => docs[p].includes(JSON.stringify(sentence).slice(1, -1)));
    assert.deepEqual(holders, [own], `"${sentence.slice(0, 40)}..." is on ${own} alone`);
  }
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
  for (const [pathTemplate, item] of Object.entries(doc.paths) as Array<[string, Record<string, any>]>) {
    for (const [method, op] of Object.entries(item)) {
      count++;
      const samples = op['x-codeSamples'] as Array<{ lang: string; label: string; source: string }>;
      assert.ok(Array.isArray(samples), `${op.operationId} has x-codeSamples`);
      assert.deepEqual(samples.map((s) => s.label), ['curl', 'merx-client'], op.operationId);
      const curl = samples[0].source;
      const m = /^curl -X ([A-Z]+) "([^"?]+)(\?[^"]*)?"/.exec(curl);
      assert.ok(m, `${op.operationId}: ${curl}`);
      assert.equal(m[1], method.toUpperCase(), `${op.operationId}: curl method`);
      assert.equal(m[2], base + pathTemplate.replace(/\{(\w+)\}/g, '<$1>'), `${op.operationId}: curl path`);
      assert.equal(/Authorization: Bearer \$MERX_KEY/.test(curl), !(op.security && op.security.length === 0), `${op.operationId}: the key unless the route needs none`);
      if (op.requestBody) {
        const body = /-d '((?:[^']|'\\'')*)'/.exec(curl);
        assert.ok(body, `${op.operationId}: the curl sample sends a body`);
        assert.doesNotThrow(() => JSON.parse(body[1].replace(/'\\''/g, "'")), `${op.operationId}: the body is JSON`);
      }
      const client = samples[1].source;
      assert.ok(client.includes(`merx.${method.toUpperCase()}('${pathTemplate}'`), `${op.operationId}: ${client}`);
      assert.match(client, /createMerxClient\(\{ baseUrl: '[^']+', apiKey: process\.env\.MERX_KEY \}\)/);
      for (const param of (op.parameters ?? []).filter((p: any) => p.in === 'path')) assert.ok(client.includes(`${param.name}: '<${param.name}>'`), `${op.operationId}: path ${param.name}`);
    }
  }
  assert.ok(count > 30, `${count} operations`);
});

test('a curl sample runs as written once its placeholders are filled: the body it sends is one the operation takes', async () => {
  const { freshTenant } = await import('./helpers/harness.ts');
  const { key } = await freshTenant(svc.url, { scopes: ['products:write', 'products:read', 'customers:read', 'customers:write'] });
  const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
  for (const [pathTemplate, method] of [['/api/v1/products', 'post'], ['/api/v1/segments', 'post']] as const) {
    const op = doc.paths[pathTemplate]?.[method];
    assert.ok(op, `${method} ${pathTemplate} is in the document`);
    const body = /-d '((?:[^']|'\\'')*)'/.exec(op['x-codeSamples'][0].source)![1].replace(/'\\''/g, "'");
    const res = await http(svc.url, method.toUpperCase(), pathTemplate, { token: key, rawBody: body, headers: { 'content-type': 'application/json', 'X-Merx-Dry-Run': '1' } });
    assert.ok(res.status < 300, `${op.operationId}: the sample body is accepted (${res.status} ${res.text})`);
  }
});
