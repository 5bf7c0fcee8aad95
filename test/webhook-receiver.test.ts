// The receiver helper of merx-client (packages/client/src/webhooks.ts) against
// signatures built by hand exactly as the contract writes them, and against the
// reference verifiers of both schemes: Stripe's (the Merx scheme is Stripe's)
// and the standardwebhooks library (Standard Webhooks).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import {
  constructEvent,
  standardWebhookSecret,
  verifyMerxSignature,
  verifyStandardWebhook,
  verifyWebhook,
  WebhookVerificationError,
} from '../packages/client/src/webhooks.ts';

const secret = crypto.randomBytes(32).toString('hex'); // 64 hex characters, as Merx shows it once
const otherSecret = crypto.randomBytes(32).toString('hex');
const body = JSON.stringify({
  id: crypto.randomUUID(),
  event: 'test',
  created_at: '2026-11-22T10:00:00.000Z',
  account_id: crypto.randomUUID(),
  api_version: '2026-09-01',
  data: { message: 'Grüße from Merx', webhook_id: crypto.randomUUID() },
});
const now = Math.floor(Date.now() / 1000);

/** SPEC Delivery headers: v1 = hex HMAC-SHA256 of "<t>.<raw body>", keyed with the secret's UTF-8 bytes. */
const merxV1 = (key: string, t: number, raw = body) => crypto.createHmac('sha256', key).update(`${t}.${raw}`).digest('hex');
/** EXTENSIONS 4: base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>", same key. */
const standardV1 = (key: string, id: string, t: number, raw = body) => crypto.createHmac('sha256', key).update(`${id}.${t}.${raw}`).digest('base64');

test('Merx scheme: a signature made per the contract verifies on the string and on the raw bytes; Stripe agrees', () => {
  const header = `t=${now},v1=${merxV1(secret, now)}`;
  assert.equal(verifyMerxSignature(body, header, secret), true);
  assert.equal(verifyMerxSignature(Buffer.from(body), header, secret), true);
  assert.equal(verifyMerxSignature(new Uint8Array(Buffer.from(body)), header, secret), true);
  const stripe = new Stripe('sk_test_unused');
  assert.equal((stripe.webhooks.constructEvent(body, header, secret) as { event?: string }).event, 'test');
});

test('Merx scheme: a tampered body, another secret, a missing or malformed header, or a t outside 300 s fail', () => {
  const header = `t=${now},v1=${merxV1(secret, now)}`;
  assert.equal(verifyMerxSignature(body.replace('Grüße', 'Grusse'), header, secret), false);
  assert.equal(verifyMerxSignature(body, header, otherSecret), false);
  assert.equal(verifyMerxSignature(body, undefined, secret), false);
  assert.equal(verifyMerxSignature(body, `t=${now}`, secret), false);
  assert.equal(verifyMerxSignature(body, `v1=${merxV1(secret, now)}`, secret), false);
  assert.equal(verifyMerxSignature(body, header, secret, 300, now + 300), true, 'the window is inclusive');
  assert.equal(verifyMerxSignature(body, header, secret, 300, now + 301), false);
  assert.equal(verifyMerxSignature(body, header, secret, 300, now - 301), false);
  assert.equal(verifyMerxSignature(body, header, secret, 600, now + 500), true, "the tolerance is the caller's to widen");
  assert.equal(verifyWebhook(body, { 'X-Merx-Signature': `t=${now},v1=zz` }, secret).reason, 'malformed_signature');
  assert.equal(
    verifyWebhook(body, { 'X-Merx-Signature': `t=${now - 1000},v1=${merxV1(secret, now - 1000)}` }, secret).reason,
    'timestamp_out_of_tolerance',
  );
  assert.equal(verifyWebhook(body, { 'X-Merx-Signature': header }, otherSecret).reason, 'signature_mismatch');
});

test('Merx scheme during a rotation: t=..,v1=<new>,v1=<old> verifies with either secret, and Stripe agrees', () => {
  const header = `t=${now},v1=${merxV1(secret, now)},v1=${merxV1(otherSecret, now)}`;
  assert.equal(verifyMerxSignature(body, header, secret), true);
  assert.equal(verifyMerxSignature(body, header, otherSecret), true);
  assert.equal(verifyMerxSignature(body, header, crypto.randomBytes(32).toString('hex')), false);
  const stripe = new Stripe('sk_test_unused');
  assert.doesNotThrow(() => stripe.webhooks.constructEvent(body, header, otherSecret));
});

