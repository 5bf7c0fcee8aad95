// Outbound HTTP to couriers: explicit timeouts, no redirects, failures mapped
// to courier_error reasons that say whether a retry may help.
import { courierError, type CourierFailure } from './adapter.ts';
import { reportCourierCall } from './call-metrics.ts';

export interface CourierResponse {
  status: number;
  headers: Headers;
  body: Buffer;
  json<T = any>(): T;
}

export async function courierFetch(slug: string, timeoutMs: number, url: string, init: RequestInit): Promise<CourierResponse> {
  const started = performance.now();
  const report = (status: number | null, failure: CourierFailure | null) =>
    reportCourierCall({ courier: slug, seconds: (performance.now() - started) / 1000, status, failure });
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
  if (status >= 500) return 'unavailable';
  if (status >= 300 && status < 400) return 'bad_response';
  return 'refused';
}
