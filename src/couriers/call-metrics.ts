// Courier call latency and errors for /metrics: the service builds them on
// its own registry (server.ts) and hands the report to its couriers'
// adapters, so each service counts only its own calls (tests run several in one process).
import type { Registry } from 'prom-client';
import { Counter, Histogram } from 'prom-client';
import type { CourierCallReport } from './http.ts';

/** Adds the courier metrics to `registry`; what the service's adapters report each call to. */
export function courierCallMetrics(registry: Registry): CourierCallReport {
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
  return (call) => {
    latency.observe({ courier: call.courier, status: call.status === null ? 'none' : String(call.status) }, call.seconds);
    if (call.failure) errors.inc({ courier: call.courier, reason: call.failure });
  };
}
