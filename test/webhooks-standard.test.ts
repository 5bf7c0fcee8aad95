// EXTENSIONS 4: Standard Webhooks headers on every delivery beside X-Merx-*,
// and secret rotation with dual signing until the old secret expires. Every
// delivery is checked by two independent verifiers: the official
// `standardwebhooks` package and Stripe's, and by our own merx-client
// receiver helper on each scheme, before, during and after a rotation; after
// expiry all refuse the old secret.
import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../packages/client/src/webhooks.ts';
import { http, type TestService } from './helpers/harness.ts';
import type { HttpsReceiver, ReceiverEndpoint, ReceivedRequest } from './helpers/https-receiver.ts';
import { startReceiverWorld, subscribedTenant, runDeliveryJob, deliveryWhen, assertSignedDelivery, type ReceiverWorld } from './helpers/webhooks.ts';
import { assertError, ISO_RE } from './helpers/contract.ts';
import { callTool } from './helpers/mcp.ts';

let svc: TestService;
let receiver: HttpsReceiver;
let world: ReceiverWorld;
const stripe = new Stripe('sk_test_merx_standard_webhooks');
before(async () => {
  world = await startReceiverWorld();
  ({ svc, receiver } = world);
});
after(async () => {
  await world?.close();
});

/** EXTENSIONS 4: the same secret as a Standard Webhooks secret, computed here from the contract. */
const whsec = (secret: string) => `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
const headerOf = (r: ReceivedRequest, name: string) => r.headers[name] as string;

/** Both verifiers' verdicts on one received delivery for one secret. */
function verdicts(r: ReceivedRequest, secret: string) {
  const standard = (() => {
    try {
      new Webhook(whsec(secret)).verify(r.body, r.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  })();
  const viaStripe = (() => {
    try {
      stripe.webhooks.constructEvent(r.body, headerOf(r, 'x-merx-signature'), secret);
      return true;
    } catch {
      return false;
    }
  })();
  const headers = r.headers as Record<string, string>;
  const standardOnly = Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith('x-merx-')));
  const client = verifyWebhook(r.body, headers, secret).valid && verifyWebhook(r.body, standardOnly, secret).valid;
  return { standard, stripe: viaStripe, client };
}

function assertAccepted(r: ReceivedRequest, secret: string, note: string) {
  assert.deepEqual(verdicts(r, secret), { standard: true, stripe: true, client: true }, `${note}: every verifier accepts`);
}
function assertRefused(r: ReceivedRequest, secret: string, note: string) {
  assert.deepEqual(verdicts(r, secret), { standard: false, stripe: false, client: false }, `${note}: every verifier refuses`);
}

const setup = (t: TestContext, endpoint: ReceiverEndpoint) => subscribedTenant(t, svc, endpoint);

const rotate = (key: string, id: string, body: unknown = {}, headers: Record<string, string> = {}) =>
  http(svc.url, 'POST', `/api/v1/webhooks/${id}/rotate-secret`, { token: key, body, headers });

test('every delivery carries webhook-id (the envelope id, kept on retries), webhook-timestamp and webhook-signature; both verifiers accept it', async (t) => {
  const endpoint = receiver.endpoint('standard');
  endpoint.script([{ status: 500 }], { status: 200 });
  const { key, sub, secret, deliver } = await setup(t, endpoint);
  const first = await deliver();
  const envelope = assertSignedDelivery(first, secret, 'order.updated');
  assert.equal(headerOf(first, 'webhook-id'), envelope.id, 'webhook-id is the envelope id');
  assert.equal(headerOf(first, 'webhook-id'), headerOf(first, 'x-merx-event-id'));
  assert.equal(headerOf(first, 'webhook-timestamp'), headerOf(first, 'x-merx-timestamp'), 'the same Unix seconds');
  assert.match(headerOf(first, 'webhook-signature'), /^v1,[A-Za-z0-9+/]{43}=$/, 'one v1,<base64> entry');
  assertAccepted(first, secret, 'first attempt');
  assertRefused(first, 'f'.repeat(64), 'another secret');

  // The retry: the same webhook-id, a fresh timestamp and signature, still verified.
  // Once the failed attempt is recorded (until then its row is leased, and a job run would skip it).
  const failed = await deliveryWhen(svc.url, key, sub.id, (d) => d.last_status_code === 500, 'the failed first attempt');
  await runDeliveryJob(svc.url, new Date(failed.next_attempt_at));
  const [, retry] = await endpoint.waitFor(2);
  assert.equal(headerOf(retry, 'webhook-id'), headerOf(first, 'webhook-id'), 'webhook-id is the same on every retry');
  assert.notEqual(headerOf(retry, 'x-merx-delivery'), headerOf(first, 'x-merx-delivery'), 'X-Merx-Delivery differs per attempt');
  assertAccepted(retry, secret, 'retry');
});

test('rotation: both secrets sign until the old one expires (new first), then only the new one; verifiers accept and refuse accordingly', async (t) => {
  const endpoint = receiver.endpoint('rotation');
  const { key, sub, secret: oldSecret, deliver } = await setup(t, endpoint);
  assertAccepted(await deliver(), oldSecret, 'before the rotation');

  const before = Date.now();
  const res = await rotate(key, sub.id);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['data', 'previous_secret_expires_at', 'secret', 'standard_secret']);
  const { secret: newSecret, standard_secret, previous_secret_expires_at, data } = res.body;
  assert.match(newSecret, /^[0-9a-f]{64}$/);
  assert.notEqual(newSecret, oldSecret);
  assert.equal(standard_secret, whsec(newSecret));
  assert.match(previous_secret_expires_at, ISO_RE);
  const ttlMs = Date.parse(previous_secret_expires_at) - before;
  assert.ok(ttlMs > 86_390_000 && ttlMs < 86_410_000, `the default ttl is one day (${ttlMs} ms)`);
  assert.equal(data.id, sub.id);
  assert.equal(data.secret_prefix, `${newSecret.slice(0, 8)}…`, 'the subscription shows the new secret prefix');
  assert.ok(!('secret' in data), 'the subscription view is unchanged in shape');

  const during = await deliver();
  const merx = headerOf(during, 'x-merx-signature').split(',');
  assert.equal(merx.length, 3, `t and two v1: ${headerOf(during, 'x-merx-signature')}`);
  assert.equal(merx[0], `t=${headerOf(during, 'x-merx-timestamp')}`);
  assert.ok(merx[1].startsWith('v1=') && merx[2].startsWith('v1='));
  assertSignedDelivery(
    { headers: { ...during.headers, 'x-merx-signature': `${merx[0]},${merx[1]}` }, body: during.body },
    newSecret,
    'order.updated',
  );
  assertSignedDelivery(
    { headers: { ...during.headers, 'x-merx-signature': `${merx[0]},${merx[2]}` }, body: during.body },
    oldSecret,
    'order.updated',
  );
  assert.equal(headerOf(during, 'webhook-signature').split(' ').length, 2, 'two webhook-signature entries');
  assertAccepted(during, newSecret, 'during, new secret');
  assertAccepted(during, oldSecret, 'during, old secret');

  // The old secret's time is up.
  await svc.service.db.query(`UPDATE webhook_subscriptions SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [sub.id]);
  const after = await deliver();
  assert.equal(headerOf(after, 'x-merx-signature').split(',').length, 2, 'one v1 again');
  assert.equal(headerOf(after, 'webhook-signature').split(' ').length, 1);
  assertAccepted(after, newSecret, 'after expiry, new secret');
  assertRefused(after, oldSecret, 'after expiry, old secret');
});

