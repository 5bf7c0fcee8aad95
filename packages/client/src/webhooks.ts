// Verifying Merx webhook deliveries on the receiver's side. Every delivery is
// signed twice, over the raw body bytes, with the subscription secret's UTF-8
// bytes as the HMAC-SHA256 key (docs/contract.md, "Webhook signatures"):
//   Merx:              X-Merx-Signature: t=<unix s>,v1=<hex of "<t>.<body>">   (Stripe's scheme)
//   Standard Webhooks: webhook-id, webhook-timestamp,
//                      webhook-signature: v1,<base64 of "<id>.<timestamp>.<body>">
// While a secret is being rotated both secrets sign: several v1= values, or
// several space-separated webhook-signature entries; one match is enough.
import crypto from 'node:crypto';
import type { components } from './schema.js';

/** Replay window of the contract: a timestamp more than this far from now is refused. */
export const DEFAULT_TOLERANCE_SEC = 300;

export type RawBody = string | Uint8Array;

/** Fetch `Headers`, Node's `req.headers`, or a plain object (any letter case). */
export type HeadersLike = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Seconds of clock difference accepted (default 300). */
  toleranceSec?: number;
  /** "Now" in Unix seconds (default: the clock). */
  nowSec?: number;
}

export type VerifyReason = 'ok' | 'missing_headers' | 'malformed_signature' | 'timestamp_out_of_tolerance' | 'signature_mismatch';

export interface VerifyResult {
  valid: boolean;
  /** Which headers were checked: merx when X-Merx-Signature is present, standard when only webhook-* are. */
  scheme: 'merx' | 'standard' | null;
  reason: VerifyReason;
}

const bytesOf = (body: RawBody): Uint8Array => (typeof body === 'string' ? Buffer.from(body, 'utf8') : body);

/** The HMAC key: the 64-hex secret as UTF-8 text, or a Standard Webhooks `whsec_<base64>` secret decoded. */
function keyOf(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
}

function hmac(secret: string, prefix: string, body: RawBody): Buffer {
  return crypto.createHmac('sha256', keyOf(secret)).update(prefix).update(bytesOf(body)).digest();
}

function sameBytes(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

function withinTolerance(timestampSec: number, options: VerifyOptions): boolean {
  const now = options.nowSec ?? Math.floor(Date.now() / 1000);
  return Math.abs(now - timestampSec) <= (options.toleranceSec ?? DEFAULT_TOLERANCE_SEC);
}

function headerOf(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value.join(', ') : value;
  }
  return undefined;
}

const UNIX_SECONDS = /^\d{1,12}$/;

function checkMerx(body: RawBody, header: string, secret: string, options: VerifyOptions): VerifyReason {
  const parts = header.split(',').map((part) => part.trim().split('='));
  const t = parts.find(([key]) => key === 't')?.[1];
  const signatures = parts.filter(([key, value]) => key === 'v1' && value).map(([, value]) => value);
  if (!t || !UNIX_SECONDS.test(t) || signatures.length === 0 || signatures.some((s) => !/^[0-9a-f]{64}$/i.test(s))) return 'malformed_signature';
  if (!withinTolerance(Number(t), options)) return 'timestamp_out_of_tolerance';
  const expected = hmac(secret, `${t}.`, body);
  return signatures.some((s) => sameBytes(Buffer.from(s, 'hex'), expected)) ? 'ok' : 'signature_mismatch';
}

function checkStandard(body: RawBody, id: string, timestamp: string, header: string, secret: string, options: VerifyOptions): VerifyReason {
  const entries = header
    .split(' ')
    .filter(Boolean)
    .map((entry) => entry.split(','));
  const signatures = entries.filter(([version, value]) => version === 'v1' && value).map(([, value]) => value);
  if (!UNIX_SECONDS.test(timestamp) || signatures.length === 0) return 'malformed_signature';
  if (!withinTolerance(Number(timestamp), options)) return 'timestamp_out_of_tolerance';
  const expected = hmac(secret, `${id}.${timestamp}.`, body);
  return signatures.some((s) => sameBytes(Buffer.from(s, 'base64'), expected)) ? 'ok' : 'signature_mismatch';
}

