// EXTENSIONS 5, the signature self-test: given what a receiver saw (headers
// and raw body), say why its verification fails, without the receiver
// sending its secret. The diagnoses are tried in the contract's order; the
// first that applies is the answer.
import crypto from 'node:crypto';
import type { Sql } from '../../../platform/db/db.ts';
import { canonicalJson } from '../../../platform/contract/canonical-json.ts';
import { envelopeJson, envelopeText } from '../../../platform/db/outbox.ts';
import { findSubscription, secretsOf } from '../subscriptions/queries.ts';
import { deliveryAttemptId, merxSignatureOf, standardSignatureOf } from './signature.ts';

export const DIAGNOSES = [
  'missing_headers',
  'malformed_signature',
  'timestamp_out_of_tolerance',
  'unknown_delivery',
  'body_modified',
  'signed_with_expired_secret',
  'signature_mismatch',
  'ok',
] as const;
export type Diagnosis = (typeof DIAGNOSES)[number];
export type Scheme = 'merx' | 'standard';

/** SPEC Receiver rules 1: the replay window. */
const TOLERANCE_SEC = 300;
/** How far back an X-Merx-Delivery (an attempt id) is looked for when nothing else names the delivery. */
const ATTEMPT_SEARCH_DEPTH = 2000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Verdict {
  valid: boolean;
  scheme: Scheme | null;
  diagnosis: Diagnosis;
  message: string;
}

interface Signed {
  scheme: Scheme;
  timestampSec: number;
  /** The message id the standard scheme signs (webhook-id). */
  messageId: string;
  /** Hex (merx) or base64 (standard) signatures, as given. */
  signatures: string[];
}

function parseMerx(h: Map<string, string>): Signed | null {
  let t: number | null = null;
  const signatures: string[] = [];
  for (const part of h.get('x-merx-signature')!.split(',')) {
    const [key, value, ...rest] = part.trim().split('=');
    if (rest.length || value === undefined) return null;
    if (key === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase());
    else if (key === 't' || key === 'v1') return null;
  }
  return t === null || signatures.length === 0 ? null : { scheme: 'merx', timestampSec: t, messageId: '', signatures };
}

function parseStandard(h: Map<string, string>): Signed | null {
  const timestamp = h.get('webhook-timestamp')!.trim();
  if (!/^\d{1,12}$/.test(timestamp)) return null;
  const signatures = h
    .get('webhook-signature')!
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice(3))
    .filter((b64) => /^[A-Za-z0-9+/]{43}=$/.test(b64));
  return signatures.length ? { scheme: 'standard', timestampSec: Number(timestamp), messageId: h.get('webhook-id')!, signatures } : null;
}

/** The delivery the headers name: by X-Merx-Delivery (a delivery or attempt id), X-Merx-Event-Id or webhook-id. */
async function namedDelivery(sql: Sql, accountId: string, webhookId: string, h: Map<string, string>): Promise<{ body: string } | null> {
  const given = ['x-merx-delivery', 'x-merx-event-id', 'webhook-id'].map((name) => h.get(name)?.trim() ?? '').filter((v) => UUID.test(v));
  if (given.length === 0) return null;
  const envelopeOf = async (condition: string, ids: string[]) => {
    const { rows } = await sql.query<{ envelope: object }>(
      `SELECT ${envelopeJson('e')} AS envelope FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE d.account_id = $1 AND d.webhook_id = $2 AND ${condition} LIMIT 1`,
      [accountId, webhookId, ids],
    );
    return rows[0] ? { body: envelopeText(rows[0].envelope) } : null;
  };
  const direct = await envelopeOf('(d.id = ANY($3::uuid[]) OR d.event_id = ANY($3::uuid[]))', given);
  const attemptId = h.get('x-merx-delivery')?.trim().toLowerCase();
  if (direct || !attemptId || !UUID.test(attemptId)) return direct;
  const { rows } = await sql.query<{ id: string; attempt: number }>(
    `SELECT id, attempt FROM webhook_deliveries WHERE account_id = $1 AND webhook_id = $2 ORDER BY created_at DESC LIMIT ${ATTEMPT_SEARCH_DEPTH}`,
    [accountId, webhookId],
  );
  const match = rows.find((d) => Array.from({ length: d.attempt }, (_, i) => deliveryAttemptId(d.id, i + 1)).includes(attemptId));
  return match ? envelopeOf('d.id = ANY($3::uuid[])', [match.id]) : null;
}

function sameJson(a: Buffer, b: string): boolean {
  try {
    return canonicalJson(JSON.parse(a.toString('utf8'))) === canonicalJson(JSON.parse(b));
  } catch {
    return false;
  }
}

