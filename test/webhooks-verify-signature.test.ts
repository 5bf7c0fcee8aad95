// EXTENSIONS 5, the signature self-test: POST /api/v1/webhooks/{id}/verify-signature
// (and MCP verify_webhook_signature) takes what a receiver saw and says why
// verification fails. Each diagnosis is produced from a real delivery with
// the mistake a receiver really makes: a framework re-serialised the body,
// the delivery is verified too late, the secret expired in a rotation, the
// wrong secret, headers dropped by a proxy, a mangled header, another
// subscription's delivery.
import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { changeBehindTheService, http, type TestService } from './helpers/harness.ts';
import type { HttpsReceiver, ReceivedRequest } from './helpers/https-receiver.ts';
import { startReceiverWorld, subscribedTenant, type ReceiverWorld } from './helpers/webhooks.ts';
import { assertError } from './helpers/contract.ts';
import { callTool } from './helpers/mcp.ts';

let svc: TestService;
let receiver: HttpsReceiver;
let world: ReceiverWorld;
before(async () => {
  world = await startReceiverWorld();
  ({ svc, receiver } = world);
});
after(async () => {
  await world?.close();
});

const DIAGNOSES = [
  'missing_headers',
  'malformed_signature',
  'timestamp_out_of_tolerance',
  'unknown_delivery',
  'body_modified',
  'signed_with_expired_secret',
  'signature_mismatch',
  'ok',
];
const SIGNATURE_HEADERS = [
  'x-merx-signature',
  'x-merx-timestamp',
  'x-merx-delivery',
  'x-merx-event-id',
  'x-merx-event',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
];

/** Headers as a receiver's framework hands them over (a plain object of strings). */
const headersOf = (r: ReceivedRequest) => Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
const without = (headers: Record<string, string>, prefix: string) =>
  Object.fromEntries(Object.entries(headers).filter(([k]) => !k.startsWith(prefix)));

/** Signs `body` as Merx does, but with the given secret and time: what a delivery verified late or with another key amounts to. */
function resign(headers: Record<string, string>, body: string, secret: string, t: number) {
  const merx = crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  const standard = crypto.createHmac('sha256', secret).update(`${headers['webhook-id']}.${t}.${body}`).digest('base64');
  return {
    ...headers,
    'x-merx-timestamp': String(t),
    'x-merx-signature': `t=${t},v1=${merx}`,
    'webhook-timestamp': String(t),
    'webhook-signature': `v1,${standard}`,
  };
}

async function setup(t: TestContext) {
  const tenant = await subscribedTenant(t, svc, receiver.endpoint('verify'));
  const { sub } = tenant;
  const readKey = await tenant.op.issueKey(tenant.accountId, { scopes: ['webhooks:read'] });
  /** Asks the self-test (with a webhooks:read key); checks the answer's shape and returns data. */
  const check = async (input: Record<string, unknown>, id = sub.id) => {
    const res = await http(svc.url, 'POST', `/api/v1/webhooks/${id}/verify-signature`, { token: readKey, body: input });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body), ['data']);
    const data = res.body.data;
    assert.deepEqual(Object.keys(data).sort(), ['diagnosis', 'message', 'scheme', 'valid']);
    assert.ok(DIAGNOSES.includes(data.diagnosis), data.diagnosis);
    assert.equal(data.valid, data.diagnosis === 'ok', 'valid exactly when the diagnosis is ok');
    assert.ok([null, 'merx', 'standard'].includes(data.scheme));
    assert.ok(typeof data.message === 'string' && /^[A-Z].*\.$/.test(data.message), `one sentence: ${data.message}`);
    return data;
  };
  return { ...tenant, check, readKey };
}

test('a delivery as received is ok, by either scheme, with the body as text or base64, whatever the header case', async (t) => {
  const { check, deliver } = await setup(t);
  const r = await deliver();
  const headers = headersOf(r);
  assert.deepEqual(await check({ headers, body: r.body }), {
    valid: true,
    scheme: 'merx',
    diagnosis: 'ok',
    message: (await check({ headers, body: r.body })).message,
  });
  assert.equal((await check({ headers, body_base64: r.rawBody.toString('base64') })).diagnosis, 'ok');
  const standardOnly = await check({ headers: without(headers, 'x-merx-'), body: r.body });
  assert.deepEqual([standardOnly.scheme, standardOnly.diagnosis], ['standard', 'ok']);
  // The Merx headers alone, X-Merx-Delivery naming the attempt: still recognised.
  const merxOnly = {
    'X-Merx-Signature': headers['x-merx-signature'],
    'X-Merx-Timestamp': headers['x-merx-timestamp'],
    'X-Merx-Delivery': headers['x-merx-delivery'],
  };
  const minimal = await check({ headers: merxOnly, body: r.body });
  assert.deepEqual([minimal.scheme, minimal.diagnosis], ['merx', 'ok']);
});