test('Standard Webhooks: a signature made per the contract verifies with the secret or its whsec_ form; the standardwebhooks library agrees', () => {
  const id = crypto.randomUUID();
  const signature = `v1,${standardV1(secret, id, now)}`;
  const headers = { id, timestamp: String(now), signature };
  assert.equal(verifyStandardWebhook(body, headers, secret), true);
  assert.equal(verifyStandardWebhook(Buffer.from(body), headers, standardWebhookSecret(secret)), true);
  const whsec = standardWebhookSecret(secret);
  assert.equal(whsec, `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`);
  // The reference library verifies what the contract signs ...
  const library = new Webhook(whsec);
  assert.deepEqual(library.verify(body, { 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': signature }), JSON.parse(body));
  // ... and our helper verifies what the reference library signs.
  const signedByLibrary = library.sign(id, new Date(now * 1000), body);
  assert.equal(verifyStandardWebhook(body, { id, timestamp: String(now), signature: signedByLibrary }, secret), true);
});

test('Standard Webhooks: space-separated entries during a rotation; tamper, wrong id, old timestamp and malformed headers fail', () => {
  const id = crypto.randomUUID();
  const both = `v1,${standardV1(secret, id, now)} v1,${standardV1(otherSecret, id, now)}`;
  assert.equal(verifyStandardWebhook(body, { id, timestamp: String(now), signature: both }, otherSecret), true);
  assert.equal(verifyStandardWebhook(body, { id, timestamp: String(now), signature: both }, secret), true);
  assert.equal(verifyStandardWebhook(`${body} `, { id, timestamp: String(now), signature: both }, secret), false);
  assert.equal(verifyStandardWebhook(body, { id: crypto.randomUUID(), timestamp: String(now), signature: both }, secret), false);
  const old = now - 301;
  assert.equal(verifyStandardWebhook(body, { id, timestamp: String(old), signature: `v1,${standardV1(secret, id, old)}` }, secret), false);
  assert.equal(verifyStandardWebhook(body, { id, timestamp: String(now), signature: undefined }, secret), false);
  assert.equal(
    verifyWebhook(body, { 'webhook-id': id, 'webhook-timestamp': 'soon', 'webhook-signature': both }, secret).reason,
    'malformed_signature',
  );
  assert.equal(
    verifyWebhook(body, { 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': 'v2,abc' }, secret).reason,
    'malformed_signature',
  );
});

test('verifyWebhook reads Fetch Headers, Node headers or any-case objects, prefers the Merx headers, and says why it fails', () => {
  const id = crypto.randomUUID();
  const merx = `t=${now},v1=${merxV1(secret, now)}`;
  const standard = { 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': `v1,${standardV1(secret, id, now)}` };
  assert.deepEqual(verifyWebhook(body, new Headers({ 'x-merx-signature': merx, ...standard }), secret), {
    valid: true,
    scheme: 'merx',
    reason: 'ok',
  });
  assert.deepEqual(
    verifyWebhook(body, { 'WEBHOOK-ID': id, 'Webhook-Timestamp': String(now), 'webhook-signature': [standard['webhook-signature']] }, secret),
    {
      valid: true,
      scheme: 'standard',
      reason: 'ok',
    },
  );
  assert.deepEqual(verifyWebhook(body, { 'content-type': 'application/json' }, secret), { valid: false, scheme: null, reason: 'missing_headers' });
});

test('constructEvent returns the parsed envelope, or throws WebhookVerificationError with the reason', () => {
  const headers = { 'x-merx-signature': `t=${now},v1=${merxV1(secret, now)}` };
  const event = constructEvent(Buffer.from(body), headers, secret);
  assert.equal(event.event, 'test');
  assert.equal(event.id, JSON.parse(body).id);
  assert.throws(
    () => constructEvent(body, headers, otherSecret),
    (err: unknown) => err instanceof WebhookVerificationError && err.reason === 'signature_mismatch',
  );
});
