// SPEC Endpoints > "Customers and segments" (POST /api/v1/customers/{key}/notes),
// Limits (customer key max 200 characters, note text max 2000), MCP (the
// customer tools); GAPS "Customers, segments, notes" (note view, dry run,
// key rules) and "MCP details" (flattened arguments, -32602, refusals).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, type TestService } from './helpers/harness.ts';
import { assertError, assertScopeMissing, ISO_RE, UUID_RE } from './helpers/contract.ts';
import { assertResponseMatches, type OpenApiDoc } from './helpers/openapi-validator.ts';
import { rpc, request, callTool, callToolError, assertRefusal } from './helpers/mcp.ts';
import { shop, assertSegmentView, DRY, UNKNOWN_UUID } from './helpers/customers.ts';

let svc: TestService;
let doc: OpenApiDoc;
before(async () => {
  svc = await startTestService();
  doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
});
after(async () => {
  await svc.close();
});

const notesPath = (key: string) => `/api/v1/customers/${encodeURIComponent(key)}/notes`;

async function storedNotes(accountId: string) {
  const { rows } = await svc.service.db.query<{ customer_key: string; text: string }>(
    'SELECT customer_key, text FROM customer_notes WHERE account_id = $1 ORDER BY created_at, id',
    [accountId],
  );
  return rows;
}

test('a note is stored: 201 {data: {id, customer_key, text, created_at}}; URL-encoded key decoded; an email key is lower-cased', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'ana.petrova@example.com' });
  const res = await s.api('POST', notesPath('Ana.Petrova@Example.COM'), { body: { text: 'Prefers delivery after 18:00' } });
  assert.equal(res.status, 201, res.text);
  assertResponseMatches(doc, 'POST', '/api/v1/customers/{key}/notes', res);
  assert.deepEqual(Object.keys(res.body), ['data']);
  const note = res.body.data;
  assert.deepEqual(Object.keys(note).sort(), ['created_at', 'customer_key', 'id', 'text']);
  assert.match(note.id, UUID_RE);
  assert.equal(note.customer_key, 'ana.petrova@example.com');
  assert.equal(note.text, 'Prefers delivery after 18:00');
  assert.match(note.created_at, ISO_RE);

  // Keys with characters that must be URL-encoded: +, space, /, %, non-ASCII.
  const cases: Array<[string, string]> = [
    ['+359 888 123 456', '+359 888 123 456'],
    ['Ana+Shop@Example.com', 'ana+shop@example.com'],
    ['a/b@example.com', 'a/b@example.com'],
    ['100%real@example.com', '100%real@example.com'],
    ['Émile@Exemple.fr', 'émile@exemple.fr'],
  ];
  for (const [key, stored] of cases) {
    const r = await s.api('POST', notesPath(key), { body: { text: `note for ${key}` } });
    assert.equal(r.status, 201, `${key}: ${r.status} ${r.text}`);
    assert.equal(r.body.data.customer_key, stored, key);
  }
  // A key needs no prior order; several notes per customer.
  await s.api('POST', notesPath('never-ordered@example.com'), { body: { text: 'first' }, expect: 201 });
  await s.api('POST', notesPath('never-ordered@example.com'), { body: { text: 'second' }, expect: 201 });
  const notes = await storedNotes(s.accountId);
  assert.equal(notes.length, 8);
  assert.deepEqual(
    notes.filter((n) => n.customer_key === 'never-ordered@example.com').map((n) => n.text),
    ['first', 'second'],
  );
});

