// Outbound HTTP to couriers: explicit timeouts, no redirects, failures mapped
// to courier_error reasons that say whether a retry may help.
import { courierError, type CourierFailure } from './adapter.ts';

export interface CourierResponse {
  status: number;
  headers: Headers;
  body: Buffer;
  json<T = any>(): T;
}

/** One outbound courier call, as the service that made it counts it (call-metrics.ts). */
export interface CourierCall {
  courier: string;
  seconds: number;
  /** The HTTP status, or null when no answer came (timeout, connection failure). */
  status: number | null;
  /** Why the call failed (courier_error reason), or null when it got a 2xx. */
  failure: string | null;
}

export type CourierCallReport = (call: CourierCall) => void;

/** One courier's HTTP, as its adapter is given it (adapters.ts): its base URL, timeout and the service's call report are fixed. */
export interface CourierHttp {
  /** Calls `path` under the courier's base URL; throws courier_error when no answer came. */
  fetch(path: string, init: RequestInit): Promise<CourierResponse>;
}

export interface CourierHttpOptions {
  /** Read per call: in simulator mode the service's own origin is known only once it listens. */
  baseUrl: () => string;
  timeoutMs: number;
  report: CourierCallReport;
}

export function courierHttp(slug: string, options: CourierHttpOptions): CourierHttp {
  return { fetch: (path, init) => courierFetch(slug, options, options.baseUrl() + path, init) };
}

async function courierFetch(slug: string, options: CourierHttpOptions, url: string, init: RequestInit): Promise<CourierResponse> {
  const { timeoutMs } = options;
  const started = performance.now();
  const report = (status: number | null, failure: CourierFailure | null) =>
    options.report({ courier: slug, seconds: (performance.now() - started) / 1000, status, failure });
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const name = (err as Error).name;
    const timedOut = name === 'TimeoutError' || name === 'AbortError';
    report(null, timedOut ? 'timeout' : 'unavailable');
    if (timedOut) throw courierError(slug, 'timeout', `no answer within ${timeoutMs} ms`);
    throw courierError(slug, 'unavailable', `connection failed: ${(err as Error).message}`);
  }
  let body: Buffer;
  try {
    body = Buffer.from(await res.arrayBuffer());
  } catch (err) {
    const name = (err as Error).name;
    const reason = name === 'TimeoutError' ? 'timeout' : 'unavailable';
    report(res.status, reason);
    throw courierError(slug, reason, `reading the answer failed: ${(err as Error).message}`);
  }
  report(res.status, failureFor(res.status));
  return {
    status: res.status,
    headers: res.headers,
    body,
    json<T>() {
      try {
        return JSON.parse(body.toString('utf8')) as T;
      } catch {
        throw courierError(slug, 'bad_response', `not JSON (HTTP ${res.status})`);
      }
    },
  };
}

/** The usual mapping of an HTTP status to a failure, for couriers that use HTTP statuses. */
export function failureFor(status: number): CourierFailure | null {
  if (status >= 200 && status < 300) return null;
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'throttled';
  if (status >= 500) return 'unavailable';
  if (status >= 300 && status < 400) return 'bad_response';
  return 'refused';
}
