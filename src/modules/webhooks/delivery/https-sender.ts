// One delivery attempt over HTTPS: connects to the address the URL policy
// approved (no DNS rebinding window), never follows redirects, gives up after
// 10 s, and keeps the first 1000 characters of the answer (SPEC Receiver rules).
// Connections are kept alive in an undici pool per approved (address, host,
// port): repeated deliveries skip the TCP and TLS handshakes.
import fs from 'node:fs';
import tls from 'node:tls';
import type { LookupFunction } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import type { CheckedTarget } from '../subscriptions/url-policy.ts';
import { signatureHeaders } from '../signing/signature.ts';

export const ATTEMPT_TIMEOUT_MS = 10_000;
export const STORED_BODY_CHARS = 1000;
const READ_LIMIT_BYTES = 64 * 1024;
/** An idle pool (no attempt to that origin for this long) is closed. */
const POOL_IDLE_MS = 5 * 60_000;

const MAX_RESPONSE_HEADERS = 20;
const MAX_HEADER_CHARS = 200;

/** The answer's headers as the attempt log stores them (EXTENSIONS 6): the first 20, each value at most 200 characters (several values joined by ", "). */
function boundedHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  let count = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (count++ >= MAX_RESPONSE_HEADERS) break;
    out[name.toLowerCase()] = (Array.isArray(value) ? value.join(', ') : String(value)).slice(0, MAX_HEADER_CHARS);
  }
  return out;
}

export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  /** For the attempt log (EXTENSIONS 6): the headers as sent, none when nothing was sent. */
  requestHeaders?: Record<string, string>;
  /** The answer's headers, bounded (boundedHeaders). */
  responseHeaders?: Record<string, string> | null;
  /** The system error code of a failed connection (ECONNREFUSED, ENOTFOUND, a TLS code), to say why in one sentence. */
  errorCode?: string;
  /** EXTENSIONS 9: its startBy had passed when the request was to be written; nothing was sent. */
  notStarted?: boolean;
}

export interface OutgoingDelivery {
  rawBody: string;
  /** The live secrets, newest first: each signs. */
  secrets: readonly string[];
  event: string;
  eventId: string;
  /** X-Merx-Delivery: the id of this attempt. */
  attemptId: string;
  /** X-Merx-Resource-Version (EXTENSIONS 6): the version of the order or shipment when the event committed. */
  resourceVersion?: number | null;
  /** EXTENSIONS 9: the request is written only until then (startClock()); later, nothing is sent (notStarted). */
  startBy?: number;
}

/** A clock that moves forward only and reads the same on every thread of the process (ms). */
export const startClock = () => performance.timeOrigin + performance.now();

class LateStart extends Error {}

/**
 * Checked where undici writes the request onto a connected socket, right
 * before it does (the connection's handshake is behind it, the request's
 * headers not yet sent): past `startBy`, the request fails unwritten. Thrown,
 * not aborted: undici then drops the request and keeps the connection for the
 * next one (an abort would close it, and the next turn would wait for a new
 * handshake again).
 */
const startingBy =
  (startBy: number): Dispatcher.DispatcherComposeInterceptor =>
  (dispatch) =>
  (opts, handler) =>
    dispatch(opts, {
      onRequestStart: (controller, context) => {
        if (startClock() > startBy) throw new LateStart('not started: its turn in the rate had passed');
        handler.onRequestStart?.(controller, context);
      },
      onRequestUpgrade: (...args) => handler.onRequestUpgrade?.(...args),
      onResponseStart: (...args) => handler.onResponseStart?.(...args),
      onResponseData: (...args) => handler.onResponseData?.(...args),
      onResponseEnd: (...args) => handler.onResponseEnd?.(...args),
      onResponseError: (...args) => handler.onResponseError?.(...args),
    });

/**
 * NODE_EXTRA_CA_CERTS is read by Node only at start; reading it here lets a
 * running service trust a CA set later. Building a TLS context costs ~10 ms of
 * CPU, so one is kept until the file changes (checked at most once a second).
 */