test('key up to 200 characters (Limits): a 200-character key is accepted, a longer one is 400 validation_failed', async () => {
  const s = await shop(svc.url);
  const key200 = `${'k'.repeat(194)}@x.com`;
  assert.equal(key200.length, 200);
  const ok = await s.api('POST', notesPath(key200), { body: { text: 'long key' } });
  assert.equal(ok.status, 201, `a 200-character key: ${ok.status} ${ok.text.slice(0, 200)}`);
  assert.equal(ok.body.data.customer_key, key200);
  const phone200 = '1'.repeat(200);
  const okPhone = await s.api('POST', notesPath(phone200), { body: { text: 'long phone key' } });
  assert.equal(okPhone.status, 201, `a 200-character phone key: ${okPhone.status} ${okPhone.text.slice(0, 200)}`);
  // 120 characters, 140 once encoded: well inside the limit.
  const mid = `${'m'.repeat(60)}+${'n'.repeat(52)}@x.com`;
  assert.equal((await s.api('POST', notesPath(mid), { body: { text: 'mid key' } })).status, 201, 'a 120-character key');

  const key201 = `${'k'.repeat(195)}@x.com`;
  for (const key of [key201, '1'.repeat(201), `${'ж'.repeat(195)}@x.com`]) {
    const res = await s.api('POST', notesPath(key), { body: { text: 'too long' } });
    assertError(res, 400, 'validation_failed', `key of ${key.length} characters`);
  }
  assert.equal((await storedNotes(s.accountId)).length, 3);
});

test('text up to 2000 characters (Limits); longer, missing or mistyped text and unknown fields are 400 validation_failed', async () => {
  const s = await shop(svc.url);
  const text2000 = 'x'.repeat(1999) + 'é';
  const long = await s.api('POST', notesPath('a@example.com'), { body: { text: text2000 } });
  assert.equal(long.status, 201, long.text.slice(0, 200));
  assert.equal(long.body.data.text, text2000);
  const bad: Array<[string, unknown]> = [
    ['text over 2000', { text: 'x'.repeat(2001) }],
    ['no text', {}],
    ['text not a string', { text: 42 }],
    ['text null', { text: null }],
    ['unknown field', { text: 'hi', pinned: true }],
  ];
  for (const [label, body] of bad) {
    const res = await s.api('POST', notesPath('a@example.com'), { body });
    const error = assertError(res, 400, 'validation_failed', label);
    if (label === 'unknown field') assert.ok(Array.isArray(error.details?.allowed), 'details.allowed');
  }
  assert.equal((await storedNotes(s.accountId)).length, 1, 'only the valid note is stored');
});

test('dry run: 200 {dry_run: true, data: {customer_key, text}} and nothing stored', async () => {
  const s = await shop(svc.url);
  const res = await s.api('POST', notesPath('Dry@Example.com'), { body: { text: 'just looking' }, headers: DRY });
  assert.equal(res.status, 200, res.text);
  assertResponseMatches(doc, 'POST', '/api/v1/customers/{key}/notes', res);
  assert.deepEqual(res.body, { dry_run: true, data: { customer_key: 'dry@example.com', text: 'just looking' } });
  assert.deepEqual(await storedNotes(s.accountId), []);
  assertError(await s.api('POST', notesPath('a@example.com'), { body: { text: 'x'.repeat(2001) }, headers: DRY }), 400, 'validation_failed');
});

test('notes need customers:write and stay in their account', async () => {
  const reader = await shop(svc.url, ['customers:read', 'orders:read']);
  assertScopeMissing(await reader.api('POST', notesPath('a@example.com'), { body: { text: 'hi' } }), 'customers:write');
  assert.deepEqual(await storedNotes(reader.accountId), []);
  const a = await shop(svc.url);
  const b = await shop(svc.url);
  await a.api('POST', notesPath('shared@example.com'), { body: { text: 'from A' }, expect: 201 });
  assert.deepEqual(await storedNotes(b.accountId), []);
  assert.deepEqual(
    (await storedNotes(a.accountId)).map((n) => n.text),
    ['from A'],
  );
});

// ---------------------------------------------------------------- MCP

const CUSTOMER_TOOLS = [
  'list_customers',
  'list_segments',
  'create_segment',
  'update_segment',
  'delete_segment',
  'add_segment_members',
  'remove_segment_members',
  'add_customer_note',
];

