// node bench/single-routes.ts (issue 39: "the single routes do not slow
// down"): POST /api/v1/shipments and the order list's first page on this
// checkout and on BENCH_BEFORE_DIR (a tree before shipment batches and
// exports), two services, each on its own fresh PostgreSQL database seeded
// the same way. Both sides are loaded at the same time, in windows of
// BENCH_WINDOW_SEC: on a shared machine whatever else runs slows both alike,
// where measuring one side after the other let the load between them decide
// (two sequential runs here disagreed by tens of percent). Each window ships
// fresh orders, 4 requests in flight per side; then a window of the list's
// first page, 4 in flight per side. BENCH_ROUNDS windows of each; the result
// is the median of the windows' ratios. Appends to bench/RESULTS-exports.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { benchTools, setting, operatorCall, timedCall } from './bench-tools.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;
const ROUNDS = setting('BENCH_ROUNDS', 7);
const WINDOW_MS = setting('BENCH_WINDOW_SEC', 5) * 1000;
/** Fresh orders per side and round: more than a window can ship (a side that ran out would end its window early). */
const ORDERS_PER_ROUND = setting('BENCH_ORDERS_PER_ROUND', 800);
const IN_FLIGHT = 4;
const TOKEN = 'bench-operator-token-0123456789abcdef';
const RESULTS = path.join(import.meta.dirname, 'RESULTS-exports.md');

const { log, cleanups, createDatabase, run } = benchTools('single-routes', ADMIN_URL, 'merx_bench_single');

interface Rate {
  perSecond: number;
  p50: number;
}

interface Side {
  name: string;
  service: ServiceProcess;
  key: string;
  /** Orders not shipped yet. */
  orders: string[];
  shipments: Rate[];
  list: Rate[];
}

const operator = (base: string, method: string, route: string, body?: unknown) => operatorCall(base, TOKEN, method, route, body);

/** Requests until `deadline`, IN_FLIGHT at a time: requests per second and the median latency. */
async function measureUntil(deadline: number, send: () => Promise<{ status: number; ms: number }> | null, expected: number): Promise<Rate> {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < deadline) {
        const sent = send();
        if (!sent) throw new Error('ran out of fresh orders before the window ended: raise BENCH_ORDERS_PER_ROUND');
        const res = await sent;
        if (res.status !== expected) throw new Error(`answered ${res.status}, expected ${expected}`);
        latencies.push(res.ms);
      }
    }),
  );
  return { perSecond: latencies.length / ((performance.now() - started) / 1000), p50: median(latencies) };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function startSide(name: string, main?: string): Promise<Side> {
  const service = await startServiceProcess(await createDatabase(), TOKEN, { main, env: { RATE_LIMIT_REST_PER_MINUTE: '100000000' } });
  cleanups.push({ name: `stop ${name}`, run: () => service.stop() });
  const base = service.url;
  const account = (await operator(base, 'POST', '/accounts', { name: `Bench ${name}`, email: `bench-${name}@example.com` })).data;
  await operator(base, 'PUT', `/accounts/${account.id}/couriers/courier_a`, { enabled: true });
  const key = (await operator(base, 'POST', `/accounts/${account.id}/keys`, { name: 'bench', preset: 'fulfilment' })).key as string;
  const orders: string[] = new Array(ORDERS_PER_ROUND * ROUNDS);
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let i = next++; i < orders.length; i = next++) {
        const order = await operator(base, 'POST', `/accounts/${account.id}/orders`, {
          customer: { name: `Customer ${i}`, email: `c${i}@example.com`, phone: '+359888000111' },
          shipping: {
            address: `ul. Vitosha ${i}`,
            city: 'Sofia',
            zip: '1000',
            courier_slug: 'courier_a',
            courier_delivery_mode: 'office',
            courier_office_id: 101,
          },
          legacy: { product_name: 'Mug', quantity: 1, unit_price: 12.5 },
          payment_method: 'cod',
        });
        orders[i] = order.data.id;
      }
    }),
  );
  log(`${name}: ${base}, ${orders.length} orders`);
  return { name, service, key, orders, shipments: [], list: [] };
}

