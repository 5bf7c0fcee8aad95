// SPEC Endpoints > "Customers and segments" (POST and DELETE
// /api/v1/segments/{id}/members), Limits (500 per call), Errors (409
// details.kind filter_segment); GAPS "Customers, segments, notes" (body
// {customers: [{email} | {phone}]}, add {added, skipped, total}, remove
// {removed}, add dry run {dry_run, keys, would_add, would_skip}, adds answer 200).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, type TestService } from './helpers/harness.ts';
import { assertError, assertScopeMissing } from './helpers/contract.ts';
import { assertResponseMatches, type OpenApiDoc } from './helpers/openapi-validator.ts';
import { shop, DRY, UNKNOWN_UUID, type Shop } from './helpers/customers.ts';

let svc: TestService;
let doc: OpenApiDoc;
before(async () => {
  svc = await startTestService();
  doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
});
after(async () => {
  await svc.close();
});

const members = (id: string) => `/api/v1/segments/${id}/members`;

/** The member keys of a segment, read from the table (the public API lists counts, not members). */
async function memberKeys(segmentId: string): Promise<string[]> {
  const { rows } = await svc.service.db.query<{ customer_key: string }>(
    'SELECT customer_key FROM segment_members WHERE segment_id = $1 ORDER BY customer_key',
    [segmentId],
  );
  return rows.map((r) => r.customer_key);
}

async function add(s: Shop, id: string, customers: unknown, headers: Record<string, string> = {}) {
  return s.api('POST', members(id), { body: { customers }, headers });
}
async function remove(s: Shop, id: string, customers: unknown, headers: Record<string, string> = {}) {
  return s.api('DELETE', members(id), { body: { customers }, headers });
}

test('add: 200 {added, skipped, total}; email wins and is lower-cased; no prior order needed; existing members are skipped', async () => {
  const s = await shop(svc.url);
  const seg = await s.createSegment({ name: 'List' });
  const res = await add(s, seg.id, [
    { email: 'Ana@Example.COM', phone: '+359880000001' },
    { phone: '+359880000002' },
    { email: 'boris@example.com' },
  ]);
  assert.equal(res.status, 200, res.text);
  assertResponseMatches(doc, 'POST', '/api/v1/segments/{id}/members', res);
  assert.deepEqual(res.body, { data: { added: 3, skipped: 0, total: 3 } });
  assert.deepEqual(await memberKeys(seg.id), ['+359880000002', 'ana@example.com', 'boris@example.com']);

  const again = await add(s, seg.id, [{ email: 'ANA@example.com' }, { email: 'boris@example.com', phone: '+359' }, { email: 'cveta@example.com' }]);
  assert.equal(again.status, 200, again.text);
  assert.deepEqual(again.body.data, { added: 1, skipped: 2, total: 4 });
  assert.equal((await s.segment(seg.id)).customer_count, 4, 'customer_count of a membership segment = its members');
  assert.deepEqual((await s.segment(seg.id)).filters, { inSegment: seg.id });
});

test('members match customers by key: an email member matches the email-keyed customer, a phone member the phone-keyed one', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'Ana@Example.com', phone: '+359880000001' });
  await s.order({ email: null, phone: '+359880000002' });
  await s.order({ email: 'cveta@example.com', phone: '+359880000003' });
  const seg = await s.createSegment({ name: 'List' });
  // Ana by her (differently cased) email, the second by phone, Cveta by her phone only (her key is her email).
  await s.addMembers(seg.id, [{ email: 'ANA@EXAMPLE.COM' }, { phone: '+359880000002' }, { phone: '+359880000003' }]);
  assert.equal((await s.segment(seg.id)).customer_count, 3);
  assert.equal(await s.previewCount({ inSegment: seg.id }), 2, 'customers in the segment (keys ana@example.com and +359880000002)');
});

