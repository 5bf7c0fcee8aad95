// Two closed-loop load generators with the same shape: N callers, each sending
// its next request as soon as the previous answer arrives.
//   - over HTTP with autocannon against the child service;
//   - in process, calling the service's own query function on a pg pool.
// The two alternate in short rounds, so whatever else the machine is doing
// weighs on both alike. Every latency is recorded exactly (float ms).
import autocannon from 'autocannon';
import type { CpuMeter, CpuShare } from './cpu.ts';

export interface LoadStats {
  requests: number;
  seconds: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers that were not 2xx (HTTP) or calls that threw (raw); any is a failed run. */
  failures: number;
  failureDetail: string;
  /** Who used the CPU during the measured seconds (null where /proc is missing). */
  cpu: CpuShare | null;
}

export interface LoadShape {
  connections: number;
  warmupSeconds: number;
  /** Measured seconds per side, split into `rounds` alternating slices. */
  seconds: number;
  rounds: number;
}

/** What one HTTP request looks like: a path and the bearer key, chosen afresh for each request. */
export interface HttpTarget {
  baseUrl: string;
  nextPath: () => string;
  nextKey: () => string;
}

interface Slice {
  latencies: number[];
  seconds: number;
  failures: Map<string, number>;
}

function runHttp(target: HttpTarget, connections: number, seconds: number): Promise<Slice> {
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.baseUrl,
        connections,
        duration: seconds,
        pipelining: 1,
        timeout: 30,
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => ({
              ...request,
              path: target.nextPath(),
              headers: { ...request.headers, authorization: `Bearer ${target.nextKey()}` },
            }),
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        if (result.errors) failures.set('connection errors', result.errors);
        resolve({ latencies, seconds: (result.finish.getTime() - result.start.getTime()) / 1000, failures });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
      else failures.set(`HTTP ${statusCode}`, (failures.get(`HTTP ${statusCode}`) ?? 0) + 1);
    });
  });
}

async function runInProcess(call: () => Promise<unknown>, connections: number, seconds: number): Promise<Slice> {
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const caller = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await call();
        latencies.push(performance.now() - t0);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        failures.set(message, (failures.get(message) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, caller));
  return { latencies, seconds: (performance.now() - started) / 1000, failures };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Slices of one side, and the CPU readings taken around each, folded into one result. */
function summarise(slices: Slice[], shares: Array<CpuShare | null>): LoadStats {
  const sorted = Float64Array.from(slices.flatMap((s) => s.latencies)).sort();
  const seconds = slices.reduce((sum, s) => sum + s.seconds, 0);
  const failures = new Map<string, number>();
  for (const slice of slices) for (const [what, n] of slice.failures) failures.set(what, (failures.get(what) ?? 0) + n);
  const measured = shares.every((s) => s !== null);
  const weighted = (pick: (s: CpuShare) => number) => shares.reduce((sum, s, i) => sum + pick(s!) * slices[i].seconds, 0) / seconds;
  return {
    requests: sorted.length,
    seconds,
    reqPerSec: sorted.length / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    failures: [...failures.values()].reduce((sum, n) => sum + n, 0),
    failureDetail: [...failures].map(([what, n]) => `${n}x ${what}`).join(', '),
    cpu: measured ? { benchCores: weighted((s) => s.benchCores), otherCores: weighted((s) => s.otherCores) } : null,
  };
}

/** Warms both sides, then alternates API and raw slices; returns each side's totals. */
export async function compareApiWithRaw(target: HttpTarget, callRaw: () => Promise<unknown>, shape: LoadShape, meter: CpuMeter) {
  if (shape.warmupSeconds > 0) {
    await runHttp(target, shape.connections, shape.warmupSeconds);
    await runInProcess(callRaw, shape.connections, shape.warmupSeconds);
  }
  const sliceSeconds = shape.seconds / shape.rounds;
  const api = { slices: [] as Slice[], shares: [] as Array<CpuShare | null> };
  const raw = { slices: [] as Slice[], shares: [] as Array<CpuShare | null> };
  for (let round = 0; round < shape.rounds; round++) {
    await meter.begin();
    api.slices.push(await runHttp(target, shape.connections, sliceSeconds));
    api.shares.push(await meter.end());
    await meter.begin();
    raw.slices.push(await runInProcess(callRaw, shape.connections, sliceSeconds));
    raw.shares.push(await meter.end());
  }
  return { api: summarise(api.slices, api.shares), raw: summarise(raw.slices, raw.shares) };
}

/** Cycles through a list forever: keys, order ids. */
export function roundRobin<T>(items: readonly T[]): () => T {
  if (items.length === 0) throw new Error('roundRobin needs at least one item');
  let next = 0;
  return () => {
    const item = items[next];
    next = (next + 1) % items.length;
    return item;
  };
}