/** One window of each route, both sides loaded at once. */
async function round(sides: Side[]): Promise<void> {
  let deadline = performance.now() + WINDOW_MS;
  const shipped = await Promise.all(
    sides.map((side) => {
      const batch = side.orders.splice(0, ORDERS_PER_ROUND);
      return measureUntil(
        deadline,
        () => (batch.length ? timedCall(side.service.url, side.key, 'POST', '/api/v1/shipments', { order_id: batch.pop() }) : null),
        201,
      );
    }),
  );
  deadline = performance.now() + WINDOW_MS;
  const listed = await Promise.all(
    sides.map((side) => measureUntil(deadline, () => timedCall(side.service.url, side.key, 'GET', '/api/v1/orders?limit=50'), 200)),
  );
  sides.forEach((side, i) => {
    side.shipments.push(shipped[i]);
    side.list.push(listed[i]);
  });
}

await run(async () => {
  if (!BEFORE_DIR) throw new Error('BENCH_BEFORE_DIR: the tree to compare with');
  const loadBefore = os.loadavg()[0];
  const commit = (dir: string) => execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h'], { encoding: 'utf8' }).trim();
  const sides = [await startSide('this tree'), await startSide('before', path.join(BEFORE_DIR, 'src', 'main.ts'))];
  const [after, before] = sides;
  for (let r = 1; r <= ROUNDS; r++) {
    await round(sides);
    log(
      `round ${r}: ${sides.map((s) => `${s.name} ${s.shipments.at(-1)!.perSecond.toFixed(1)} shipments/s, list ${s.list.at(-1)!.perSecond.toFixed(0)}/s`).join('; ')}`,
    );
  }
  const row = (label: string, pick: (s: Side) => Rate[]) => {
    const rate = (s: Side) => median(pick(s).map((m) => m.perSecond));
    const p50 = (s: Side) => median(pick(s).map((m) => m.p50));
    const ratios = pick(after).map((m, i) => m.perSecond / pick(before)[i].perSecond);
    const percent = (ratio: number) => `${((ratio - 1) * 100).toFixed(1)}%`;
    return `| ${label} | ${rate(before).toFixed(1)} /s, p50 ${p50(before).toFixed(1)} ms | ${rate(after).toFixed(1)} /s, p50 ${p50(after).toFixed(1)} ms | **${percent(median(ratios))}** (${ratios.map(percent).join(', ')}) |`;
  };
  const section = [
    `## ${new Date().toISOString().slice(0, 16)}Z: the single routes beside the tree before batches and exports, both loaded at once (bench/single-routes.ts)`,
    '',
    `- This tree: ${commit(path.join(import.meta.dirname, '..'))}; before: ${commit(BEFORE_DIR)}.`,
    `- ${os.cpus().length} cores, load ${loadBefore.toFixed(1)} before and ${os.loadavg()[0].toFixed(1)} after; both services on PostgreSQL on this machine, each on its own fresh database with the same seed.`,
    `- ${ROUNDS} rounds; in each, both sides at once for ${WINDOW_MS / 1000} s of POST /api/v1/shipments (fresh orders, courier_a, the built-in simulator), then ${WINDOW_MS / 1000} s of GET /api/v1/orders?limit=50; ${IN_FLIGHT} requests in flight per side. Rates and p50: medians of the rounds; change: the median of the rounds' ratios (each round's in brackets).`,
    '',
    '| route | before | this tree | change in rate |',
    '| --- | --- | --- | --- |',
    row('POST /api/v1/shipments', (s) => s.shipments),
    row('GET /api/v1/orders?limit=50', (s) => s.list),
    '',
  ].join('\n');
  fs.appendFileSync(RESULTS, `${section}\n`);
  log(`\n${section}`);
});