test('MCP tools/list: customers:read shows the two read tools, customers:write the six write tools with dry_run', async () => {
  const names = async (scopes: string[]) => {
    const s = await shop(svc.url, scopes);
    const res = await rpc(svc.url, s.key, request('tools/list'));
    assert.equal(res.status, 200, res.text);
    return res.body.result.tools as any[];
  };
  const readTools = (await names(['customers:read'])).map((t) => t.name).filter((n) => CUSTOMER_TOOLS.includes(n));
  assert.deepEqual(readTools.sort(), ['list_customers', 'list_segments']);
  const writeTools = (await names(['customers:write'])).filter((t) => CUSTOMER_TOOLS.includes(t.name));
  assert.deepEqual(writeTools.map((t) => t.name).sort(), CUSTOMER_TOOLS.filter((n) => !n.startsWith('list_')).sort());
  for (const tool of writeTools) assert.equal(tool.inputSchema.properties.dry_run?.type, 'boolean', `${tool.name} takes dry_run`);
  const note = writeTools.find((t) => t.name === 'add_customer_note');
  assert.ok(note.inputSchema.properties.key, 'add_customer_note takes key');
  assert.ok(note.inputSchema.properties.text, 'add_customer_note takes text');
});

test('MCP tools/call: the customer tools answer with the REST bodies', async () => {
  const s = await shop(svc.url);
  await s.order({ name: 'Mila', email: 'mila@example.com', phone: '+359866666666' }, { legacy: { product_name: 'x', quantity: 1, unit_price: 150 } });
  await s.order({ name: 'Nina', email: 'nina@example.com' }, { legacy: { product_name: 'x', quantity: 1, unit_price: 20 } });

  const customers = await callTool(svc.url, s.key, 'list_customers', { q: 'mila' });
  assert.equal(customers.isError, false);
  assert.deepEqual(customers.structuredContent, await s.customers({ q: 'mila' }));

  // add_customer_note: key and text flattened, the key lower-cased; dry_run previews.
  const note = await callTool(svc.url, s.key, 'add_customer_note', { key: 'Mila@Example.com', text: 'VIP' });
  assert.equal(note.isError, false);
  assert.equal(note.structuredContent.data.customer_key, 'mila@example.com');
  assert.equal(note.structuredContent.data.text, 'VIP');
  assert.match(note.structuredContent.data.id, UUID_RE);
  const dryNote = await callTool(svc.url, s.key, 'add_customer_note', { key: '+359 866 666 666', text: 'call first', dry_run: true });
  assert.deepEqual(dryNote.structuredContent, { dry_run: true, data: { customer_key: '+359 866 666 666', text: 'call first' } });
  assert.deepEqual(
    (await storedNotes(s.accountId)).map((n) => n.text),
    ['VIP'],
  );
  // The 200-character limit on keys holds over MCP too (no URL in the way).
  const key200 = `${'k'.repeat(194)}@x.com`;
  const longKey = await callTool(svc.url, s.key, 'add_customer_note', { key: key200, text: 'long key', dry_run: true });
  assert.equal(longKey.structuredContent.data?.customer_key, key200);

  // Segments through MCP.
  const computed = await callTool(svc.url, s.key, 'create_segment', { name: 'Big', filters: { minTotal: 100 } });
  assert.equal(computed.isError, false);
  assertSegmentView(computed.structuredContent.data);
  assert.equal(computed.structuredContent.data.customer_count, 1);
  const preview = await callTool(svc.url, s.key, 'create_segment', { name: 'Small', filters: { maxTotal: 100 }, dry_run: true });
  assert.equal(preview.structuredContent.dry_run, true);
  assert.equal(preview.structuredContent.data.customer_count, 1);
  const list = await callTool(svc.url, s.key, 'create_segment', { name: 'List' });
  const listId = list.structuredContent.data.id;
  assert.equal(list.structuredContent.data.kind, 'membership');

  const added = await callTool(svc.url, s.key, 'add_segment_members', {
    id: listId,
    customers: [{ email: 'NINA@example.com' }, { phone: '+359800000000' }],
  });
  assert.deepEqual(added.structuredContent, { data: { added: 2, skipped: 0, total: 2 } });
  const dryAdd = await callTool(svc.url, s.key, 'add_segment_members', { id: listId, customers: [{ email: 'nina@example.com' }], dry_run: true });
  assert.deepEqual(dryAdd.structuredContent, { dry_run: true, keys: ['nina@example.com'], would_add: 0, would_skip: 1 });
  const removed = await callTool(svc.url, s.key, 'remove_segment_members', {
    id: listId,
    customers: [{ phone: '+359800000000' }, { email: 'ghost@example.com' }],
  });
  assert.deepEqual(removed.structuredContent, { data: { removed: 1 } });

  const renamed = await callTool(svc.url, s.key, 'update_segment', {
    id: computed.structuredContent.data.id,
    name: 'Bigger',
    filters: { minTotal: 10 },
  });
  assert.equal(renamed.structuredContent.data.name, 'Bigger');
  assert.equal(renamed.structuredContent.data.customer_count, 2);

  const segments = await callTool(svc.url, s.key, 'list_segments', {});
  assert.deepEqual(segments.structuredContent, (await s.api('GET', '/api/v1/segments', { expect: 200 })).body);
  assert.equal(segments.structuredContent.data.find((x: any) => x.id === listId).customer_count, 1);

  const dryDelete = await callTool(svc.url, s.key, 'delete_segment', { id: listId, dry_run: true });
  assert.equal(dryDelete.structuredContent.dry_run, true);
  assert.equal(dryDelete.structuredContent.members_removed, 1);
  const deleted = await callTool(svc.url, s.key, 'delete_segment', { id: listId });
  assert.deepEqual(deleted.structuredContent, { data: { id: listId, deleted: true, members_removed: 1 } });
});

