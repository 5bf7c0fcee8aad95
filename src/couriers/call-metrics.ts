// Courier call latency and errors for /metrics: every outbound courier HTTP
// call (courierFetch) reports here, and each running service's registry that
// subscribed counts it (tests run several services in one process).
import type { Registry } from 'prom-client';
import { Counter, Histogram } from 'prom-client';

export interface CourierCall {
  courier: string;
  seconds: number;
  /** The HTTP status, or null when no answer came (timeout, connection failure). */
  status: number | null;
  /** Why the call failed (courier_error reason), or null when it got a 2xx. */
  failure: string | null;
}

const observers = new Set<(call: CourierCall) => void>();

export function reportCourierCall(call: CourierCall): void {
  for (const observe of observers) observe(call);
}

/** Adds the courier metrics to `registry`; returns the way to stop counting (the service's close). */
export function courierCallMetrics(registry: Registry): () => void {
  const latency = new Histogram({
    name: 'merx_courier_request_duration_seconds',
    help: 'Outbound courier API calls by courier and HTTP status ("none" when no answer came)',
    labelNames: ['courier', 'status'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'merx_courier_errors_total',
    help: 'Courier calls that failed, by courier and reason (timeout, unavailable, refused, auth, bad_response)',
    labelNames: ['courier', 'reason'],
    registers: [registry],
  });
  const observe = (call: CourierCall) => {
    latency.observe({ courier: call.courier, status: call.status === null ? 'none' : String(call.status) }, call.seconds);
    if (call.failure) errors.inc({ courier: call.courier, reason: call.failure });
  };
  observers.add(observe);
  return () => observers.delete(observe);
}
