// npm run bench:inventory — stock movement writes per second on PostgreSQL:
// POST /api/v1/inventory/movements over HTTP (service in a child process,
// autocannon as the client) next to the same applyMovement transaction run
// directly through a pg pool, at the same concurrency, on one hot product
// (every write waits for the same row lock) and spread over many products.
// Writes bench/RESULTS-inventory.md; the database and the child are removed.
// Self-contained on purpose: bench/run.ts (orders) is maintained separately.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { openDb } from '../src/platform/db/open-db.ts';
import type { Db } from '../src/platform/db/db.ts';
import { generateApiKey } from '../src/platform/edge/auth.ts';
import { applyMovement, type MovementInput } from '../src/modules/inventory/movements.ts';
import { benchTools, setting } from './bench-tools.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const CONNECTIONS = setting('BENCH_CONNECTIONS', 20);
const SECONDS = setting('BENCH_SECONDS', 10);
const WARMUP_SECONDS = setting('BENCH_WARMUP_SECONDS', 2);
const PRODUCTS = setting('BENCH_PRODUCTS', 1000);
const KEY_COUNT = setting('BENCH_KEYS', 2000);
const INITIAL_STOCK = 1_000_000_000;
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-inventory.md');
const MAIN = path.join(import.meta.dirname, '..', 'src', 'main.ts');
const SCOPES = ['inventory:read', 'inventory:write', 'products:read'];

const { log, cleanups, createDatabase, run } = benchTools('bench:inventory', ADMIN_URL, 'merx_bench_inv');

/** The service as a child process (node src/main.ts) so autocannon never shares its event loop. */
function startService(databaseUrl: string, adminToken: string): Promise<{ url: string; pid: number }> {
  const child: ChildProcess = spawn(process.execPath, [MAIN], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', SEED_DEMO: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-20_000));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  cleanups.push({
    name: 'stop service',
    run: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => (clearTimeout(force), resolve()));
        child.kill('SIGTERM');
      }),
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in 60 s:\n${output}`)), 60_000);
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`service exited with ${code}:\n${output}`))));
    const watch = () => {
      const match = /API\s+(http:\/\/\S+)\/api\/v1/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', watch);
      resolve({ url: match[1], pid: child.pid! });
    };
    child.stdout!.on('data', watch);
  });
}

async function operatorCall(base: string, token: string, method: string, route: string, body?: unknown) {
  const res = await fetch(`${base}/admin/api${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`operator ${method} ${route} -> ${res.status} ${text}`);
  return JSON.parse(text);
}

/** Extra keys straight into the table: the REST limit is 300 requests per minute per key, so the load rotates over many. */
async function addKeys(db: Db, accountId: string, count: number): Promise<string[]> {
  const keys = Array.from({ length: count }, () => generateApiKey());
  await db.query(
    `INSERT INTO api_keys (id, account_id, name, prefix, key_hash, scopes)
     SELECT k.id, $1, 'bench-inventory-' || k.n, k.prefix, k.hash, $5::text[]
       FROM unnest($2::uuid[], $3::text[], $4::text[]) WITH ORDINALITY AS k(id, prefix, hash, n)`,
    [accountId, keys.map(() => crypto.randomUUID()), keys.map((k) => k.prefix), keys.map((k) => k.hash), SCOPES],
  );
  return keys.map((k) => k.key);
}

interface Stats {
  writes: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  failures: number;
  failureDetail: string;
}

function summarise(latencies: number[], seconds: number, failures: number, failureDetail: string): Stats {
  const sorted = Float64Array.from(latencies).sort();
  const pct = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN);
  return { writes: latencies.length, seconds, perSecond: latencies.length / seconds, p50: pct(50), p99: pct(99), failures, failureDetail };
}

/** Alternates a delivery with a unit cost (the weighted-average path) and a -1 correction (the negative-stock check). */
function movementFor(n: number, productId: string): MovementInput {
  return n % 2 === 0 ? { productId, type: 'delivery', qty: 2, unitCost: 3.5 } : { productId, type: 'correction', qty: -1 };
}
const bodyOf = (m: MovementInput) =>
  JSON.stringify({ product_id: m.productId, type: m.type, qty: m.qty, ...(m.unitCost != null ? { unit_cost: m.unitCost } : {}) });