test('remove: {removed}; unknown keys ignored; keys normalised like adds', async () => {
  const s = await shop(svc.url);
  const seg = await s.createSegment({ name: 'List' });
  await s.addMembers(seg.id, [{ email: 'a@example.com' }, { email: 'b@example.com' }, { phone: '+359880000003' }]);
  const res = await remove(s, seg.id, [
    { email: 'A@EXAMPLE.com' },
    { phone: '+359880000003', email: 'nobody@example.com' },
    { email: 'nobody@example.com' },
  ]);
  assert.equal(res.status, 200, res.text);
  assertResponseMatches(doc, 'DELETE', '/api/v1/segments/{id}/members', res);
  assert.deepEqual(res.body, { data: { removed: 1 } });
  assert.deepEqual(await memberKeys(seg.id), ['+359880000003', 'b@example.com'], 'email wins on remove too: the phone member stays');
  const none = await remove(s, seg.id, [{ email: 'ghost@example.com' }]);
  assert.deepEqual(none.body, { data: { removed: 0 } });
  const rest = await remove(s, seg.id, [{ phone: '+359880000003' }, { email: 'b@example.com' }]);
  assert.deepEqual(rest.body, { data: { removed: 2 } });
  assert.equal((await s.segment(seg.id)).customer_count, 0);
  // Adding after removing works again.
  assert.deepEqual(await s.addMembers(seg.id, [{ email: 'b@example.com' }]), { added: 1, skipped: 0, total: 1 });
});

test('a computed segment refuses members: 409 conflict with details.kind filter_segment (add, remove, dry run)', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'a@example.com' });
  const seg = await s.createSegment({ name: 'Computed', filters: { minOrders: 1 } });
  for (const [method, headers] of [
    ['POST', {}],
    ['DELETE', {}],
    ['POST', DRY],
    ['DELETE', DRY],
  ] as const) {
    const res = await s.api(method, members(seg.id), { body: { customers: [{ email: 'a@example.com' }] }, headers });
    const error = assertError(res, 409, 'conflict', `${method} ${JSON.stringify(headers)}`);
    assert.equal(error.details?.kind, 'filter_segment');
    assertResponseMatches(doc, method, '/api/v1/segments/{id}/members', res);
  }
  assert.deepEqual(await memberKeys(seg.id), []);
  assert.equal((await s.segment(seg.id)).customer_count, 1);
  // A membership segment PATCHed into a computed one refuses members from then on; back to {} accepts them.
  const list = await s.createSegment({ name: 'List' });
  await s.api('PATCH', `/api/v1/segments/${list.id}`, { body: { filters: { hasEmail: true } }, expect: 200 });
  assertError(await add(s, list.id, [{ email: 'x@example.com' }]), 409, 'conflict');
  await s.api('PATCH', `/api/v1/segments/${list.id}`, { body: { filters: {} }, expect: 200 });
  assert.equal((await add(s, list.id, [{ email: 'x@example.com' }])).status, 200);
});

test('dry runs: add previews normalised keys and what would be added or skipped; remove previews; nothing is written', async () => {
  const s = await shop(svc.url);
  const seg = await s.createSegment({ name: 'List' });
  await s.addMembers(seg.id, [{ email: 'a@example.com' }]);
  const body = [{ email: 'A@Example.com', phone: '+359880000001' }, { phone: '+359880000002' }, { email: 'New@Example.com' }];
  const res = await add(s, seg.id, body, DRY);
  assert.equal(res.status, 200, res.text);
  assertResponseMatches(doc, 'POST', '/api/v1/segments/{id}/members', res);
  assert.equal(res.body.dry_run, true);
  assert.deepEqual(res.body.keys, ['a@example.com', '+359880000002', 'new@example.com']);
  assert.equal(res.body.would_add, 2);
  assert.equal(res.body.would_skip, 1);
  assert.deepEqual(await memberKeys(seg.id), ['a@example.com'], 'dry-run add writes nothing');

  const rm = await remove(s, seg.id, [{ email: 'A@EXAMPLE.COM' }, { email: 'ghost@example.com' }], DRY);
  assert.equal(rm.status, 200, rm.text);
  assertResponseMatches(doc, 'DELETE', '/api/v1/segments/{id}/members', rm);
  assert.equal(rm.body.dry_run, true);
  assert.deepEqual(await memberKeys(seg.id), ['a@example.com'], 'dry-run remove writes nothing');

  // The preview predicts the real outcome.
  const real = await s.addMembers(seg.id, body);
  assert.deepEqual({ added: real.added, skipped: real.skipped }, { added: res.body.would_add, skipped: res.body.would_skip });
  assertError(await add(s, UNKNOWN_UUID, body, DRY), 404, 'not_found');
});

test('the same customer twice in one call is one member; the dry run predicts the same counts as the real call', async () => {
  const s = await shop(svc.url);
  const seg = await s.createSegment({ name: 'List' });
  const body = [{ email: 'dup@example.com' }, { email: 'DUP@example.com' }, { phone: '+359880000009' }, { phone: '+359880000009' }];
  const dry = (await add(s, seg.id, body, DRY)).body;
  assert.deepEqual(dry.keys, ['dup@example.com', '+359880000009']);
  const real = await s.addMembers(seg.id, body);
  assert.equal(real.added, 2);
  assert.equal(real.total, 2);
  assert.deepEqual(await memberKeys(seg.id), ['+359880000009', 'dup@example.com']);
  assert.deepEqual(
    { would_add: dry.would_add, would_skip: dry.would_skip },
    { would_add: real.added, would_skip: real.skipped },
    'dry-run would_add/would_skip equal the real added/skipped for the same body',
  );
});

