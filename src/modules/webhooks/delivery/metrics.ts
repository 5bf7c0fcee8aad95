// The delivery engine's Prometheus metrics (README "Operations"). Backlog,
// oldest pending age, dead and held deliveries are read from the database when
// /metrics is scraped, so they are the same whichever instance answers.
import type { Registry } from 'prom-client';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Db } from '../../../platform/db/db.ts';
import { flowTakesOver } from './flow.ts';

export interface DeliveryMetrics {
  outcome(settlement: string): void;
  attemptSeconds(seconds: number): void;
  inFlight(origin: string, delta: number): void;
}

export function deliveryMetrics(registry: Registry | undefined, db: Db, queued: () => number): DeliveryMetrics {
  if (!registry) return { outcome() {}, attemptSeconds() {}, inFlight() {} };
  const registers = [registry];
  const outcomes = new Counter({
    name: 'merx_webhook_deliveries_total',
    help: 'Delivery attempts by outcome: delivered, retry_later (failed, another attempt is scheduled), dead (last attempt failed or 410), failed (not sendable)',
    labelNames: ['outcome'],
    registers,
  });
  const latency = new Histogram({
    name: 'merx_webhook_attempt_duration_seconds',
    help: 'Time from sending a delivery attempt to its answer (or error or 10 s timeout)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const inFlight = new Gauge({
    name: 'merx_webhook_in_flight',
    help: 'Delivery attempts in flight in this instance, per target origin: sent, outcome not yet recorded',
    labelNames: ['origin'],
    registers,
  });
  const state = async () => {
    const { rows } = await db.query<{ due: number; oldest: number | null; dead: number; held: number }>(
      `SELECT (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()) AS due,
              (SELECT extract(epoch FROM now() - min(created_at))::float8 FROM webhook_deliveries WHERE status = 'pending') AS oldest,
              (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'dead') AS dead,
              (SELECT count(*)::int FROM webhook_deliveries d WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND ${flowTakesOver('d.webhook_id')}) AS held`,
    );
    return rows[0];
  };
  let snapshot: Promise<{ due: number; oldest: number | null; dead: number; held: number }> | null = null;
  // The gauges of one scrape share one query.
  const read = () => {
    snapshot ??= state().finally(() => setImmediate(() => (snapshot = null)));
    return snapshot;
  };
  new Gauge({
    name: 'merx_webhook_backlog',
    help: 'Deliveries due but not yet sent: past their due time in the database, plus first attempts queued in this instance',
    registers,
    async collect() {
      this.set((await read()).due + queued());
    },
  });
  new Gauge({
    name: 'merx_webhook_oldest_pending_age_seconds',
    help: 'Age of the oldest delivery still pending (0 when none)',
    registers,
    async collect() {
      this.set((await read()).oldest ?? 0);
    },
  });
  new Gauge({
    name: 'merx_webhook_dead_deliveries',
    help: 'Deliveries in status dead (all attempts failed, or the endpoint answered 410)',
    registers,
    async collect() {
      this.set((await read()).dead);
    },
  });
  new Gauge({
    name: 'merx_webhook_held_deliveries',
    help: "Deliveries due but held by their subscription's flow (a pause, the rate, a Retry-After or the circuit); also counted in the backlog",
    registers,
    async collect() {
      this.set((await read()).held);
    },
  });
  return {
    outcome: (settlement) => outcomes.inc({ outcome: settlement === 'gone' ? 'dead' : settlement }),
    attemptSeconds: (seconds) => latency.observe(seconds),
    inFlight: (origin, delta) => inFlight.inc({ origin }, delta),
  };
}
