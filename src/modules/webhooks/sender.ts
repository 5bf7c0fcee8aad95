// One delivery attempt over HTTPS: connects to the address the URL policy
// approved (no DNS rebinding window), never follows redirects, gives up after
// 10 s, and keeps the first 1000 characters of the answer (SPEC Receiver rules).
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import tls from 'node:tls';
import type { LookupFunction } from 'node:net';
import type { CheckedTarget } from './url-policy.ts';
import { signatureHeaders } from './signature.ts';

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
  /** The live secrets, newest first: each signs. */
  secrets: readonly string[];
  event: string;
  eventId: string;
  /** X-Merx-Delivery: the id of this attempt. */
  attemptId: string;
}

/**
 * NODE_EXTRA_CA_CERTS is read by Node only at start; reading it here lets a
 * running service trust a CA set later. Building a TLS context costs ~10 ms of
 * CPU, so one is kept until the file changes.
 */
let cachedContext: { stamp: string; context: tls.SecureContext } | null = null;
function trustedContext(): tls.SecureContext | undefined {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (!file) return undefined;
  try {
    const stat = fs.statSync(file);
    const stamp = `${file}:${stat.mtimeMs}:${stat.size}`;
    if (cachedContext?.stamp !== stamp) {
      cachedContext = { stamp, context: tls.createSecureContext({ ca: [...tls.rootCertificates, fs.readFileSync(file, 'utf8')] }) };
    }
    return cachedContext.context;
  } catch {
    return undefined;
  }
}

/**
 * Keep-alive connections per approved (address, host, port): repeated
 * deliveries skip the TCP and TLS handshakes and still only ever connect to
 * the address the URL policy approved.
 */
const agents = new Map<string, https.Agent>();
function agentFor(address: string, family: 4 | 6, host: string, port: string | number): https.Agent {
  const key = `${address}|${host}|${port}`;
  let agent = agents.get(key);
  if (!agent) {
    agent = new https.Agent({ keepAlive: true, maxSockets: 8, maxFreeSockets: 4, timeout: 30_000, lookup: pinnedLookup(address, family) } as https.AgentOptions);
    agents.set(key, agent);
  }
  return agent;
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
    'X-Merx-Delivery': delivery.attemptId,
    ...signatureHeaders({ rawBody: delivery.rawBody, eventId: delivery.eventId, timestampSec: timestamp, secrets: delivery.secrets }),
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
      const host = target.url.hostname.replace(/^\[|\]$/g, '');
      const port = Number(target.url.port || 443);
      request = https.request(
        {
          host,
          port,
          path,
          method: 'POST',
          headers,
          agent: agentFor(target.address, target.family, host, port),
          lookup: pinnedLookup(target.address, target.family),
          secureContext: trustedContext(),
        } as https.RequestOptions,
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