test('limits: 1..500 customers per call; each needs an email or a phone; keys up to 200 characters; closed objects', async () => {
  const s = await shop(svc.url);
  const seg = await s.createSegment({ name: 'List' });
  const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ email: `${prefix}${i}@example.com` }));
  const five = await add(s, seg.id, many(500, 'bulk'));
  assert.equal(five.status, 200, five.text);
  assert.deepEqual(five.body.data, { added: 500, skipped: 0, total: 500 });
  assert.equal((await s.segment(seg.id)).customer_count, 500);
  const removed = await remove(s, seg.id, many(500, 'bulk'));
  assert.deepEqual(removed.body, { data: { removed: 500 } });

  const invalid: Array<[string, unknown]> = [
    ['501 customers', { customers: many(501, 'over') }],
    ['empty list', { customers: [] }],
    ['no customers', {}],
    ['customers not an array', { customers: { email: 'a@example.com' } }],
    ['an empty entry', { customers: [{}] }],
    ['blank email and no phone', { customers: [{ email: '   ' }] }],
    ['unknown entry field', { customers: [{ email: 'a@example.com', name: 'Ana' }] }],
    ['email not a string', { customers: [{ email: 42 }] }],
    ['phone not a string', { customers: [{ phone: 359880000001 }] }],
    ['entry not an object', { customers: ['a@example.com'] }],
    ['unknown body field', { customers: [{ email: 'a@example.com' }], replace: true }],
    ['key over 200 characters', { customers: [{ email: `${'a'.repeat(195)}@x.com` }] }],
    ['phone over 200 characters', { customers: [{ phone: '1'.repeat(201) }] }],
  ];
  for (const [label, body] of invalid) {
    for (const method of ['POST', 'DELETE']) {
      const res = await s.api(method, members(seg.id), { body });
      assertError(res, 400, 'validation_failed', `${method} ${label}`);
    }
  }
  assertError(
    await s.api('POST', members(seg.id), { body: { customers: many(501, 'over') }, headers: DRY }),
    400,
    'validation_failed',
    'dry run over the limit',
  );
  assert.deepEqual(await memberKeys(seg.id), [], 'nothing added by refused calls');

  const longest = `${'a'.repeat(194)}@x.com`;
  assert.equal(longest.length, 200);
  assert.deepEqual(await s.addMembers(seg.id, [{ email: longest }, { phone: '9'.repeat(200) }]), { added: 2, skipped: 0, total: 2 });
  assertError(
    await s.api('POST', `/api/v1/segments/not-a-uuid/members`, { body: { customers: [{ email: 'a@example.com' }] } }),
    400,
    'validation_failed',
  );
  assertError(
    await s.api('DELETE', `/api/v1/segments/${UNKNOWN_UUID}/members`, { body: { customers: [{ email: 'a@example.com' }] } }),
    404,
    'not_found',
  );
});

test('deleting a segment removes its memberships; members of other segments stay', async () => {
  const s = await shop(svc.url);
  const one = await s.createSegment({ name: 'One' });
  const two = await s.createSegment({ name: 'Two' });
  await s.addMembers(one.id, [{ email: 'a@example.com' }, { email: 'b@example.com' }]);
  await s.addMembers(two.id, [{ email: 'a@example.com' }]);
  const del = await s.api('DELETE', `/api/v1/segments/${one.id}`, { expect: 200 });
  assert.equal(del.body.data.members_removed, 2);
  assert.deepEqual(await memberKeys(one.id), []);
  assert.deepEqual(await memberKeys(two.id), ['a@example.com']);
});

test('writes need customers:write; a read-only key is refused and nothing changes', async () => {
  const s = await shop(svc.url);
  const seg = await s.createSegment({ name: 'List' });
  const reader = await s.op.issueKey(s.accountId, { scopes: ['customers:read'] });
  for (const method of ['POST', 'DELETE']) {
    const res = await http(svc.url, method, members(seg.id), { token: reader, body: { customers: [{ email: 'a@example.com' }] } });
    assertScopeMissing(res, 'customers:write', method);
  }
  assert.deepEqual(await memberKeys(seg.id), []);
});
