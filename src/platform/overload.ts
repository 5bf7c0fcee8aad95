// Load shedding (issue 27) with @fastify/under-pressure: past a bound on the
// event loop's delay or utilisation, or on the heap, every request is answered
// 503 `unavailable` at once (before its key is looked up or its body parsed),
// so an instance with more work than it can do answers fast "come back later"
// instead of slow answers to everyone. /healthz and /metrics are never shed:
// the operator must be able to see an instance under pressure.
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import type { OverloadBounds } from '../config.ts';
import { AppError } from './errors.ts';

/** Which bound was passed: `pressure.reason` on /healthz (a client needs only `details.reason: "overloaded"`). */
export type PressureReason = 'event_loop_delay' | 'event_loop_utilization' | 'heap_used';

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
function passedBound(usage: Usage, bounds: OverloadBounds): PressureReason | null {
  if (bounds.maxEventLoopDelayMs > 0 && usage.eventLoopDelay > bounds.maxEventLoopDelayMs) return 'event_loop_delay';
  if (bounds.maxHeapUsedBytes > 0 && usage.heapUsed > bounds.maxHeapUsedBytes) return 'heap_used';
  if (bounds.maxEventLoopUtilization > 0 && usage.eventLoopUtilized > bounds.maxEventLoopUtilization) return 'event_loop_utilization';
  return null;
}

export async function registerLoadShedding(app: FastifyInstance, bounds: OverloadBounds): Promise<void> {
  if (!bounds.enabled) return;
  await app.register(underPressure, {
    maxEventLoopDelay: bounds.maxEventLoopDelayMs,
    maxEventLoopUtilization: bounds.maxEventLoopUtilization,
    maxHeapUsedBytes: bounds.maxHeapUsedBytes,
    sampleInterval: bounds.sampleIntervalMs,
    // Utilisation of the last sample, not since the start: a busy hour ago says nothing about now.
    eventLoopUtilizationMode: 'interval',
    // Returning nothing lets the request through; throwing answers it through the app's error handler (contract shape).
    pressureHandler: async (request) => {
      if (NEVER_SHED.has(request.url.split('?')[0])) return;
      throw overloaded(bounds.retryAfterSec);
    },
  });
}

/** What /healthz shows while the instance sheds load: the bound passed and the measures (null when not shedding). */
export function pressureState(app: FastifyInstance, bounds: OverloadBounds) {
  if (!bounds.enabled || !app.hasDecorator('memoryUsage')) return null;
  const usage = app.memoryUsage();
  const reason = passedBound(usage, bounds);
  if (!reason) return null;
  return {
    reason,
    event_loop_delay_ms: Math.round(usage.eventLoopDelay),
    event_loop_utilization: Math.round(usage.eventLoopUtilized * 100) / 100,
    heap_used_mb: Math.round(usage.heapUsed / 2 ** 20),
    retry_after_sec: bounds.retryAfterSec,
  };
}