function autocannonRun(base: string, nextKey: () => string, nextMovement: () => MovementInput, seconds: number, latencies: number[] | null) {
  const statuses = new Map<number, number>();
  return new Promise<{ seconds: number; statuses: Map<number, number>; errors: number }>((resolve, reject) => {
    const instance = autocannon(
      {
        url: base,
        connections: CONNECTIONS,
        duration: seconds,
        pipelining: 1,
        timeout: 30,
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => ({
              ...request,
              path: '/api/v1/inventory/movements',
              headers: { ...request.headers, 'content-type': 'application/json', authorization: `Bearer ${nextKey()}` },
              body: bodyOf(nextMovement()),
            }),
          },
        ],
      },
      (err, result) =>
        err ? reject(err) : resolve({ seconds: (result.finish.getTime() - result.start.getTime()) / 1000, statuses, errors: result.errors }),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
      if (latencies && statusCode === 201) latencies.push(responseTime);
    });
  });
}

async function overHttp(base: string, nextKey: () => string, nextMovement: () => MovementInput): Promise<Stats> {
  if (WARMUP_SECONDS > 0) await autocannonRun(base, nextKey, nextMovement, WARMUP_SECONDS, null);
  const latencies: number[] = [];
  const run = await autocannonRun(base, nextKey, nextMovement, SECONDS, latencies);
  const bad = [...run.statuses].filter(([status]) => status !== 201);
  const failures = bad.reduce((sum, [, n]) => sum + n, 0) + run.errors;
  const detail = [...bad.map(([status, n]) => `${n}x HTTP ${status}`), ...(run.errors ? [`${run.errors} connection errors`] : [])].join(', ');
  return summarise(latencies, run.seconds, failures, detail);
}

async function closedLoop(call: () => Promise<unknown>, seconds: number, latencies: number[] | null) {
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  let failures = 0;
  let firstError = '';
  const caller = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await call();
        latencies?.push(performance.now() - t0);
      } catch (err) {
        failures++;
        firstError ||= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, caller));
  return { seconds: (performance.now() - started) / 1000, failures, firstError };
}

async function direct(db: Db, accountId: string, nextMovement: () => MovementInput): Promise<Stats> {
  const call = () => db.tx((tx) => applyMovement(tx, accountId, nextMovement()));
  if (WARMUP_SECONDS > 0) await closedLoop(call, WARMUP_SECONDS, null);
  const latencies: number[] = [];
  const run = await closedLoop(call, SECONDS, latencies);
  return summarise(latencies, run.seconds, run.failures, run.failures ? `${run.failures} errors, first: ${run.firstError}` : '');
}

function roundRobin<T>(items: readonly T[]): () => T {
  let next = 0;
  return () => items[next++ % items.length];
}