/**
 * Verifies the `X-Merx-Signature` header of a delivery on its raw body, in
 * constant time, refusing a `t` more than `toleranceSec` from now.
 */
export function verifyMerxSignature(
  rawBody: RawBody,
  header: string | null | undefined,
  secret: string,
  toleranceSec = DEFAULT_TOLERANCE_SEC,
  nowSec?: number,
): boolean {
  return !!header && checkMerx(rawBody, header, secret, { toleranceSec, nowSec }) === 'ok';
}

/**
 * Verifies the Standard Webhooks headers of a delivery. `secret` is the
 * subscription secret as Merx showed it, or its `whsec_` form.
 */
export function verifyStandardWebhook(
  rawBody: RawBody,
  headers: { id: string | null | undefined; timestamp: string | null | undefined; signature: string | null | undefined },
  secret: string,
  toleranceSec = DEFAULT_TOLERANCE_SEC,
  nowSec?: number,
): boolean {
  const { id, timestamp, signature } = headers;
  return !!id && !!timestamp && !!signature && checkStandard(rawBody, id, timestamp, signature, secret, { toleranceSec, nowSec }) === 'ok';
}

/** Verifies whichever scheme the headers carry (Merx first) and says why not when it fails. */
export function verifyWebhook(rawBody: RawBody, headers: HeadersLike, secret: string, options: VerifyOptions = {}): VerifyResult {
  const merx = headerOf(headers, 'x-merx-signature');
  if (merx) {
    const reason = checkMerx(rawBody, merx, secret, options);
    return { valid: reason === 'ok', scheme: 'merx', reason };
  }
  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const signature = headerOf(headers, 'webhook-signature');
  if (id && timestamp && signature) {
    const reason = checkStandard(rawBody, id, timestamp, signature, secret, options);
    return { valid: reason === 'ok', scheme: 'standard', reason };
  }
  return { valid: false, scheme: null, reason: 'missing_headers' };
}

type Schemas = components['schemas'];
type Source = 'merchant' | 'api' | 'courier' | 'payment' | 'automation';

/** The `data` of each event (docs/contract.md, "Events"). */
export interface WebhookEventData {
  'order.created': { order: Schemas['Order'] };
  'order.updated': { order: Schemas['Order']; changed: string[]; source: Source };
  'order.status_changed': { order: Schemas['Order']; previous_status: string; status: string; source: Source };
  'order.paid': { order: Schemas['Order']; previous_payment_status: string | null; source: Source };
  'shipment.created': { shipment: Schemas['Shipment']; order_id: string; source: Source };
  'shipment.status_changed': {
    shipment: Schemas['Shipment'];
    previous_status: string;
    status: string;
    event: { at: string; code: string | number | null; label: string | null } | null;
    source: 'courier';
  };
  'shipment.cancelled': { shipment: Schemas['Shipment']; order_id: string; courier_cancelled: boolean; courier_confirmed: boolean; source: Source };
  'inventory.low_stock': { product: { id: string; name: string; sku: string | null }; stock_quantity: number; threshold: number };
  test: { message: string; webhook_id: string };
}

export type WebhookEventName = keyof WebhookEventData;

/** The JSON body of every delivery; `id` is the event id to deduplicate by. */
export type WebhookEvent = {
  [E in WebhookEventName]: { id: string; event: E; created_at: string; account_id: string; api_version: string; data: WebhookEventData[E] };
}[WebhookEventName];

export class WebhookVerificationError extends Error {
  readonly reason: Exclude<VerifyReason, 'ok'>;
  constructor(reason: Exclude<VerifyReason, 'ok'>) {
    super(`webhook signature not verified: ${reason}`);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

/** Verifies, then parses the envelope; throws WebhookVerificationError (with its reason) otherwise. */
export function constructEvent(rawBody: RawBody, headers: HeadersLike, secret: string, options: VerifyOptions = {}): WebhookEvent {
  const result = verifyWebhook(rawBody, headers, secret, options);
  if (result.reason !== 'ok') throw new WebhookVerificationError(result.reason);
  return JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8')) as WebhookEvent;
}

/** The subscription secret in the `whsec_` form that Standard Webhooks libraries take. */
export function standardWebhookSecret(secret: string): string {
  return secret.startsWith('whsec_') ? secret : `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
}
