// SPEC Events, delivery headers and receiver rules: X-Merx-Signature is
// t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>"> keyed with the
// subscription secret as UTF-8 text (the Stripe scheme).
import crypto from 'node:crypto';

export function signPayload(rawBody: string, secret: string, timestampSec: number): string {
  const v1 = crypto.createHmac('sha256', secret).update(`${timestampSec}.${rawBody}`).digest('hex');
  return `t=${timestampSec},v1=${v1}`;
}

/**
 * For receivers: verifies a delivery on the raw body bytes, in constant time,
 * refusing timestamps more than `toleranceSec` away from now.
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
  const body = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
  const expected = Buffer.from(crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
  return signatures.some((sig) => {
    const given = Buffer.from(sig);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}
