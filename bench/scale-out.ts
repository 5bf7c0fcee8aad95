// npm run bench:scale-out (issue 32): what PgBouncer and a read replica cost
// and what each request costs each part, in one run on one machine. Needs
// PgBouncer (transaction pooling) on BENCH_POOLER_PORT and a streaming replica
// of the cluster on BENCH_REPLICA_PORT: `.ci/pooler-and-replica up` starts both.
// Three services on one database, side by side, alternating, 3 rounds:
//   direct   DATABASE_URL = PostgreSQL (named prepared statements, as before)
//   pooled   DATABASE_URL = PgBouncer, DATABASE_DIRECT_URL = PostgreSQL (no prepared statements)
//   replica  DATABASE_URL = PostgreSQL, DATABASE_READ_URLS = the replica (reads there, read-your-writes marks)
// For each: the order list's first page, an order by id, and a PATCH; req/s,
// p50/p99, and CPU per request of the service, the primary's backends, the
// replica's backends and PgBouncer (jiffies from /proc). Appends a section to
// bench/RESULTS-scale-out.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import autocannon from 'autocannon';
import { openDb } from '../src/platform/db/open-db.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { addBenchKeys, addShipments, provisionAndSeed, settle } from './fixtures.ts';
import { roundRobin } from './load.ts';
import { benchTools, setting } from './bench-tools.ts';
import { pidJiffies } from './cpu.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const POOLER_PORT = setting('BENCH_POOLER_PORT', 6432);
const REPLICA_PORT = setting('BENCH_REPLICA_PORT', 5433);
const ORDERS = setting('BENCH_ORDERS', 20_000);
const CONNECTIONS = setting('BENCH_CONNECTIONS', 50);
const SECONDS = setting('BENCH_SECONDS', 6);
const ROUNDS = setting('BENCH_ROUNDS', 3);
const KEYS = setting('BENCH_KEYS', 200);
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-scale-out.md');

const { log, cleanups, createDatabase, run } = benchTools('scale-out', ADMIN_URL, 'merx_scaleout');

type Part = 'service' | 'primary' | 'replica' | 'pgbouncer';
interface Side {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU ms per answered request, by part. */
  cpu: Record<Part, number>;
}

/**
 * The processes of a part: PgBouncer by name; on each cluster the backends
 * serving the bench's database, by their process title ("postgres: 15/main:
 * postgres <database> ..."). The clusters' shared processes (WAL writer,
 * checkpointer, the replica's replay) serve every database on a shared machine
 * and are left out: the figures are the backends' work.
 */
function pidsOf(part: Exclude<Part, 'service'>, database: string): number[] {
  const pids: number[] = [];
  const replicaCluster = process.env.REPLICA_CLUSTER || 'merx_replica';
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue;
    }
    const backend = cmd.startsWith('postgres: ') && cmd.includes(` ${database} `);
    const matches =
      part === 'pgbouncer'
        ? /(^|\/)pgbouncer /.test(cmd)
        : part === 'replica'
          ? backend && cmd.includes(`/${replicaCluster}:`)
          : backend && !cmd.includes(`/${replicaCluster}:`);
    if (matches) pids.push(Number(entry));
  }
  return pids;
}

type Snapshot = Record<Part, Map<number, number>>;

function perPid(pids: number[]): Map<number, number> {
  const map = new Map<number, number>();
  for (const pid of pids) {
    const j = pidJiffies(pid);
    if (j !== null) map.set(pid, j);
  }
  return map;
}

let database = '';

function cpuSnapshot(service: ServiceProcess): Snapshot {
  const of = (part: Exclude<Part, 'service'>) => perPid(pidsOf(part, database));
  return { service: perPid([service.pid]), primary: of('primary'), replica: of('replica'), pgbouncer: of('pgbouncer') };
}