let cachedContext: { stamp: string; context: tls.SecureContext | undefined; checkedAt: number } | null = null;
export function trustedContext(): { stamp: string; context: tls.SecureContext | undefined } {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (!file) return { stamp: '', context: undefined };
  const now = Date.now();
  if (cachedContext && cachedContext.stamp.startsWith(`${file}:`) && now - cachedContext.checkedAt < 1000) return cachedContext;
  try {
    const stat = fs.statSync(file);
    const stamp = `${file}:${stat.mtimeMs}:${stat.size}`;
    if (cachedContext?.stamp !== stamp) {
      cachedContext = { stamp, checkedAt: now, context: tls.createSecureContext({ ca: [...tls.rootCertificates, fs.readFileSync(file, 'utf8')] }) };
    }
    cachedContext.checkedAt = now;
    return cachedContext;
  } catch {
    return { stamp: '', context: undefined };
  }
}

export function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
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

interface PoolEntry {
  pool: Pool;
  lastUsed: number;
}

/** The keep-alive pools of one delivery engine, one per approved origin. */
export class Senders {
  private pools = new Map<string, PoolEntry>();
  private sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => this.sweep(), POOL_IDLE_MS);
    this.sweeper.unref();
  }

  private poolFor(target: CheckedTarget, self: SelfOrigin | null): Pool | null {
    let origin: string;
    let key: string;
    let connect: Record<string, unknown>;
    if (target.kind === 'sink') {
      if (!self) return null;
      origin = `http://${self.host.includes(':') ? `[${self.host}]` : self.host}:${self.port}`;
      key = origin;
      connect = {};
    } else {
      const trust = trustedContext();
      origin = target.url.origin;
      key = `${target.address}|${origin}|${trust.stamp}`;
      // The socket goes to the approved address whatever DNS says now; TLS still checks the certificate for the URL's host.
      connect = { lookup: pinnedLookup(target.address, target.family), ...(trust.context ? { secureContext: trust.context } : {}) };
    }
    let entry = this.pools.get(key);
    if (!entry) {
      entry = {
        pool: new Pool(origin, {
          // No cap here: the lanes and the worker bound what is in flight, and a request must never queue behind a
          // slow subscriber's for a socket. HTTP/1.1 only: no protocol probe holding requests while a first connection negotiates.
          connections: null,
          pipelining: 1,
          allowH2: false,
          keepAliveTimeout: 30_000,
          connect: { ...connect, timeout: ATTEMPT_TIMEOUT_MS },
        }),
        lastUsed: 0,
      };
      this.pools.set(key, entry);
    }
    entry.lastUsed = Date.now();
    return entry.pool;
  }

  private sweep(): void {
    const cutoff = Date.now() - POOL_IDLE_MS;
    for (const [key, entry] of this.pools) {
      if (entry.lastUsed < cutoff) {
        this.pools.delete(key);
        void entry.pool.close().catch(() => {});
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.allSettled(pools.map((entry) => entry.pool.destroy()));
  }

  async send(target: CheckedTarget, delivery: OutgoingDelivery, self: SelfOrigin | null): Promise<AttemptOutcome> {
    const pool = this.poolFor(target, self);
    if (!pool) return { statusCode: null, error: 'the service is not listening yet', responseBody: null };
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'merx-webhooks/1',
      'x-merx-event': delivery.event,
      'x-merx-event-id': delivery.eventId,
      'x-merx-delivery': delivery.attemptId,
      ...(delivery.resourceVersion != null ? { 'x-merx-resource-version': String(delivery.resourceVersion) } : {}),
      ...lowerCased(signatureHeaders({ rawBody: delivery.rawBody, eventId: delivery.eventId, timestampSec: timestamp, secrets: delivery.secrets })),
    };
    const sent = { requestHeaders: headers };
    // EXTENSIONS 9: a metered attempt is checked against its turn where its request is about to be written (startingBy).
    const dispatcher = delivery.startBy === undefined ? pool : pool.compose(startingBy(delivery.startBy));
    const answer = await exchange(dispatcher, {
      path: target.url.pathname + target.url.search,
      method: 'POST',
      headers,
      body: delivery.rawBody,
      headersTimeout: ATTEMPT_TIMEOUT_MS,
      bodyTimeout: ATTEMPT_TIMEOUT_MS,
    });
    if (answer.timedOut) return { ...timedOut(), ...sent };
    if (answer.statusCode === null) {
      if (answer.error instanceof LateStart) return { statusCode: null, error: answer.error.message, responseBody: null, notStarted: true };
      const error = answer.error as Error & { code?: string; cause?: Error & { code?: string } };
      if (error.code === 'UND_ERR_HEADERS_TIMEOUT' || error.code === 'UND_ERR_BODY_TIMEOUT' || error.code === 'UND_ERR_CONNECT_TIMEOUT')
        return { ...timedOut(), ...sent };
      const code = error.code ?? error.cause?.code;
      return {
        statusCode: null,
        error: `connection: ${error.message}${error.code ? ` (${error.code})` : ''}`,
        responseBody: null,
        ...sent,
        ...(code ? { errorCode: code } : {}),
      };
    }
    const responseHeaders = boundedHeaders(answer.headers);
    if (answer.error)
      return { statusCode: answer.statusCode, error: `response: ${answer.error.message}`, responseBody: null, ...sent, responseHeaders };
    const code = answer.statusCode;
    return {
      statusCode: code,
      error: code >= 200 && code < 300 ? null : `HTTP ${code}`,
      responseBody: Buffer.concat(answer.chunks).toString('utf8').slice(0, STORED_BODY_CHARS),
      ...sent,
      responseHeaders,
    };
  }
}

