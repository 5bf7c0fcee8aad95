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
//
// BENCH_COURIER=standalone: both services call one courier simulator of this
// tree running as its own process (`merx courier-sim`, COURIER_MODE=live), so
// the courier's own work is the same for both; by default each service uses
// its built-in simulator, whose bookkeeping differs between trees (this
// tree's keeps its parcels and call log in the service's database).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { benchTools, setting, operatorCall, timedCall } from './bench-tools.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { pidJiffies } from './cpu.ts';
import pg from 'pg';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;
const ROUNDS = setting('BENCH_ROUNDS', 7);
const WINDOW_MS = setting('BENCH_WINDOW_SEC', 5) * 1000;
/** Fresh orders per side and round: more than a window can ship (a side that ran out would end its window early). */
const ORDERS_PER_ROUND = setting('BENCH_ORDERS_PER_ROUND', 800);
const IN_FLIGHT = 4;
const COURIER = process.env.BENCH_COURIER === 'standalone' ? 'standalone' : 'built-in';
const TOKEN = 'bench-operator-token-0123456789abcdef';
const RESULTS = path.join(import.meta.dirname, 'RESULTS-exports.md');

const { log, cleanups, createDatabase, run } = benchTools('single-routes', ADMIN_URL, 'merx_bench_single');

interface Rate {
  perSecond: number;
  p50: number;
  /** CPU time per request of the service's process and of its PostgreSQL backends: what load on the machine moves least. */
  serviceCpuMs: number;
  databaseCpuMs: number;
}

interface Side {
  name: string;
  service: ServiceProcess;
  /** The side's own database: its backends' CPU is the side's. */
  database: string;
  key: string;
  /** Orders not shipped yet. */
  orders: string[];
  shipments: Rate[];
  list: Rate[];
}

const operator = (base: string, method: string, route: string, body?: unknown) => operatorCall(base, TOKEN, method, route, body);

/** The jiffies (1/100 s) the service's process and its database's backends have used so far. */
async function cpuJiffies(side: Side, admin: pg.Client): Promise<{ service: number; database: number }> {
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [side.database]);
  return { service: pidJiffies(side.service.pid) ?? 0, database: rows.reduce((sum, r) => sum + (pidJiffies(r.pid) ?? 0), 0) };
}

/** Requests until `deadline`, IN_FLIGHT at a time: requests per second, the median latency and the CPU per request. */
async function measureUntil(
  side: Side,
  admin: pg.Client,
  deadline: number,
  send: () => Promise<{ status: number; ms: number }> | null,
  expected: number,
): Promise<Rate> {
  const latencies: number[] = [];
  const cpuBefore = await cpuJiffies(side, admin);
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
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await cpuJiffies(side, admin);
  // A backend that closed during the window takes its jiffies with it: the database figure is a floor.
  const perRequestMs = (jiffies: number) => (Math.max(0, jiffies) * 10) / latencies.length;
  return {
    perSecond: latencies.length / seconds,
    p50: median(latencies),
    serviceCpuMs: perRequestMs(cpuAfter.service - cpuBefore.service),
    databaseCpuMs: perRequestMs(cpuAfter.database - cpuBefore.database),
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** `merx courier-sim` as a child process: the settings that point a service at it. */
async function startStandaloneCourier(): Promise<Record<string, string>> {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, '..', 'src', 'cli.ts'), 'courier-sim', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanups.push({ name: 'stop the courier simulator', run: async () => void child.kill() });
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8')));
    child.once('exit', (code) => reject(new Error(`the courier simulator exited (${code})`)));
  });
  const settings = Object.fromEntries([...line.matchAll(/(COURIER_[A-Z]_URL)=(\S+?),?(?=\s|,|$)/g)].map((m) => [m[1], m[2]]));
  if (!settings.COURIER_A_URL) throw new Error(`unexpected courier simulator output: ${line}`);
  log(`courier simulator: ${line.trim()}`);
  return { COURIER_MODE: 'live', ...settings };
}

async function startSide(name: string, courierEnv: Record<string, string>, main?: string): Promise<Side> {
  const databaseUrl = await createDatabase();
  const service = await startServiceProcess(databaseUrl, TOKEN, { main, env: { RATE_LIMIT_REST_PER_MINUTE: '100000000', ...courierEnv } });
  cleanups.push({ name: `stop ${name}`, run: () => service.stop() });
  const base = service.url;
  const account = (await operator(base, 'POST', '/accounts', { name: `Bench ${name}`, email: `bench-${name}@example.com` })).data;
  // A live courier needs its credentials: the standalone simulator's demo token (the built-in one is given it by the service).
  const credentials = COURIER === 'standalone' ? { credentials: { api_token: 'sim_a_demo_token' } } : {};
  await operator(base, 'PUT', `/accounts/${account.id}/couriers/courier_a`, { enabled: true, ...credentials });
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
  return { name, service, database: new URL(databaseUrl).pathname.slice(1), key, orders, shipments: [], list: [] };
}