test('a ttl of 0 retires the old secret at once; rotating again while an old secret is live replaces it', async (t) => {
  const endpoint = receiver.endpoint('rotate-twice');
  const { key, sub, secret: s0, deliver } = await setup(t, endpoint);
  const r1 = await rotate(key, sub.id, { previous_secret_ttl_sec: 3600 });
  assert.equal(r1.status, 200, r1.text);
  const s1 = r1.body.secret;
  const r2 = await rotate(key, sub.id, { previous_secret_ttl_sec: 3600 });
  const s2 = r2.body.secret;
  const both = await deliver();
  assertAccepted(both, s2, 'the newest secret');
  assertAccepted(both, s1, 'the one it replaced');
  assertRefused(both, s0, 'the one replaced before: no longer signs');
  assert.equal(headerOf(both, 'webhook-signature').split(' ').length, 2);

  const requested = Date.now();
  const r3 = await rotate(key, sub.id, { previous_secret_ttl_sec: 0 });
  assert.equal(r3.status, 200, r3.text);
  const expiresAt = Date.parse(r3.body.previous_secret_expires_at);
  assert.ok(Math.abs(expiresAt - requested) < 5000, 'with ttl 0 it is the rotation time itself');
  const only = await deliver();
  assertAccepted(only, r3.body.secret, 'the new secret');
  assertRefused(only, s2, 'the secret replaced with ttl 0');
  assert.equal(headerOf(only, 'webhook-signature').split(' ').length, 1);
});

test('rotate-secret refuses bad ttls and unknown fields, previews in a dry run without rotating, and is the MCP tool rotate_webhook_secret', async (t) => {
  const endpoint = receiver.endpoint('rotate-api');
  const { key, sub, secret, deliver } = await setup(t, endpoint);
  for (const body of [
    { previous_secret_ttl_sec: -1 },
    { previous_secret_ttl_sec: 604801 },
    { previous_secret_ttl_sec: 1.5 },
    { previous_secret_ttl_sec: '60' },
    { ttl: 60 },
  ]) {
    assertError(await rotate(key, sub.id, body), 400, 'validation_failed', JSON.stringify(body));
  }
  assert.equal((await rotate(key, sub.id, { previous_secret_ttl_sec: 604800 }, { 'X-Merx-Dry-Run': '1' })).status, 200);
  const dry = await rotate(key, sub.id, { previous_secret_ttl_sec: 60 }, { 'X-Merx-Dry-Run': 'true' });
  assert.equal(dry.status, 200, dry.text);
  assert.deepEqual(Object.keys(dry.body).sort(), ['data', 'dry_run', 'previous_secret_expires_at']);
  assert.equal(dry.body.dry_run, true);
  const unchanged = await deliver();
  assertAccepted(unchanged, secret, 'a dry run rotates nothing');
  assert.equal(headerOf(unchanged, 'webhook-signature').split(' ').length, 1);

  assertError(await rotate(key, '00000000-0000-4000-8000-000000000000'), 404, 'not_found');
  const viaTool = await callTool(svc.url, key, 'rotate_webhook_secret', { id: sub.id, previous_secret_ttl_sec: 0 });
  assert.equal(viaTool.isError, false, JSON.stringify(viaTool.structuredContent));
  assert.equal(viaTool.structuredContent.standard_secret, whsec(viaTool.structuredContent.secret));
  assertAccepted(await deliver(), viaTool.structuredContent.secret, 'after the MCP rotation');
});