/** What came back: no status when it failed before an answer; `error` after a status when the body broke off. */
interface Exchange {
  statusCode: number | null;
  headers: Record<string, string | string[] | undefined>;
  chunks: Buffer[];
  error: Error | null;
  timedOut: boolean;
}

/**
 * One request through the pool with undici's dispatch handler, not its
 * request() API: the answer's body is collected as it arrives, with no
 * response stream, async iterator or abort signal per attempt (that machinery
 * was a large part of the sender thread's time in a drain, bench/RESULTS-webhooks.md).
 * Gives up after ATTEMPT_TIMEOUT_MS in all; stops reading (and drops the
 * connection) after READ_LIMIT_BYTES, keeping what it read.
 */
function exchange(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): Promise<Exchange> {
  return new Promise((resolve) => {
    const answer: Exchange = { statusCode: null, headers: {}, chunks: [], error: null, timedOut: false };
    let controller: Dispatcher.DispatchController | null = null;
    let size = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const timer = setTimeout(() => {
      answer.timedOut = true;
      finish();
      controller?.abort(new Error('attempt timed out'));
    }, ATTEMPT_TIMEOUT_MS);
    dispatcher.dispatch(options, {
      onRequestStart(c) {
        controller = c;
        if (done) c.abort(new Error('attempt timed out'));
      },
      onResponseStart(_c, statusCode, headers) {
        // 1xx answers are interim: the final one follows.
        if (statusCode < 200) return;
        answer.statusCode = statusCode;
        answer.headers = headers;
      },
      onResponseData(c, chunk) {
        if (done) return;
        answer.chunks.push(chunk);
        size += chunk.length;
        if (size < READ_LIMIT_BYTES) return;
        finish();
        c.abort(new Error('read limit reached'));
      },
      onResponseEnd: finish,
      onResponseError(_c, err) {
        if (done) return;
        answer.error = err;
        finish();
      },
    });
  });
}

function timedOut(): AttemptOutcome {
  return { statusCode: null, error: `timeout after ${ATTEMPT_TIMEOUT_MS / 1000} s`, responseBody: null };
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}
