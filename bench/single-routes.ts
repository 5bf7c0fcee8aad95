// node bench/single-routes.ts (issue 39: "the single routes do not slow
// down"): POST /api/v1/shipments and the order list's first page on this
// checkout and on BENCH_BEFORE_DIR (a tree before shipment batches and
// exports), two services side by side, each on its own fresh PostgreSQL
// database seeded the same way, in alternating rounds (medians). Each round
// ships BENCH_SHIPMENTS fresh orders, 4 requests in flight, then reads the
// list's first page BENCH_LIST_READS times, 4 in flight. Appends to
// bench/RESULTS-exports.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { benchTools, setting, operatorCall, timedCall } from './bench-tools.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;
const ROUNDS = setting('BENCH_ROUNDS', 3);
const SHIPMENTS = setting('BENCH_SHIPMENTS', 200);
const LIST_READS = setting('BENCH_LIST_READS', 500);
const IN_FLIGHT = 4;
const TOKEN = 'bench-operator-token-0123456789abcdef';
const RESULTS = path.join(import.meta.dirname, 'RESULTS-exports.md');

const { log, cleanups, createDatabase, run } = benchTools('single-routes', ADMIN_URL, 'merx_bench_single');

interface Side {
  name: string;
  service: ServiceProcess;
  key: string;
  /** Orders not shipped yet, one round's worth taken at a time. */
  orders: string[];
  shipments: Array<{ perSecond: number; p50: number }>;
  list: Array<{ perSecond: number; p50: number }>;
}

const call = timedCall;
const operator = (base: string, method: string, route: string, body?: unknown) => operatorCall(base, TOKEN, method, route, body);

/** `count` requests, IN_FLIGHT at a time: requests per second and the median latency. */
async function measure(count: number, send: (i: number) => Promise<{ status: number; ms: number }>, expected: number) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let i = next++; i < count; i = next++) {
        const res = await send(i);
        if (res.status !== expected) throw new Error(`answered ${res.status}, expected ${expected}`);
        latencies.push(res.ms);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: count / seconds, p50: median(latencies) };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function startSide(name: string, main?: string): Promise<Side> {
  const service = await startServiceProcess(await createDatabase(), TOKEN, { main, env: { RATE_LIMIT_REST_PER_MINUTE: '100000000' } });
  cleanups.push({ name: `stop ${name}`, run: () => service.stop() });
  const base = service.url;
  const account = (await operator(base, 'POST', '/accounts', { name: `Bench ${name}`, email: `bench-${name}@example.com` })).data;
  await operator(base, 'PUT', `/accounts/${account.id}/couriers/courier_a`, { enabled: true });
  const key = (await operator(base, 'POST', `/accounts/${account.id}/keys`, { name: 'bench', preset: 'fulfilment' })).key as string;
  const orders: string[] = new Array(SHIPMENTS * ROUNDS);
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

async function round(side: Side): Promise<void> {
  const base = side.service.url;
  const batch = side.orders.splice(0, SHIPMENTS);
  side.shipments.push(await measure(SHIPMENTS, (i) => call(base, side.key, 'POST', '/api/v1/shipments', { order_id: batch[i] }), 201));
  side.list.push(await measure(LIST_READS, () => call(base, side.key, 'GET', '/api/v1/orders?limit=50'), 200));
}

await run(async () => {
  if (!BEFORE_DIR) throw new Error('BENCH_BEFORE_DIR: the tree to compare with');
  const loadBefore = os.loadavg()[0];
  const commit = (dir: string) => execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h'], { encoding: 'utf8' }).trim();
  const sides = [await startSide('this tree'), await startSide('before', path.join(BEFORE_DIR, 'src', 'main.ts'))];
  for (let r = 1; r <= ROUNDS; r++) {
    // Alternating which side goes first, so that neither always meets the machine after the other.
    for (const side of r % 2 ? sides : [...sides].reverse()) await round(side);
    log(
      `round ${r}: ${sides.map((s) => `${s.name} ${s.shipments.at(-1)!.perSecond.toFixed(1)} shipments/s, list ${s.list.at(-1)!.perSecond.toFixed(0)}/s`).join('; ')}`,
    );
  }
  const [after, before] = sides;
  const row = (label: string, pick: (s: Side) => Side['list']) => {
    const rate = (s: Side) => median(pick(s).map((m) => m.perSecond));
    const p50 = (s: Side) => median(pick(s).map((m) => m.p50));
    return `| ${label} | ${rate(before).toFixed(1)} /s, p50 ${p50(before).toFixed(1)} ms | ${rate(after).toFixed(1)} /s, p50 ${p50(after).toFixed(1)} ms | ${((rate(after) / rate(before) - 1) * 100).toFixed(1)}% |`;
  };
  const section = [
    `## ${new Date().toISOString().slice(0, 16)}Z: the single routes beside the tree before batches and exports (bench/single-routes.ts)`,
    '',
    `- This tree: ${commit(path.join(import.meta.dirname, '..'))}; before: ${commit(BEFORE_DIR)}.`,
    `- ${os.cpus().length} cores, load ${loadBefore.toFixed(1)} before and ${os.loadavg()[0].toFixed(1)} after; both services on PostgreSQL on this machine, each on its own fresh database with the same seed; ${ROUNDS} rounds alternating which side goes first, medians.`,
    `- A round: POST /api/v1/shipments for ${SHIPMENTS} fresh orders (courier_a, the built-in simulator), then GET /api/v1/orders?limit=50 ${LIST_READS} times; ${IN_FLIGHT} requests in flight each.`,
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
