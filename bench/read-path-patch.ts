// The write pair of bench/read-path.ts (issue 29: "PATCH /orders/{id}, status
// change with its events, after vs before, same run"). Storing each view as a
// document when it is written moves cost from reads to writes; this measures
// what a status change costs on the checkout under test against another
// checkout (BENCH_BEFORE_DIR), each service on its own fresh database seeded
// the same way, loaded alternately like every other pair.
//
// SPEC "Order status": any status may be PATCHed to any other. confirmed and
// processing have no side effect beyond the change itself (no stock moves, no
// customer notice), so each request takes the next of a few thousand such
// orders, round-robin, and flips it to the other of the two: a real change
// every time, committing order.status_changed, the customer's aggregates and
// whatever the checkout maintains on write. With 50 requests in flight and
// thousands of orders, no order is changed by two requests at once.
import crypto from 'node:crypto';
import { openDb } from '../src/platform/db/open-db.ts';
import type { Db } from '../src/platform/db/db.ts';
import { addBenchKeys, addShipments, provisionAndSeed, settle } from './fixtures.ts';
import { roundRobin } from './load.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { JSON_HEADERS, runHttp, type HttpLoad, type Side } from './read-path-http.ts';
import type { Cleanup } from './bench-tools.ts';

const FLIPPED_ORDERS = 4000;
const FLIP: Record<string, string> = { confirmed: 'processing', processing: 'confirmed' };

export interface PatchTools {
  log: (message: string) => void;
  cleanups: Cleanup[];
  createDatabase: () => Promise<string>;
}

export interface PatchSide {
  service: ServiceProcess;
  /** One timed run of status changes; fails unless every answered request committed its order.status_changed. */
  run: (seconds: number) => Promise<Side>;
  /** One timed run of the first page of orders on the same service (what a read costs there, the request log included). */
  list: (seconds: number) => Promise<Side>;
}

/**
 * Starts `dir`'s service on a fresh database, seeds `orders` orders as the
 * read pairs' account is seeded (seed endpoint, shipments, keys, VACUUM
 * ANALYZE), and returns its PATCH load.
 */
export async function startPatchSide(
  tools: PatchTools,
  label: string,
  dir: string,
  orders: number,
  keyCount: number,
  connections: number,
  env: Record<string, string>,
): Promise<PatchSide> {
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const databaseUrl = await tools.createDatabase();
  const service = await startServiceProcess(databaseUrl, adminToken, { main: `${dir}/src/main.ts`, env });
  tools.cleanups.push({ name: `stop ${label} service`, run: () => service.stop() });
  tools.log(`PATCH ${label}: service from ${dir} (pid ${service.pid}), seeding ${orders.toLocaleString('en-US')} orders…`);
  const tenant = await provisionAndSeed(service.url, adminToken, { orders, products: 200, customers: Math.max(100, orders / 4) });
  const db = await openDb({ databaseUrl, dataDir: '', poolMax: 2 });
  tools.cleanups.push({ name: `close ${label} pool`, run: () => db.close() });
  const keys = roundRobin([tenant.key, ...(await addBenchKeys(db, tenant.accountId, keyCount - 1))]);
  await addShipments(db, tenant.accountId);
  await settle(db);
  const { rows } = await db.query<{ id: string; status: string }>(
    `SELECT id, status FROM orders WHERE account_id = $1 AND status IN ('confirmed', 'processing') ORDER BY number LIMIT $2`,
    [tenant.accountId, FLIPPED_ORDERS],
  );
  // Round-robin must not come back to an order while its previous request may still be in flight.
  if (rows.length < 4 * connections) throw new Error(`PATCH ${label}: ${rows.length} confirmed or processing orders, need ${4 * connections}`);
  const ids = rows.map((r) => r.id);
  const statuses = rows.map((r) => r.status);
  let turn = 0;
  const load: HttpLoad = {
    method: 'PATCH',
    headers: JSON_HEADERS,
    stateful: true,
    next: () => {
      const i = turn++ % ids.length;
      statuses[i] = FLIP[statuses[i]];
      return { path: `/api/v1/orders/${ids[i]}`, body: `{"status":"${statuses[i]}"}` };
    },
  };
  tools.log(`PATCH ${label}: ${ids.length} orders flip between confirmed and processing`);
  const list: HttpLoad = { method: 'GET', next: () => ({ path: '/api/v1/orders?limit=50' }) };
  return {
    service,
    list: (seconds) => runHttp(service, list, keys, seconds, connections),
    run: async (seconds) => {
      const before = await statusChanges(db, tenant.accountId);
      const side = await runHttp(service, load, keys, seconds, connections);
      // Requests in flight when autocannon stops may still commit; let them, then read back where each order is.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const committed = (await statusChanges(db, tenant.accountId)) - before;
      const { rows: now } = await db.query<{ id: string; status: string }>('SELECT id, status FROM orders WHERE id = ANY ($1::uuid[])', [ids]);
      const current = new Map(now.map((r) => [r.id, r.status]));
      ids.forEach((id, i) => (statuses[i] = current.get(id)!));
      // Every answered request changed a status, give or take the requests cut off at either end of the run.
      if (committed < side.answered! - connections)
        throw new Error(`PATCH ${label}: ${side.answered} answered, only ${committed} order.status_changed events committed`);
      return side;
    },
  };
}

async function statusChanges(db: Db, accountId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE account_id = $1 AND event = 'order.status_changed'`, [
    accountId,
  ]);
  return rows[0].n;
}
