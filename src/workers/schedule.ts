// Timers for the scheduled jobs besides the delivery worker. Every job is
// idempotent (unique keys, SKIP LOCKED), so any number of instances may run them.
import type { Services } from '../platform/services.ts';
import { runLowStockCheck } from '../modules/inventory/low-stock.ts';
import { runCourierPoll } from '../modules/shipments/status-sync.ts';
import { runRetention } from './retention.ts';

const MINUTE_MS = 60 * 1000;
/** SPEC: courier_a and courier_b statuses are polled every 15 minutes. */
const COURIER_POLL_MS = 15 * MINUTE_MS;
/** The low-stock check is daily per product; running it hourly only shortens the wait after midnight UTC. */
const LOW_STOCK_MS = 60 * MINUTE_MS;
/** Events older than 30 days and idempotency keys older than 24 hours go; hourly keeps each pass small. */
const RETENTION_MS = 60 * MINUTE_MS;

export const JOBS: Record<string, (services: Services, now: Date) => Promise<number>> = {
  'webhook-deliveries': (s, now) => s.deliveries.runDue(now),
  'courier-poll': (s) => runCourierPoll(s.db, s.couriers, { notifier: s.notifier }, s.log),
  'low-stock': (s, now) => runLowStockCheck(s.db, now),
  retention: (s, now) => runRetention(s.db, now),
  // EXTENSIONS 8: every shipment-batch item this instance may claim, run now (the runner does this on its own where workers run).
  'shipment-batches': (s) => s.batches.runNow(s),
};

export function startSchedules(services: Services): () => void {
  const every = (name: string, ms: number) => {
    const timer = setInterval(() => {
      JOBS[name](services, new Date()).catch((err) => services.log.error({ err, job: name }, 'scheduled job failed'));
    }, ms);
    timer.unref();
    return timer;
  };
  const timers = [every('courier-poll', COURIER_POLL_MS), every('low-stock', LOW_STOCK_MS), every('retention', RETENTION_MS)];
  return () => timers.forEach(clearInterval);
}