function signedBy(secret: string, signed: Signed, body: Buffer): boolean {
  const expected =
    signed.scheme === 'merx'
      ? merxSignatureOf(secret, signed.timestampSec, body)
      : standardSignatureOf(secret, signed.messageId, signed.timestampSec, body);
  return signed.signatures.some((given) => given.length === expected.length && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected)));
}

export async function checkSignature(
  sql: Sql,
  accountId: string,
  webhookId: string,
  received: { headers: Record<string, string>; body: Buffer },
  now = new Date(),
): Promise<Verdict> {
  await findSubscription(sql, accountId, webhookId);
  const h = new Map(Object.entries(received.headers).map(([name, value]) => [name.toLowerCase(), String(value)]));
  const merxComplete = h.has('x-merx-signature') && h.has('x-merx-timestamp');
  const standardComplete = h.has('webhook-id') && h.has('webhook-timestamp') && h.has('webhook-signature');
  const names = [...h.keys()];
  const scheme: Scheme | null = merxComplete
    ? 'merx'
    : standardComplete
      ? 'standard'
      : // X-Merx-Resource-Version (EXTENSIONS 6) orders updates; it says nothing of how a delivery is signed.
        names.some((n) => n.startsWith('x-merx-') && n !== 'x-merx-resource-version')
        ? 'merx'
        : names.some((n) => n.startsWith('webhook-'))
          ? 'standard'
          : null;
  const verdict = (diagnosis: Diagnosis, message: string): Verdict => ({ valid: diagnosis === 'ok', scheme, diagnosis, message });

  if (!merxComplete && !standardComplete) {
    return verdict(
      'missing_headers',
      'No complete set of signature headers was given: pass X-Merx-Signature and X-Merx-Timestamp, or webhook-id, webhook-timestamp and webhook-signature, exactly as received.',
    );
  }
  const signed = scheme === 'merx' ? parseMerx(h) : parseStandard(h);
  if (!signed) {
    return verdict(
      'malformed_signature',
      scheme === 'merx'
        ? 'X-Merx-Signature does not parse: it should read t=<Unix seconds>,v1=<64 hex characters>, with one more v1 while a rotated-out secret is live.'
        : 'The webhook-signature or webhook-timestamp header does not parse: they should be space-separated v1,<base64 signature> entries and Unix seconds.',
    );
  }
  const skew = Math.floor(now.getTime() / 1000) - signed.timestampSec;
  if (Math.abs(skew) > TOLERANCE_SEC) {
    return verdict(
      'timestamp_out_of_tolerance',
      `The signed timestamp is ${Math.abs(skew)} seconds ${skew > 0 ? 'old' : 'in the future'}, beyond the ${TOLERANCE_SEC}-second tolerance: verify a delivery when it arrives (every retry is signed afresh) and check your clock.`,
    );
  }
  const delivery = await namedDelivery(sql, accountId, webhookId, h);
  if (!delivery) {
    return verdict(
      'unknown_delivery',
      'Neither X-Merx-Delivery nor webhook-id names a delivery or event sent to this subscription: check that these headers came from a delivery of this subscription.',
    );
  }
  if (!received.body.equals(Buffer.from(delivery.body, 'utf8'))) {
    return verdict(
      'body_modified',
      sameJson(received.body, delivery.body)
        ? 'The body is not the bytes Merx sent, though it parses to the same JSON: something parsed and re-serialised it before verification; verify the raw request body.'
        : 'The body is not what Merx sent for this delivery, and it does not parse to the same JSON either: verify the exact bytes you received.',
    );
  }
  const secrets = await secretsOf(sql, accountId, webhookId);
  if (secrets.some((s) => s.live && signedBy(s.secret, signed, received.body))) {
    return verdict('ok', 'The signature is valid: it was made with a live secret of this subscription over exactly the bytes Merx sent.');
  }
  if (secrets.some((s) => !s.live && signedBy(s.secret, signed, received.body))) {
    return verdict(
      'signed_with_expired_secret',
      'The signature was made with a secret of this subscription that has expired since a rotation: sign and verify with the current secret.',
    );
  }
  return verdict(
    'signature_mismatch',
    scheme === 'merx'
      ? 'The signature matches no secret of this subscription: use its secret as UTF-8 text and HMAC-SHA256 "<t>.<raw body>".'
      : 'The signature matches no secret of this subscription: give Standard Webhooks libraries the secret as whsec_ followed by the base64 of its UTF-8 bytes.',
  );
}
