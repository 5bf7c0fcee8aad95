// The API side of bench/read-path.ts: autocannon against the service child,
// every answer 2xx or the run fails, latencies of the answered requests, and
// the service process's CPU per answered request.
import autocannon from 'autocannon';
import { pidJiffies } from './cpu.ts';

export interface Side {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Requests answered 2xx (API) or transactions run (pgbench). */
  answered?: number;
  /** The service process's CPU (user + system) per answered request: the API sides only. */
  serviceCpuMs?: number;
}

export interface HttpRequest {
  path: string;
  body?: string;
}

export interface HttpLoad {
  method: 'GET' | 'POST' | 'PATCH';
  /** Called once per request: a PATCH load picks the next order and the status to flip it to. */
  next: () => HttpRequest;
  headers?: Record<string, string>;
}

export const MCP_VERSION = '2025-06-18';
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MCP_VERSION };
export const JSON_HEADERS = { 'content-type': 'application/json' };

export function percentile(sorted: Float64Array, p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}

export function runHttp(
  service: { url: string; pid: number },
  load: HttpLoad,
  nextKey: () => string,
  seconds: number,
  connections: number,
): Promise<Side> {
  const latencies: number[] = [];
  let failures = 0;
  const cpuBefore = pidJiffies(service.pid);
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: service.url,
        connections,
        duration: seconds,
        timeout: 30,
        requests: [
          {
            method: load.method,
            setupRequest: (request) => {
              const next = load.next();
              return {
                ...request,
                path: next.path,
                ...(next.body !== undefined ? { body: next.body } : {}),
                headers: { ...request.headers, ...load.headers, authorization: `Bearer ${nextKey()}` },
              };
            },
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        if (failures || result.errors) return reject(new Error(`${failures} non-2xx answers, ${result.errors} connection errors`));
        const sorted = Float64Array.from(latencies).sort();
        const elapsed = (result.finish.getTime() - result.start.getTime()) / 1000;
        const cpuAfter = pidJiffies(service.pid);
        // Jiffies are 10 ms: ~8,000 requests in a round make the figure good to a few microseconds.
        const serviceCpuMs = cpuBefore !== null && cpuAfter !== null ? ((cpuAfter - cpuBefore) * 10) / sorted.length : undefined;
        resolve({ reqPerSec: sorted.length / elapsed, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), answered: sorted.length, serviceCpuMs });
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => (status >= 200 && status < 300 ? latencies.push(ms) : failures++));
  });
}
