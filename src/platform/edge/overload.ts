// Load shedding (issue 27): past a bound on the requests in flight (the
// instance's queue), or, with @fastify/under-pressure, on the event loop's
// delay or utilisation or on the heap, every request is answered 503
// `unavailable` at once (before its key is looked up or its body parsed),
// so an instance with more work than it can do answers fast "come back later"
// instead of slow answers to everyone. /healthz and /metrics are never shed:
// the operator must be able to see an instance under pressure.
//
// Measured (bench/RESULTS-overload.md): at 1,000 connections on the order list
// the event loop stays responsive (mean delay ~15 ms, as at 50) while requests
// queue for PostgreSQL connections, so the queue bound is the one that sheds
// there; the loop and heap bounds catch work that starves the loop itself.
//
// The loop and heap bounds shed only sustained pressure: the bound must hold across a sample boundary
// while requests keep coming. One long block of the loop (a start, a big
// PGlite query, a garbage collection) raises one sample, and the requests that
// follow it are served; a queue of work that does not drain raises every
// sample, and shedding starts one sample after the first request saw it.
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import type { OverloadBounds } from '../../config.ts';
import { AppError } from '../contract/errors.ts';

/** Which bound was passed: `pressure.reason` on /healthz (a client needs only `details.reason: "overloaded"`). */
export type PressureReason = 'requests_in_flight' | 'event_loop_delay' | 'event_loop_utilization' | 'heap_used';

/** Paths that answer whatever the load: the health check and the operator's metrics. */
const NEVER_SHED = new Set(['/healthz', '/metrics']);

export function overloaded(retryAfterSec: number): AppError {
  return new AppError(
    'unavailable',
    'this instance is overloaded; retry after the Retry-After seconds',
    { reason: 'overloaded', retry_after_sec: retryAfterSec },
    { retryable: true, headers: { 'Retry-After': String(retryAfterSec) } },
  );
}

interface Usage {
  eventLoopDelay: number;
  eventLoopUtilized: number;
  heapUsed: number;
}

/** The bound passed, or null; in the order under-pressure checks them. */
function passedBound(usage: Usage, requests: number, bounds: OverloadBounds): PressureReason | null {
  if (bounds.maxInFlight > 0 && requests >= bounds.maxInFlight) return 'requests_in_flight';
  if (bounds.maxEventLoopDelayMs > 0 && usage.eventLoopDelay > bounds.maxEventLoopDelayMs) return 'event_loop_delay';
  if (bounds.maxHeapUsedBytes > 0 && usage.heapUsed > bounds.maxHeapUsedBytes) return 'heap_used';
  if (bounds.maxEventLoopUtilization > 0 && usage.eventLoopUtilized > bounds.maxEventLoopUtilization) return 'event_loop_utilization';
  return null;
}

/** Pressure as requests meet it: when this episode began and when a request last met it. */
class Episode {
  private firstSeen = 0;
  private lastSeen = 0;
  private readonly sampleMs: number;

  constructor(sampleMs: number) {
    this.sampleMs = sampleMs;
  }

  /** Called for each request that meets pressure: true once the pressure has outlived one sample. */
  sustained(now: number): boolean {
    // A gap longer than a sample: the previous episode ended (a sample in between was below every bound).
    if (now - this.lastSeen > this.sampleMs) this.firstSeen = now;
    this.lastSeen = now;
    return now - this.firstSeen >= this.sampleMs;
  }

  /** Whether requests are being shed now: the last request that met pressure was refused, and recently. */
  shedding(now: number): boolean {
    return now - this.lastSeen <= this.sampleMs && this.lastSeen - this.firstSeen >= this.sampleMs;
  }
}

/** Requests admitted and not yet answered, per app (tests run several in one process). */
const inFlight = new WeakMap<FastifyInstance, { count: number; episode: Episode }>();

export async function registerLoadShedding(app: FastifyInstance, bounds: OverloadBounds): Promise<void> {
  if (!bounds.enabled) return;
  const episode = new Episode(bounds.sampleIntervalMs);
  const queue = { count: 0, episode };
  inFlight.set(app, queue);
  await app.register(underPressure, {
    maxEventLoopDelay: bounds.maxEventLoopDelayMs,
    maxEventLoopUtilization: bounds.maxEventLoopUtilization,
    maxHeapUsedBytes: bounds.maxHeapUsedBytes,
    sampleInterval: bounds.sampleIntervalMs,
    // Utilisation of the last sample, not since the start: a busy hour ago says nothing about now.
    eventLoopUtilizationMode: 'interval',
    // Returning nothing lets the request through; throwing answers it through the app's error handler (contract shape).
    pressureHandler: async (request) => {
      if (NEVER_SHED.has(request.url.split('?')[0]) || !episode.sustained(Date.now())) return;
      throw overloaded(bounds.retryAfterSec);
    },
  });
  // The queue bound is sharp: past it a request is refused at once, so an admitted one waits behind at most that many.
  app.addHook('onRequest', async (request, reply) => {
    if (bounds.maxInFlight === 0 || NEVER_SHED.has(request.url.split('?')[0])) return;
    if (queue.count >= bounds.maxInFlight) throw overloaded(bounds.retryAfterSec);
    queue.count++;
    // 'close' comes once for every response, sent or cut off by the client.
    reply.raw.once('close', () => queue.count--);
  });
}

/** What /healthz shows while the instance sheds load: the bound passed and the measures (null when not shedding). */
export function pressureState(app: FastifyInstance, bounds: OverloadBounds) {
  const queue = inFlight.get(app);
  if (!bounds.enabled || !queue || !app.hasDecorator('memoryUsage')) return null;
  const usage = app.memoryUsage();
  const reason = passedBound(usage, queue.count, bounds);
  // A loop or heap bound passed for one sample only (a start, one long block) sheds nothing, so it is not shown.
  if (!reason || (reason !== 'requests_in_flight' && !queue.episode.shedding(Date.now()))) return null;
  const requests = queue.count;
  return {
    reason,
    requests_in_flight: requests,
    // Infinity (no loop turn at all in the sample) is sent as null.
    event_loop_delay_ms: Number.isFinite(usage.eventLoopDelay) ? Math.round(usage.eventLoopDelay) : null,
    event_loop_utilization: Math.round(usage.eventLoopUtilized * 100) / 100,
    heap_used_mb: Math.round(usage.heapUsed / 2 ** 20),
    retry_after_sec: bounds.retryAfterSec,
  };
}