/** The issue's check query: products (and variants) whose stock differs from the sum of their movements. */
async function ledgerMismatches(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM products p
       LEFT JOIN (SELECT product_id, sum(qty) AS total FROM stock_movements GROUP BY product_id) m ON m.product_id = p.id
      WHERE coalesce(p.stock_quantity, 0) <> coalesce(m.total, 0)`,
  );
  return rows[0].n;
}

interface Row {
  scenario: string;
  side: string;
  stats: Stats;
}

function render(env: Record<string, string>, rows: Row[], ledger: { movements: number; mismatches: number }, totalSeconds: number): string {
  const f = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
  const lines = [
    '# Inventory benchmark: stock movement writes',
    '',
    'Written by `npm run bench:inventory` (`node bench/inventory.ts`); do not edit by hand, rerun instead.',
    '',
    '## Environment',
    '',
    ...Object.entries(env).map(([k, v]) => `- ${k}: ${v}`),
    '',
    '## Setup',
    '',
    `- A fresh PostgreSQL database; the service runs as a child process (\`node src/main.ts\`, LOG_LEVEL=warn), so autocannon does not share its event loop.`,
    `- One account, ${PRODUCTS} + 1 products created through the operator API with ${INITIAL_STOCK.toLocaleString('en-US')} units each (written to the ledger as an initial correction), so no correction is ever refused.`,
    `- ${KEY_COUNT} API keys (scopes ${SCOPES.join(', ')}) rotated per request: the REST limit is 300 requests per minute per key.`,
    `- Each writer alternates \`delivery\` qty 2 with unit_cost 3.5 (weighted average cost path) and \`correction\` qty -1 (negative-stock check).`,
    `- ${CONNECTIONS} concurrent writers, closed loop (next request when the previous answers), ${WARMUP_SECONDS} s unmeasured warm-up then ${SECONDS} s measured, per scenario and side.`,
    '- **HTTP**: autocannon POSTs `/api/v1/inventory/movements` (auth, rate limit, validation, one transaction, JSON answer; 201 only counts).',
    '- **direct**: the same `applyMovement` (src/modules/inventory/movements.ts) inside `db.tx` on a `Db` from `openDb` (src/platform/db/db.ts): the same pg pool size (10) as the service, no HTTP.',
    '- **hot product**: every write locks the same product row (`SELECT … FOR UPDATE`), so writes serialize on it.',
    `- **${PRODUCTS} products**: writes go round-robin over ${PRODUCTS} products, so row locks rarely collide.`,
    '',
    '## Results',
    '',
    '| scenario | side | writes/s | p50 ms | p99 ms | writes | failures |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.side} | ${f(r.stats.perSecond, 0)} | ${f(r.stats.p50)} | ${f(r.stats.p99)} | ${r.stats.writes} | ${r.stats.failures}${r.stats.failureDetail ? ` (${r.stats.failureDetail})` : ''} |`,
    ),
    '',
    '## Ledger check after the run',
    '',
    `- Movements written (initial stock included): ${ledger.movements.toLocaleString('en-US')}.`,
    `- Products whose stock differs from the sum of their movements: **${ledger.mismatches}**.`,
    '',
    `Total run time ${totalSeconds.toFixed(0)} s. The service, autocannon and PostgreSQL share the machine's cores; other load lowers every number (see the load averages above).`,
    '',
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const started = performance.now();
  const loadBefore = os.loadavg()[0];
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const databaseUrl = await createDatabase();
  const service = await startService(databaseUrl, adminToken);
  log(`service pid ${service.pid} at ${service.url}`);

  const account = (await operatorCall(service.url, adminToken, 'POST', '/accounts', { name: 'Bench inventory', email: 'bench@example.com' })).data;
  const create = async (i: number) =>
    (
      await operatorCall(service.url, adminToken, 'POST', `/accounts/${account.id}/products`, {
        name: `Bench ${i}`,
        price: 10,
        sku: `B-${i}`,
        stock_quantity: INITIAL_STOCK,
      })
    ).data.id as string;
  const hot = await create(0);
  const spread: string[] = [];
  for (let i = 1; i <= PRODUCTS; i++) spread.push(await create(i));
  log(`${PRODUCTS + 1} products`);

  const db = await openDb({ databaseUrl, dataDir: '' });
  cleanups.push({ name: 'close direct pool', run: () => db.close() });
  const nextKey = roundRobin(await addKeys(db, account.id, KEY_COUNT));
  await db.query('VACUUM (ANALYZE)');

  let n = 0;
  const hotMovement = () => movementFor(n++, hot);
  const nextProduct = roundRobin(spread);
  const spreadMovement = () => movementFor(n++, nextProduct());
  const rows: Row[] = [];
  for (const [scenario, next] of [
    ['one hot product', hotMovement],
    [`${PRODUCTS} products`, spreadMovement],
  ] as const) {
    const http = await overHttp(service.url, nextKey, next);
    rows.push({ scenario, side: 'HTTP', stats: http });
    const raw = await direct(db, account.id, next);
    rows.push({ scenario, side: 'direct', stats: raw });
    log(
      `${scenario}: HTTP ${http.perSecond.toFixed(0)}/s p50 ${http.p50.toFixed(2)} p99 ${http.p99.toFixed(2)} | direct ${raw.perSecond.toFixed(0)}/s p50 ${raw.p50.toFixed(2)} p99 ${raw.p99.toFixed(2)}` +
        (http.failures || raw.failures ? ` | FAILURES ${http.failureDetail} ${raw.failureDetail}` : ''),
    );
  }

  await new Promise((resolve) => setTimeout(resolve, 1000)); // let writes still in flight when autocannon stopped commit
  const mismatches = await ledgerMismatches(db);
  const movements = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM stock_movements')).rows[0].n;
  log(`ledger check: ${mismatches} mismatching products over ${movements} movements`);

  const cpus = os.cpus();
  const version = (await db.query<{ v: string }>('SELECT version() AS v')).rows[0].v;
  const { rows: settings } = await db.query<{ name: string; setting: string; unit: string | null }>(
    `SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers', 'max_connections', 'synchronous_commit', 'fsync', 'wal_level') ORDER BY name`,
  );
  const autocannonVersion = JSON.parse(
    fs.readFileSync(path.join(import.meta.dirname, '..', 'node_modules', 'autocannon', 'package.json'), 'utf8'),
  ).version;
  const env = {
    date: new Date().toISOString(),
    machine: `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    postgres: version.split(' on ')[0],
    'postgres settings': settings.map((r) => `${r.name}=${r.setting}${r.unit ? ` (${r.unit})` : ''}`).join(', '),
    autocannon: autocannonVersion,
    'load average (1 min) before / after': `${loadBefore.toFixed(2)} / ${os.loadavg()[0].toFixed(2)}`,
  };
  fs.writeFileSync(RESULTS_FILE, render(env, rows, { movements, mismatches }, (performance.now() - started) / 1000));
  log(`wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
  if (mismatches || rows.some((r) => r.stats.failures)) process.exitCode = 1;
}

await run(main);
