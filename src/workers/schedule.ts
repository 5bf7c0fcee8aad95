// Timers for the scheduled jobs that are not the delivery worker. Each job is
// idempotent (unique keys in the database), so any number of instances may run them.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../platform/db.ts';
import { runLowStockCheck } from '../modules/inventory/low-stock.ts';

const HOUR_MS = 60 * 60 * 1000;

/** The low-stock check is daily per product; running it hourly only shortens the wait after midnight UTC. */
export function startSchedules(db: Db, log: FastifyBaseLogger): () => void {
  const timer = setInterval(() => {
    runLowStockCheck(db, new Date()).catch((err) => log.error({ err }, 'low-stock check failed'));
  }, HOUR_MS);
  timer.unref();
  return () => clearInterval(timer);
}