test('MCP refusals and protocol errors of the customer tools', async () => {
  const s = await shop(svc.url);
  const computed = (await callTool(svc.url, s.key, 'create_segment', { name: 'Computed', filters: { hasEmail: true } })).structuredContent.data;
  const conflict = await callTool(svc.url, s.key, 'add_segment_members', { id: computed.id, customers: [{ email: 'a@example.com' }] });
  assertRefusal(conflict, 'CONFLICT');
  assertRefusal(await callTool(svc.url, s.key, 'remove_segment_members', { id: computed.id, customers: [{ email: 'a@example.com' }] }), 'CONFLICT');
  assertRefusal(await callTool(svc.url, s.key, 'update_segment', { id: UNKNOWN_UUID, name: 'x' }), 'NOT_FOUND');
  assertRefusal(await callTool(svc.url, s.key, 'delete_segment', { id: UNKNOWN_UUID }), 'NOT_FOUND');

  // Arguments that fail the input schema: -32602.
  const invalid: Array<[string, Record<string, unknown>]> = [
    ['create_segment', { name: 'x', filters: { minSpent: 5 } }],
    ['create_segment', { name: 'x', filters: { hasEmail: 'true' } }],
    ['create_segment', { name: 'x', filters: { lastOrderAfterDate: '2026/01/05' } }],
    ['add_customer_note', { key: 'a@example.com', text: 'x'.repeat(2001) }],
    ['add_customer_note', { key: `${'k'.repeat(195)}@x.com`, text: 'hi' }],
    ['add_customer_note', { key: 'a@example.com' }],
    ['add_segment_members', { id: computed.id, customers: [] }],
    ['add_segment_members', { id: 'not-a-uuid', customers: [{ email: 'a@example.com' }] }],
    ['list_customers', { offset: -1 }],
  ];
  for (const [tool, args] of invalid) {
    const error = await callToolError(svc.url, s.key, tool, args);
    assert.equal(error.code, -32602, `${tool} ${JSON.stringify(args).slice(0, 80)}: ${JSON.stringify(error)}`);
  }

  // A key without customers:write: SCOPE refusal.
  const reader = await shop(svc.url, ['customers:read']);
  assertRefusal(await callTool(svc.url, reader.key, 'add_customer_note', { key: 'a@example.com', text: 'hi' }), 'SCOPE');
  assertRefusal(await callTool(svc.url, reader.key, 'create_segment', { name: 'x' }), 'SCOPE');
  assert.deepEqual(await storedNotes(reader.accountId), []);
});
