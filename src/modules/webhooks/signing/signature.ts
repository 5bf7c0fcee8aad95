// How a delivery is signed. SPEC Events: X-Merx-Signature is
// t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>"> keyed with the
// subscription secret as UTF-8 text (the Stripe scheme). EXTENSIONS 4: beside
// it, the Standard Webhooks headers (webhook-id, webhook-timestamp,
// webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<t>.<raw body>">), and one
// signature per live secret while a rotated-out secret has not expired.
import crypto from 'node:crypto';

export const STANDARD_SECRET_PREFIX = 'whsec_';

/** The hex `v1` of X-Merx-Signature. */
export function merxSignatureOf(secret: string, timestampSec: number, rawBody: string | Buffer): string {
  return crypto.createHmac('sha256', secret).update(`${timestampSec}.`).update(rawBody).digest('hex');
}

/** The base64 part of one `v1,<signature>` entry of webhook-signature. */
export function standardSignatureOf(secret: string, messageId: string, timestampSec: number, rawBody: string | Buffer): string {
  return crypto.createHmac('sha256', secret).update(`${messageId}.${timestampSec}.`).update(rawBody).digest('base64');
}

/** The same secret written as a Standard Webhooks secret: whsec_ + base64 of its UTF-8 bytes. */
export function standardSecretOf(secret: string): string {
  return STANDARD_SECRET_PREFIX + Buffer.from(secret, 'utf8').toString('base64');
}

/** The secrets that sign now: the current one, then the previous one until it expires. */
export function liveSecrets(current: string, previous: string | null, previousExpiresAt: string | Date | null, now = new Date()): string[] {
  return previous && previousExpiresAt && new Date(previousExpiresAt).getTime() > now.getTime() ? [current, previous] : [current];
}

/**
 * A subscription's secrets as stored (sealed, issue 27), opened for signing.
 * Opening one (AES-GCM) took ~50 µs of the request loop per delivery in
 * bench:webhooks, the engine's largest cost there; a sealed text has one
 * plaintext for good (its IV is its own, a new secret is a new text), so each
 * is opened once and kept, up to MAX_OPENED texts.
 */
export class OpenedSecrets {
  private static readonly MAX_OPENED = 10_000;
  private readonly opened = new Map<string, string>();
  private readonly open: (sealed: string) => string;

  constructor(open: (sealed: string) => string) {
    this.open = open;
  }

  /** liveSecrets of the stored texts; an expired previous secret is not even opened. */
  live(current: string, previous: string | null, previousExpiresAt: string | Date | null, now = new Date()): string[] {
    const live = liveSecrets(current, previous, previousExpiresAt, now);
    return live.length === 1 ? [this.plain(current)] : [this.plain(current), this.plain(previous!)];
  }

  private plain(sealed: string): string {
    let plain = this.opened.get(sealed);
    if (plain === undefined) {
      if (this.opened.size >= OpenedSecrets.MAX_OPENED) this.opened.clear();
      plain = this.open(sealed);
      this.opened.set(sealed, plain);
    }
    return plain;
  }
}

export interface Signing {
  rawBody: string;
  /** The envelope id: webhook-id, the same on every retry. */
  eventId: string;
  timestampSec: number;
  /** Newest first (liveSecrets). */
  secrets: readonly string[];
}

/** Every signature header of one delivery attempt. */
export function signatureHeaders({ rawBody, eventId, timestampSec, secrets }: Signing): Record<string, string> {
  const merx = secrets.map((secret) => `v1=${merxSignatureOf(secret, timestampSec, rawBody)}`);
  const standard = secrets.map((secret) => `v1,${standardSignatureOf(secret, eventId, timestampSec, rawBody)}`);
  return {
    'X-Merx-Timestamp': String(timestampSec),
    'X-Merx-Signature': `t=${timestampSec},${merx.join(',')}`,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': standard.join(' '),
  };
}

/**
 * X-Merx-Delivery of one attempt: a name-based UUID (RFC 9562 version 5) of
 * the delivery id and the attempt number. It differs on every attempt, as
 * SPEC asks, and the signature self-test can still tell which delivery it was.
 */
export function deliveryAttemptId(deliveryId: string, attempt: number): string {
  const namespace = Buffer.from(deliveryId.replace(/-/g, ''), 'hex');
  const bytes = crypto.createHash('sha1').update(namespace).update(String(attempt)).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * For receivers: verifies a delivery on the raw body bytes, in constant time,
 * refusing timestamps more than `toleranceSec` away from now. Any `v1` may
 * match (two are sent while a rotated-out secret is still live).
 */
export function verifyMerxSignature(
  rawBody: string | Buffer,
  header: string | undefined | null,
  secret: string,
  toleranceSec = 300,
  nowSec = Math.floor(Date.now() / 1000),
): boolean {
  if (!header) return false;
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const signatures = parts.filter(([k]) => k === 'v1').map(([, v]) => v ?? '');
  if (!Number.isInteger(t) || signatures.length === 0 || Math.abs(nowSec - t) > toleranceSec) return false;
  const expected = Buffer.from(merxSignatureOf(secret, t, rawBody));
  return signatures.some((sig) => {
    const given = Buffer.from(sig);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}