/** Jiffies a part used between two snapshots: processes that started count from 0; those that ended are lost (backends live as long as the pools). */
function used(before: Snapshot, after: Snapshot, part: Part): number {
  let sum = 0;
  for (const [pid, j] of after[part]) sum += j - (before[part].get(pid) ?? 0);
  return sum;
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

interface Load {
  method: 'GET' | 'PATCH';
  nextPath: () => string;
  body?: () => string;
}

function runHttp(service: ServiceProcess, load: Load, nextKey: () => string): Promise<Side> {
  const latencies: number[] = [];
  const failures = new Map<number, number>();
  const before = cpuSnapshot(service);
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: service.url,
        connections: CONNECTIONS,
        duration: SECONDS,
        timeout: 30,
        requests: [
          {
            method: load.method,
            setupRequest: (request) => ({
              ...request,
              path: load.nextPath(),
              ...(load.body ? { body: load.body() } : {}),
              headers: { ...request.headers, authorization: `Bearer ${nextKey()}`, ...(load.body ? { 'content-type': 'application/json' } : {}) },
            }),
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        if (failures.size || result.errors)
          return reject(
            new Error(`${service.url}: non-2xx answers ${JSON.stringify(Object.fromEntries(failures))}, ${result.errors} connection errors`),
          );
        const after = cpuSnapshot(service);
        const sorted = Float64Array.from(latencies).sort();
        const elapsed = (result.finish.getTime() - result.start.getTime()) / 1000;
        const per = (part: Part) => (used(before, after, part) * 10) / sorted.length;
        resolve({
          reqPerSec: sorted.length / elapsed,
          p50Ms: percentile(sorted, 50),
          p99Ms: percentile(sorted, 99),
          cpu: { service: per('service'), primary: per('primary'), replica: per('replica'), pgbouncer: per('pgbouncer') },
        });
      },
    );
    instance.on('response', (_client, status, _bytes, ms) =>
      status >= 200 && status < 300 ? latencies.push(ms) : failures.set(status, (failures.get(status) ?? 0) + 1),
    );
  });
}

