// A real HTTPS webhook receiver on loopback for the black-box webhook tests.
// A throwaway CA and a server certificate for 127.0.0.1 are made with the
// openssl CLI in a temp dir; the service trusts the CA through
// NODE_EXTRA_CA_CERTS (GAPS Webhooks). Every request is recorded (headers and
// raw body) and answered per a script: status codes per call, a 3xx redirect
// (which must not be followed), a delay or a hang (to force the 10 s timeout).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import https from 'node:https';
import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export interface ReceivedRequest {
  method: string;
  /** Path and query as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** The raw body as UTF-8 text (what a receiver verifies). */
  body: string;
  /** The reply this request got (`hang` when it never got one). */
  reply: Reply;
  /** When its headers arrived, by the receiver's own clock (ms since the epoch, sub-millisecond). */
  receivedAt: number;
}

export type Reply =
  | { status: number; body?: string; headers?: Record<string, string>; delayMs?: number }
  /** Never answers; the connection stays open until the client gives up (or the receiver closes). */
  | { hang: true };

export interface ReceiverEndpoint {
  path: string;
  url: string;
  /** Requests to this endpoint, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** Replies used one per call, in order; when they run out, `fallback` answers. */
  script(replies: Reply[], fallback?: Reply): void;
  /** Resolves with the requests once at least `count` have arrived (fully read). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
}

export interface HttpsReceiver {
  /** https://127.0.0.1:<port> */
  origin: string;
  port: number;
  /** The CA certificate (PEM file) to put in NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** A fresh endpoint at a unique path, answering 200 until scripted otherwise. */
  endpoint(name?: string): ReceiverEndpoint;
  /** Every request, any path. */
  readonly all: ReceivedRequest[];
  close(): Promise<void>;
}

export interface TestCertificates {
  dir: string;
  caFile: string;
  keyFile: string;
  certFile: string;
}

let certificates: TestCertificates | null = null;

/** A throwaway CA and a leaf certificate for 127.0.0.1 / localhost, made once per test process. */
export function testCertificates(): TestCertificates {
  if (certificates) return certificates;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-test-ca-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('/usr/bin/openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  fs.writeFileSync(
    file('ca.ext'),
    ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign', 'subjectKeyIdentifier=hash'].join('\n'),
  );
  fs.writeFileSync(
    file('leaf.ext'),
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      'subjectKeyIdentifier=hash',
      'authorityKeyIdentifier=keyid',
    ].join('\n'),
  );
  openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file('ca.key'));
  openssl('req', '-new', '-key', file('ca.key'), '-subj', '/CN=Merx Test CA', '-out', file('ca.csr'));
  openssl(
    'x509',
    '-req',
    '-in',
    file('ca.csr'),
    '-signkey',
    file('ca.key'),
    '-days',
    '2',
    '-sha256',
    '-extfile',
    file('ca.ext'),
    '-out',
    file('ca.pem'),
  );
  openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file('leaf.key'));
  openssl('req', '-new', '-key', file('leaf.key'), '-subj', '/CN=127.0.0.1', '-out', file('leaf.csr'));
  openssl(
    'x509',
    '-req',
    '-in',
    file('leaf.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-set_serial',
    `0x${crypto.randomBytes(8).toString('hex')}`,
    '-days',
    '2',
    '-sha256',
    '-extfile',
    file('leaf.ext'),
    '-out',
    file('leaf.pem'),
  );
  certificates = { dir, caFile: file('ca.pem'), keyFile: file('leaf.key'), certFile: file('leaf.pem') };
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return certificates;
}

export async function startHttpsReceiver(): Promise<HttpsReceiver> {
  const certs = testCertificates();
  const all: ReceivedRequest[] = [];
  interface State {
    endpoint: ReceiverEndpoint;
    replies: Reply[];
    fallback: Reply;
    requests: ReceivedRequest[];
    waiters: Array<() => void>;
  }
  const endpoints = new Map<string, State>();

  const server = https.createServer({ key: fs.readFileSync(certs.keyFile), cert: fs.readFileSync(certs.certFile) }, (req, res) => {
    const receivedAt = performance.timeOrigin + performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const pathname = (req.url ?? '/').split('?')[0];
      const state = endpoints.get(pathname);
      const reply: Reply = state ? (state.replies.shift() ?? state.fallback) : { status: 404, body: 'no such endpoint' };
      const rawBody = Buffer.concat(chunks);
      const record: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '/',
        headers: req.headers,
        rawBody,
        body: rawBody.toString('utf8'),
        reply,
        receivedAt,
      };
      all.push(record);
      if (state) {
        state.requests.push(record);
        for (const wake of state.waiters.splice(0)) wake();
      }
      if ('hang' in reply) return; // never answer
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? `status ${reply.status}`);
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
      else send();
    });
  });
  // A hung request must not keep the process alive after the tests.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const origin = `https://127.0.0.1:${port}`;

  return {
    origin,
    port,
    caFile: certs.caFile,
    all,
    endpoint(name = 'hook') {
      const endpointPath = `/${name}/${crypto.randomUUID()}`;
      const state: State = { replies: [], fallback: { status: 200, body: 'ok' }, requests: [], waiters: [], endpoint: undefined as never };
      state.endpoint = {
        path: endpointPath,
        url: origin + endpointPath,
        requests: state.requests,
        script(replies, fallback) {
          state.replies = [...replies];
          if (fallback) state.fallback = fallback;
        },
        async waitFor(count, timeoutMs = 15_000) {
          const deadline = Date.now() + timeoutMs;
          while (state.requests.length < count) {
            const left = deadline - Date.now();
            if (left <= 0)
              throw new Error(`receiver ${endpointPath}: expected ${count} request(s), got ${state.requests.length} within ${timeoutMs} ms`);
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, left);
              state.waiters.push(() => {
                clearTimeout(timer);
                resolve();
              });
            });
          }
          return state.requests;
        },
      };
      endpoints.set(endpointPath, state);
      return state.endpoint;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The most requests that began within any one second of the receiver's clock
 * (a sliding window [t, t + 1 s), not calendar seconds), and when that was.
 */
export function busiestSecond(requests: Array<{ receivedAt: number }>): { count: number; from: number } {
  const times = requests.map((r) => r.receivedAt).sort((a, b) => a - b);
  let best = { count: 0, from: 0 };
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[j] <= times[i] - 1000) j++;
    if (i - j + 1 > best.count) best = { count: i - j + 1, from: times[j] };
  }
  return best;
}

/**
 * Requests in the order the rate let them go: cut into bursts where the
 * receiver heard nothing for `quietMs` (a rated drain's starts go out together,
 * a window apart), each burst sorted by `rankOf`. A start given back for being
 * too late to go on its grant goes first in a later burst, so held events sent
 * oldest first come out in their order here, though a burst may hold fewer
 * than the rate and a later event may arrive a moment before an earlier one
 * of its own burst.
 */
export function inBurstOrder<T extends { receivedAt: number }>(requests: T[], rankOf: (request: T) => number, quietMs = 600): T[] {
  const arrived = [...requests].sort((a, b) => a.receivedAt - b.receivedAt);
  const bursts: T[][] = [];
  arrived.forEach((request, i) => {
    if (!i || request.receivedAt - arrived[i - 1].receivedAt > quietMs) bursts.push([]);
    bursts.at(-1)!.push(request);
  });
  return bursts.flatMap((burst) => burst.sort((a, b) => rankOf(a) - rankOf(b)));
}