test('missing and malformed headers, and a timestamp out of tolerance, are named in the contract order', async (t) => {
  const { check, deliver, secret } = await setup(t);
  const r = await deliver();
  const headers = headersOf(r);
  const plain = Object.fromEntries(Object.entries(headers).filter(([k]) => !SIGNATURE_HEADERS.includes(k)));
  // A proxy that dropped every signature header.
  assert.deepEqual(pick(await check({ headers: plain, body: r.body })), [null, 'missing_headers']);
  // Half a set of each scheme: still missing.
  const half = {
    ...plain,
    'x-merx-signature': headers['x-merx-signature'],
    'webhook-id': headers['webhook-id'],
    'webhook-signature': headers['webhook-signature'],
  };
  assert.deepEqual(pick(await check({ headers: half, body: r.body })), ['merx', 'missing_headers']);
  assert.deepEqual(pick(await check({ headers: without(half, 'x-merx-'), body: r.body })), ['standard', 'missing_headers']);

  for (const mangled of [
    'garbage',
    `t=${headers['x-merx-timestamp']}`,
    `v1=${'a'.repeat(64)}`,
    `t=soon,v1=${'a'.repeat(64)}`,
    `t=${headers['x-merx-timestamp']},v1=xyz`,
  ]) {
    assert.deepEqual(
      pick(await check({ headers: { ...headers, 'x-merx-signature': mangled }, body: r.body })),
      ['merx', 'malformed_signature'],
      mangled,
    );
  }
  const standard = without(headers, 'x-merx-');
  for (const mangled of [{ 'webhook-signature': 'v1,not base64!' }, { 'webhook-signature': 'v2,abc' }, { 'webhook-timestamp': 'yesterday' }]) {
    assert.deepEqual(
      pick(await check({ headers: { ...standard, ...mangled }, body: r.body })),
      ['standard', 'malformed_signature'],
      JSON.stringify(mangled),
    );
  }

  // Verified late: the same delivery signed (with the right secret) 400 s ago, or 400 s ahead of the clock.
  const now = Math.floor(Date.now() / 1000);
  for (const t of [now - 400, now + 400]) {
    const late = await check({ headers: resign(headers, r.body, secret, t), body: r.body });
    assert.deepEqual(pick(late), ['merx', 'timestamp_out_of_tolerance']);
    // The service reads its clock a moment after this test did: on a busy machine, in the next second.
    assert.match(late.message, /\b(399|400|401) seconds\b/);
    assert.deepEqual(pick(await check({ headers: without(resign(headers, r.body, secret, t), 'x-merx-'), body: r.body })), [
      'standard',
      'timestamp_out_of_tolerance',
    ]);
  }
  // Within 300 s it is fine.
  assert.equal((await check({ headers: resign(headers, r.body, secret, now - 200), body: r.body })).diagnosis, 'ok');
});

const pick = (v: { scheme: string | null; diagnosis: string }) => [v.scheme, v.diagnosis];