async function main(): Promise<void> {
  const started = new Date();
  const loadBefore = os.loadavg()[0];
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const primaryUrl = await createDatabase();
  const name = new URL(primaryUrl).pathname.slice(1);
  database = name;
  const at = (port: number) => {
    const url = new URL(primaryUrl);
    url.port = String(port);
    return url.toString();
  };
  // Load shedding off: the machine is shared, and a shed request is not what this measures.
  const common = {
    OVERLOAD_SHEDDING: '0',
    RATE_LIMIT_REST_PER_MINUTE: '100000000',
    RATE_LIMIT_MCP_PER_MINUTE: '100000000',
    WORKERS: '0',
    DATABASE_DIRECT_URL: '',
    DATABASE_READ_URLS: '',
  };
  const direct = await startServiceProcess(primaryUrl, adminToken, { env: common });
  cleanups.push({ name: 'stop direct', run: () => direct.stop() });
  log(`seeding ${ORDERS.toLocaleString('en-US')} orders into ${name}…`);
  const tenant = await provisionAndSeed(direct.url, adminToken, { orders: ORDERS, products: 200, customers: Math.max(100, ORDERS / 4) });
  const db = await openDb({ databaseUrl: primaryUrl, dataDir: '' });
  cleanups.push({ name: 'close pool', run: () => db.close() });
  const keys = roundRobin([tenant.key, ...(await addBenchKeys(db, tenant.accountId, KEYS - 1))]);
  await addShipments(db, tenant.accountId);
  await settle(db);
  const pooled = await startServiceProcess(at(POOLER_PORT), adminToken, { env: { ...common, DATABASE_DIRECT_URL: primaryUrl } });
  cleanups.push({ name: 'stop pooled', run: () => pooled.stop() });
  const replicated = await startServiceProcess(primaryUrl, adminToken, { env: { ...common, DATABASE_READ_URLS: at(REPLICA_PORT) } });
  cleanups.push({ name: 'stop replica-routed', run: () => replicated.stop() });
  const ids = (
    await db.query<{ id: string }>('SELECT id FROM orders WHERE account_id = $1 ORDER BY md5(id::text) LIMIT 2000', [tenant.accountId])
  ).rows.map((r) => r.id);
  const nextId = roundRobin(ids);
  const services: Array<[string, ServiceProcess]> = [
    ['direct', direct],
    ['PgBouncer', pooled],
    ['replica', replicated],
  ];
  const loads: Array<[string, Load]> = [
    ['GET /api/v1/orders?limit=50 (a page)', { method: 'GET', nextPath: () => '/api/v1/orders?limit=50' }],
    ['GET /api/v1/orders/{id}', { method: 'GET', nextPath: () => `/api/v1/orders/${nextId()}` }],
    [
      'PATCH /api/v1/orders/{id} {admin_notes} (a write)',
      {
        method: 'PATCH',
        nextPath: () => `/api/v1/orders/${nextId()}`,
        body: () => JSON.stringify({ admin_notes: `n${crypto.randomBytes(4).toString('hex')}` }),
      },
    ],
  ];
  // Warm every pool and plan cache.
  for (const [, service] of services) for (const [, load] of loads) await runHttp(service, load, keys);
  const measured = new Map<string, Side[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [loadName, load] of loads) {
      const order = round % 2 === 0 ? services : [...services].reverse();
      for (const [serviceName, service] of order) {
        const side = await runHttp(service, load, keys);
        const key = `${loadName}|${serviceName}`;
        measured.set(key, [...(measured.get(key) ?? []), side]);
        log(
          `round ${round + 1} ${loadName} ${serviceName}: ${side.reqPerSec.toFixed(0)}/s p99 ${side.p99Ms.toFixed(1)} ms, CPU ms/req ${JSON.stringify(Object.fromEntries(Object.entries(side.cpu).map(([k, v]) => [k, Number(v.toFixed(3))])))}`,
        );
        for (const [, s] of services) if (s.death()) throw new Error(s.death()!);
      }
    }
  }
  const cpus = os.cpus();
  const version = (await db.query<{ v: string }>('SELECT version() AS v')).rows[0].v.split(' on ')[0];
  const f = (n: number, digits = 0) => n.toFixed(digits);
  const rows: string[] = [];
  for (const [loadName] of loads) {
    const base = median(measured.get(`${loadName}|direct`)!.map((s) => s.reqPerSec));
    for (const [serviceName] of services) {
      const sides = measured.get(`${loadName}|${serviceName}`)!;
      const m = (pick: (s: Side) => number) => median(sides.map(pick));
      const rate = m((s) => s.reqPerSec);
      rows.push(
        `| ${loadName} | ${serviceName} | ${f(rate)} (${sides.map((s) => f(s.reqPerSec)).join(', ')}) | ${f((rate / base) * 100)}% | ${f(
          m((s) => s.p50Ms),
          1,
        )} / ${f(
          m((s) => s.p99Ms),
          1,
        )} | ` +
          `${f(
            m((s) => s.cpu.service),
            3,
          )} | ${f(
            m((s) => s.cpu.primary),
            3,
          )} | ${f(
            m((s) => s.cpu.replica),
            3,
          )} | ${f(
            m((s) => s.cpu.pgbouncer),
            3,
          )} |`,
      );
    }
  }
  const section = [
    `## ${started.toISOString()}`,
    '',
    `- Machine: ${cpus.length} × ${cpus[0]?.model.trim()}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB; ${version}; PgBouncer 1.18 (transaction pooling); Node ${process.version}. Load average (1 min) before: ${loadBefore.toFixed(2)}, after: ${os.loadavg()[0].toFixed(2)}.`,
    `- One database, ${ORDERS.toLocaleString('en-US')} orders in one account (the seed endpoint, plus shipments); three services on it, each a child process with a pool of its default size; ${CONNECTIONS} autocannon connections; ${ROUNDS} rounds of ${SECONDS} s per cell, the services' order alternating per round; medians (per-round rates in brackets). Keys rotate over ${KEYS}; rate limits raised; workers off.`,
    "- direct: `DATABASE_URL` = PostgreSQL (named prepared statements). PgBouncer: `DATABASE_URL` = PgBouncer, `DATABASE_DIRECT_URL` = PostgreSQL (no prepared statements). replica: `DATABASE_URL` = PostgreSQL, `DATABASE_READ_URLS` = a streaming replica on the same machine (reads there after the account's read-your-writes mark is looked up on the primary; every write records a mark).",
    "- CPU per request: user + system jiffies (10 ms) over the cell divided by requests answered: of the service process, of the primary's and the replica's backends serving the bench database (their process titles; the clusters' shared processes, WAL writer, checkpointer, replay, are left out: other databases on this shared machine use them too), and of PgBouncer. Everything shares the 2 cores with whatever else runs (see the load average), so rates compare only within this run; CPU per request is the steadier figure.",
    '',
    '| request | service | req/s | vs direct | p50 / p99 ms | service CPU ms | primary CPU ms | replica CPU ms | PgBouncer CPU ms |',
    '|---|---|---:|---:|---|---:|---:|---:|---:|',
    ...rows,
    '',
  ].join('\n');
  const header =
    '# Past one machine: PgBouncer and a read replica (issue 32)\n\nWritten by `npm run bench:scale-out` (bench/scale-out.ts) with `.ci/pooler-and-replica up` running; each run appends its section.\n\n';
  const existing = fs.existsSync(RESULTS_FILE) ? fs.readFileSync(RESULTS_FILE, 'utf8') : '';
  const sections = existing.includes('\n## ') ? existing.slice(existing.indexOf('\n## ') + 1).trimEnd() : '';
  fs.writeFileSync(RESULTS_FILE, `${header}${sections ? `${sections}\n\n` : ''}${section}`);
  log(`wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
}

await run(main);