/** One window of each route, both sides loaded at once. */
async function round(sides: Side[], admin: pg.Client): Promise<void> {
  let deadline = performance.now() + WINDOW_MS;
  const shipped = await Promise.all(
    sides.map((side) => {
      const batch = side.orders.splice(0, ORDERS_PER_ROUND);
      return measureUntil(
        side,
        admin,
        deadline,
        () => (batch.length ? timedCall(side.service.url, side.key, 'POST', '/api/v1/shipments', { order_id: batch.pop() }) : null),
        201,
      );
    }),
  );
  deadline = performance.now() + WINDOW_MS;
  const listed = await Promise.all(
    sides.map((side) => measureUntil(side, admin, deadline, () => timedCall(side.service.url, side.key, 'GET', '/api/v1/orders?limit=50'), 200)),
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
  const courierEnv = COURIER === 'standalone' ? await startStandaloneCourier() : {};
  const sides = [await startSide('this tree', courierEnv), await startSide('before', courierEnv, path.join(BEFORE_DIR, 'src', 'main.ts'))];
  const [after, before] = sides;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  cleanups.push({ name: 'close the admin connection', run: () => admin.end() });
  for (let r = 1; r <= ROUNDS; r++) {
    await round(sides, admin);
    log(
      `round ${r}: ${sides.map((s) => `${s.name} ${s.shipments.at(-1)!.perSecond.toFixed(1)} shipments/s, list ${s.list.at(-1)!.perSecond.toFixed(0)}/s`).join('; ')}`,
    );
  }
  const percent = (ratio: number) => `${((ratio - 1) * 100).toFixed(1)}%`;
  /** The median of the windows' ratios of this tree to before, and each window's. */
  const change = (pick: (s: Side) => Rate[], measure: (r: Rate) => number) => {
    const ratios = pick(after).map((m, i) => measure(m) / measure(pick(before)[i]));
    return `**${percent(median(ratios))}** (${ratios.map(percent).join(', ')})`;
  };
  const row = (label: string, pick: (s: Side) => Rate[]) => {
    const of = (s: Side, measure: (r: Rate) => number) => median(pick(s).map(measure));
    const side = (s: Side) =>
      `${of(s, (m) => m.perSecond).toFixed(1)} /s, p50 ${of(s, (m) => m.p50).toFixed(1)} ms; CPU ${of(s, (m) => m.serviceCpuMs).toFixed(2)} + ${of(s, (m) => m.databaseCpuMs).toFixed(2)} ms`;
    return `| ${label} | ${side(before)} | ${side(after)} | ${change(pick, (m) => m.perSecond)} | ${change(pick, (m) => m.serviceCpuMs + m.databaseCpuMs)} |`;
  };
  const section = [
    `## ${new Date().toISOString().slice(0, 16)}Z: the single routes beside the tree before batches and exports, both loaded at once (bench/single-routes.ts)`,
    '',
    `- This tree: ${commit(path.join(import.meta.dirname, '..'))}; before: ${commit(BEFORE_DIR)}.`,
    `- ${os.cpus().length} cores, load ${loadBefore.toFixed(1)} before and ${os.loadavg()[0].toFixed(1)} after; both services on PostgreSQL on this machine, each on its own fresh database with the same seed.`,
    `- ${ROUNDS} rounds; in each, both sides at once for ${WINDOW_MS / 1000} s of POST /api/v1/shipments (fresh orders, courier_a, ${COURIER === 'standalone' ? 'one courier simulator of this tree in its own process for both' : "each service's built-in simulator"}), then ${WINDOW_MS / 1000} s of GET /api/v1/orders?limit=50; ${IN_FLIGHT} requests in flight per side. Rates, p50 and CPU per request (the service's process + its database's backends): medians of the rounds; changes: the median of the rounds' ratios (each round's in brackets).`,
    '',
    '| route | before | this tree | change in rate | change in CPU per request |',
    '| --- | --- | --- | --- | --- |',
    row('POST /api/v1/shipments', (s) => s.shipments),
    row('GET /api/v1/orders?limit=50', (s) => s.list),
    '',
  ].join('\n');
  fs.appendFileSync(RESULTS, `${section}\n`);
  log(`\n${section}`);
});