test('unknown delivery, a re-serialised or changed body, the wrong secret, an expired secret', async (t) => {
  const { check, deliver, secret, key, sub, accountId } = await setup(t);
  const r = await deliver();
  const headers = headersOf(r);

  // Headers of a delivery this subscription never had (fabricated ids, correctly signed), or of another subscription's.
  const fabricated = {
    ...headers,
    'x-merx-delivery': crypto.randomUUID(),
    'x-merx-event-id': crypto.randomUUID(),
    'webhook-id': crypto.randomUUID(),
  };
  assert.deepEqual(pick(await check({ headers: resign(fabricated, r.body, secret, Math.floor(Date.now() / 1000)), body: r.body })), [
    'merx',
    'unknown_delivery',
  ]);
  const other = await setup(t);
  const theirs = await other.deliver();
  assert.deepEqual(pick(await check({ headers: headersOf(theirs), body: theirs.body })), ['merx', 'unknown_delivery']);

  // A framework parsed the JSON and wrote it out again (pretty-printed, as many do): same JSON, other bytes.
  const reserialised = JSON.stringify(JSON.parse(r.body), null, 2);
  const modified = await check({ headers, body: reserialised });
  assert.deepEqual(pick(modified), ['merx', 'body_modified']);
  assert.match(modified.message, /parses to the same JSON/);
  const standardModified = await check({ headers: without(headers, 'x-merx-'), body: reserialised });
  assert.deepEqual(pick(standardModified), ['standard', 'body_modified']);
  const changed = JSON.parse(r.body);
  changed.data.order.admin_notes = 'tampered';
  const tampered = await check({ headers, body: JSON.stringify(changed) });
  assert.equal(tampered.diagnosis, 'body_modified');
  assert.match(tampered.message, /does not parse to the same JSON/);

  // The receiver uses a secret that is not this subscription's.
  const wrong = crypto.randomBytes(32).toString('hex');
  const now = Math.floor(Date.now() / 1000);
  assert.deepEqual(pick(await check({ headers: resign(headers, r.body, wrong, now), body: r.body })), ['merx', 'signature_mismatch']);
  assert.deepEqual(pick(await check({ headers: without(resign(headers, r.body, wrong, now), 'x-merx-'), body: r.body })), [
    'standard',
    'signature_mismatch',
  ]);

  // A rotation with a one-hour overlap: the delivery signed with the old secret still verifies; once that secret expires it does not.
  const rotated = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/rotate-secret`, { token: key, body: { previous_secret_ttl_sec: 3600 } });
  assert.equal(rotated.status, 200, rotated.text);
  assert.equal((await check({ headers, body: r.body })).diagnosis, 'ok', 'the old secret is live during the overlap');
  const during = await deliver();
  assert.equal((await check({ headers: headersOf(during), body: during.body })).diagnosis, 'ok', 'a delivery signed with both');
  await changeBehindTheService(
    svc,
    accountId,
    `UPDATE webhook_subscriptions SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`,
    [sub.id],
  );
  assert.deepEqual(pick(await check({ headers, body: r.body })), ['merx', 'signed_with_expired_secret']);
  assert.deepEqual(pick(await check({ headers: without(headers, 'x-merx-'), body: r.body })), ['standard', 'signed_with_expired_secret']);
  // Rotated again: the secret replaced first is still recognised as expired, not as a stranger.
  const again = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/rotate-secret`, { token: key, body: { previous_secret_ttl_sec: 0 } });
  assert.equal(again.status, 200);
  assert.equal((await check({ headers, body: r.body })).diagnosis, 'signed_with_expired_secret');
  assert.equal(
    (await check({ headers: headersOf(during), body: during.body })).diagnosis,
    'signed_with_expired_secret',
    'both of its secrets are gone now',
  );
  const fresh = await deliver();
  assert.equal((await check({ headers: headersOf(fresh), body: fresh.body })).diagnosis, 'ok', 'the current secret');
});

test('the request is validated, needs webhooks:read, answers 404 for another subscription, and is the MCP tool verify_webhook_signature', async (t) => {
  const { check, deliver, key, op, accountId, sub, readKey } = await setup(t);
  const r = await deliver();
  const headers = headersOf(r);
  const url = `/api/v1/webhooks/${sub.id}/verify-signature`;
  for (const body of [
    { headers },
    { headers, body: r.body, body_base64: r.rawBody.toString('base64') },
    { body: r.body },
    { headers, body: r.body, secret: 'no' },
    { headers: { 'x-merx-signature': 42 }, body: '' },
    { headers, body_base64: '***' },
  ]) {
    assertError(await http(svc.url, 'POST', url, { token: readKey, body }), 400, 'validation_failed', JSON.stringify(Object.keys(body)));
  }
  assertError(
    await http(svc.url, 'POST', `/api/v1/webhooks/${crypto.randomUUID()}/verify-signature`, { token: readKey, body: { headers, body: r.body } }),
    404,
    'not_found',
  );
  const noScope = await op.issueKey(accountId, { scopes: ['webhooks:write'] });
  const refused = assertError(await http(svc.url, 'POST', url, { token: noScope, body: { headers, body: r.body } }), 403, 'scope_missing');
  assert.equal(refused.scope, 'webhooks:read');

  const viaTool = await callTool(svc.url, key, 'verify_webhook_signature', { id: sub.id, headers, body: r.body });
  assert.equal(viaTool.isError, false);
  assert.deepEqual(viaTool.structuredContent, { data: await check({ headers, body: r.body }) });
});
