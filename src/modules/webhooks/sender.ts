// One delivery attempt over HTTPS: connects to the address the URL policy
// approved (no DNS rebinding window), never follows redirects, gives up after
// 10 s, and keeps the first 1000 characters of the answer (SPEC Receiver rules).
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import tls from 'node:tls';
import crypto from 'node:crypto';
import type { LookupFunction } from 'node:net';
import type { CheckedTarget } from './url-policy.ts';
import { signPayload } from './signature.ts';

export const ATTEMPT_TIMEOUT_MS = 10_000;
export const STORED_BODY_CHARS = 1000;
const READ_LIMIT_BYTES = 64 * 1024;

export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
}

export interface OutgoingDelivery {
  rawBody: string;
  secret: string;
  event: string;
  eventId: string;
}

/** NODE_EXTRA_CA_CERTS is read by Node only at start; reading it here lets a running service trust a CA set later. */
function trustedCas(): string[] | undefined {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (!file) return undefined;
  try {
    return [...tls.rootCertificates, fs.readFileSync(file, 'utf8')];
  } catch {
    return undefined;
  }
}

function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

/** Where the service itself listens: its debug sink is reached over loopback. */
export interface SelfOrigin {
  host: string;
  port: number;
}

export function sendDelivery(target: CheckedTarget, delivery: OutgoingDelivery, self: SelfOrigin | null): Promise<AttemptOutcome> {
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(delivery.rawBody)),
    'User-Agent': 'merx-webhooks/1',
    'X-Merx-Event': delivery.event,
    'X-Merx-Event-Id': delivery.eventId,
    'X-Merx-Delivery': crypto.randomUUID(),
    'X-Merx-Timestamp': String(timestamp),
    'X-Merx-Signature': signPayload(delivery.rawBody, delivery.secret, timestamp),
  };
  const path = target.url.pathname + target.url.search;

  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const onResponse = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < READ_LIMIT_BYTES) chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8').slice(0, STORED_BODY_CHARS);
        const code = res.statusCode ?? 0;
        finish({ statusCode: code, error: code >= 200 && code < 300 ? null : `HTTP ${code}`, responseBody: body });
      });
      res.on('error', (err) => finish({ statusCode: res.statusCode ?? null, error: `response: ${err.message}`, responseBody: null }));
    };
    let request: http.ClientRequest;
    if (target.kind === 'sink') {
      if (!self) return finish({ statusCode: null, error: 'the service is not listening yet', responseBody: null });
      request = http.request({ host: self.host, port: self.port, path, method: 'POST', headers, agent: false }, onResponse);
    } else {
      request = https.request(
        {
          host: target.url.hostname.replace(/^\[|\]$/g, ''),
          port: target.url.port || 443,
          path,
          method: 'POST',
          headers,
          agent: false,
          lookup: pinnedLookup(target.address, target.family),
          ca: trustedCas(),
        },
        onResponse,
      );
    }
    const timer = setTimeout(() => {
      request.destroy();
      finish({ statusCode: null, error: `timeout after ${ATTEMPT_TIMEOUT_MS / 1000} s`, responseBody: null });
    }, ATTEMPT_TIMEOUT_MS);
    request.on('error', (err) => finish({ statusCode: null, error: `connection: ${err.message}`, responseBody: null }));
    request.end(delivery.rawBody);
  });
}
