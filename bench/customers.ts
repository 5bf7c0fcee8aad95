// Customer list and segment count benchmark (standalone; not part of `npm run bench`):
//
//   node bench/customers.ts
//   BENCH_ORDERS=5000 BENCH_SECONDS=2 BENCH_WARMUP_SECONDS=1 node bench/customers.ts   # smoke run
//
// Creates a fresh PostgreSQL database, starts the service on it as a child
// process (node src/main.ts), seeds 100k orders for ~30k customers through the
// operator API, then loads GET /api/v1/customers (first page, a broad and a
// narrow q search, a deep offset) and GET /api/v1/segments (the count of a
// computed segment) with autocannon, next to the same SQL replayed directly
// through pg. Writes bench/RESULTS-customers.md with the environment and
// EXPLAIN ANALYZE of every statement, then stops the service and drops the database.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import autocannon from 'autocannon';
import type { Sql } from '../src/platform/db/db.ts';
import { generateApiKey } from '../src/platform/edge/auth.ts';
import { listCustomers } from '../src/modules/customers/queries.ts';
import { listSegments } from '../src/modules/customers/segments.ts';
import { valueOf } from '../src/platform/read-path/json-text.ts';
import { setting } from './bench-tools.ts';
import { EventReactions } from '../src/platform/db/outbox.ts';
import { DocumentCache } from '../src/platform/read-path/document-cache.ts';
import { Keyring } from '../src/platform/edge/secret-box.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SIZE = { orders: setting('BENCH_ORDERS', 100_000), products: 200, customers: setting('BENCH_CUSTOMERS', 30_000) };
const SHAPE = { connections: setting('BENCH_CONNECTIONS', 10), warmup: setting('BENCH_WARMUP_SECONDS', 2), seconds: setting('BENCH_SECONDS', 10) };
const SINGLE_SECONDS = setting('BENCH_SINGLE_SECONDS', 3);
const KEY_COUNT = setting('BENCH_KEYS', 1000);
const ONE_SHOT_TIMEOUT_S = setting('BENCH_ONE_SHOT_TIMEOUT_SECONDS', 60);
/** Per scenario, how long to wait for other work on the machine to stop before measuring. */
const QUIET_WAIT_S = setting('BENCH_QUIET_WAIT_SECONDS', 60);
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-customers.md');
const MAIN = path.join(import.meta.dirname, '..', 'src', 'main.ts');

const log = (m: string) => process.stdout.write(`[customers-bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

// ---------------------------------------------------------------- cleanup

const cleanups: Array<{ name: string; run: () => Promise<void> }> = [];
async function cleanUp() {
  while (cleanups.length) {
    const step = cleanups.pop()!;
    await step.run().catch((err) => log(`cleanup "${step.name}" failed: ${err instanceof Error ? err.message : err}`));
  }
}

async function admin(text: string) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------- the service child process

function startService(databaseUrl: string, adminToken: string): Promise<{ url: string; pid: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', SEED_DEMO: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`service did not start in 60 s:\n${output}`)), 60_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    const onExit = (code: number | null) => fail(new Error(`service exited with ${code}:\n${output}`));
    child.once('exit', onExit);
    const watch = () => {
      const match = /API\s+(http:\/\/\S+)\/api\/v1/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off('data', watch);
      child.off('exit', onExit);
      // A service that dies mid-run says why (the load generator would only see connection errors).
      child.once('exit', (code, signal) => {
        if (!stopping.has(child)) log(`service exited unexpectedly (code ${code}, signal ${signal}); last output:\n${output.slice(-4000)}`);
      });
      resolve({ url: match[1], pid: child.pid!, child });
    };
    child.stdout.on('data', watch);
  });
}

const stopping = new WeakSet<ChildProcess>();

function stopService(child: ChildProcess): Promise<void> {
  stopping.add(child);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function call(base: string, token: string, method: string, p: string, body?: unknown) {
  const res = await fetch(base + p, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p} -> ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

// ---------------------------------------------------------------- CPU share of other processes (Linux /proc)

function jiffies(): { busy: number; total: number } | null {
  try {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fs
      .readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const busy = user + nice + system + irq + softirq + steal;
    return { busy, total: busy + idle + iowait };
  } catch {
    return null;
  }
}
function pidJiffies(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return null;
  }
}
/** Cores' worth of CPU used outside the bench (this process, the service, the bench database's backends) while `run` ran. */
async function otherCores<T>(pids: () => Promise<number[]>, run: () => Promise<T>): Promise<{ result: T; other: number | null }> {
  const cores = os.cpus().length;
  const ids = await pids();
  const m0 = jiffies();
  const p0 = ids.map(pidJiffies);
  const result = await run();
  const m1 = jiffies();
  // Only processes alive at both ends count (a backend that exited would read as negative use).
  const benchJiffies = ids.reduce((sum, id, i) => {
    const end = pidJiffies(id);
    return p0[i] === null || end === null ? sum : sum + (end - p0[i]);
  }, 0);
  if (!m0 || !m1 || m1.total === m0.total) return { result, other: null };
  const busyCores = ((m1.busy - m0.busy) / (m1.total - m0.total)) * cores;
  const benchCores = (benchJiffies / (m1.total - m0.total)) * cores;
  return { result, other: Math.max(0, busyCores - benchCores) };
}
async function waitForQuiet(maxSeconds: number): Promise<number | null> {
  const until = Date.now() + maxSeconds * 1000;
  let busy: number | null = null;
  do {
    const a = jiffies();
    await new Promise((r) => setTimeout(r, 1000));
    const b = jiffies();
    if (!a || !b) return null;
    busy = ((b.busy - a.busy) / (b.total - a.total)) * os.cpus().length;
    if (busy < 0.3) return busy;
  } while (Date.now() < until);
  return busy;
}

// ---------------------------------------------------------------- load

interface Stats {
  requests: number;
  reqPerSec: number;
  p50: number;
  p99: number;
  failures: string;
  other: number | null;
}

function summarise(latencies: number[], seconds: number, failures: string, other: number | null): Stats {
  const sorted = Float64Array.from(latencies).sort();
  const pct = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN);
  return { requests: latencies.length, reqPerSec: latencies.length / seconds, p50: pct(50), p99: pct(99), failures, other };
}

function autocannonRun(base: string, p: string, nextKey: () => string, connections: number, seconds: number, latencies: number[] | null) {
  const statuses = new Map<number, number>();
  return new Promise<{ seconds: number; failures: string }>((resolve, reject) => {
    const instance = autocannon(
      {
        url: base,
        connections,
        duration: seconds,
        pipelining: 1,
        timeout: 30,
        requests: [{ method: 'GET', setupRequest: (r) => ({ ...r, path: p, headers: { ...r.headers, authorization: `Bearer ${nextKey()}` } }) }],
      },
      (err, result) => {
        if (err) return reject(err);
        const bad = [...statuses].filter(([s]) => s < 200 || s >= 300).map(([s, n]) => `${n}x HTTP ${s}`);
        if (result.errors) bad.push(`${result.errors} errors`);
        resolve({ seconds: (result.finish.getTime() - result.start.getTime()) / 1000, failures: bad.join(', ') });
      },
    );
    instance.on('response', (_c, status, _b, ms) => {
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (latencies && status >= 200 && status < 300) latencies.push(ms);
    });
  });
}

async function loadApi(
  base: string,
  p: string,
  nextKey: () => string,
  connections: number,
  seconds: number,
  pids: () => Promise<number[]>,
): Promise<Stats> {
  if (SHAPE.warmup > 0) await autocannonRun(base, p, nextKey, connections, SHAPE.warmup, null);
  const latencies: number[] = [];
  const { result, other } = await otherCores(pids, () => autocannonRun(base, p, nextKey, connections, seconds, latencies));
  return summarise(latencies, result.seconds, result.failures, other);
}

async function closedLoop(fn: () => Promise<unknown>, connections: number, seconds: number, latencies: number[] | null) {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let failures = 0;
  let first = '';
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await fn();
          latencies?.push(performance.now() - t0);
        } catch (err) {
          failures++;
          first ||= err instanceof Error ? err.message : String(err);
        }
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, failures: failures ? `${failures} errors, first: ${first}` : '' };
}

async function loadRaw(fn: () => Promise<unknown>, connections: number, seconds: number, pids: () => Promise<number[]>): Promise<Stats> {
  if (SHAPE.warmup > 0) await closedLoop(fn, connections, SHAPE.warmup, null);
  const latencies: number[] = [];
  const { result, other } = await otherCores(pids, () => closedLoop(fn, connections, seconds, latencies));
  return summarise(latencies, result.seconds, result.failures, other);
}

// ---------------------------------------------------------------- the service's SQL, captured

interface Statement {
  text: string;
  params: unknown[];
}

/** A Sql that runs every statement on the pool and records it: the exact SQL the service sends for that call. */
function recorder(pool: pg.Pool, seen: Statement[]): Sql {
  return {
    reactions: new EventReactions(),
    documentCache: new DocumentCache(),
    keyring: new Keyring(),
    query: async (text: string, params: unknown[] = []) => {
      seen.push({ text, params });
      const res = await pool.query(text, params as any[]);
      return { rows: res.rows, rowCount: res.rowCount ?? 0 };
    },
    exec: async () => {
      throw new Error('not expected');
    },
    afterCommit: (task: () => void) => task(),
  } as Sql;
}

async function capture(pool: pg.Pool, use: (sql: Sql) => Promise<unknown>): Promise<{ statements: Statement[]; result: any }> {
  const statements: Statement[] = [];
  const result = await use(recorder(pool, statements));
  return { statements, result };
}

/** Replays the captured statements on the pool: `parallel` as listCustomers sends them (page and count together), else one after another as listSegments does. */
function replay(pool: pg.Pool, statements: Statement[], parallel: boolean): () => Promise<unknown> {
  if (parallel) return () => Promise.all(statements.map((s) => pool.query(s.text, s.params as any[])));
  return async () => {
    for (const s of statements) await pool.query(s.text, s.params as any[]);
  };
}

interface Plan {
  name: string;
  sql: string;
  params: string;
  plan: string;
  executionMs: number;
  seqScans: string[];
}

async function explain(pool: pg.Pool, name: string, s: Statement): Promise<Plan> {
  // Warm once, then explain (the numbers are a warm cache's, like the load runs').
  await pool.query(s.text, s.params as any[]);
  const { rows } = await pool.query(`EXPLAIN (ANALYZE, BUFFERS) ${s.text}`, s.params as any[]);
  const plan = rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  const executionMs = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN);
  const seqScans = [...plan.matchAll(/Seq Scan on (\w+)/g)].map((m) => m[1]);
  return { name, sql: s.text.replace(/\s+/g, ' ').trim(), params: JSON.stringify(s.params), plan, executionMs, seqScans };
}

// ---------------------------------------------------------------- main

interface Scenario {
  name: string;
  request: string;
  api: Stats;
  raw: Stats;
  single: Stats;
  statements: number;
  note: string;
}

const fmt = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '–');
const cores = (n: number | null) => (n === null ? '?' : n.toFixed(2));

async function main() {
  const started = performance.now();
  const loadBefore = os.loadavg()[0];
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const dbName = `merx_bench_customers_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${crypto.randomBytes(2).toString('hex')}`;
  await admin(`CREATE DATABASE ${dbName}`);
  cleanups.push({ name: `drop database ${dbName}`, run: () => admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`) });
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const databaseUrl = url.toString();
  log(`database ${dbName}`);

  const service = await startService(databaseUrl, adminToken);
  cleanups.push({ name: 'stop service', run: () => stopService(service.child) });
  log(`service pid ${service.pid} at ${service.url}`);

  const op = (method: string, p: string, body?: unknown) => call(service.url, adminToken, method, `/admin/api${p}`, body);
  const account = (await op('POST', '/accounts', { name: 'Customers Bench', email: 'bench@example.com', plan: 'pro' })).data;
  const issued = await op('POST', `/accounts/${account.id}/keys`, { name: 'bench', scopes: ['customers:read', 'customers:write'] });
  const key: string = issued.key;
  log(`seeding ${SIZE.orders} orders, ${SIZE.customers} customers…`);
  const seedStart = performance.now();
  await op('POST', `/accounts/${account.id}/seed`, { ...SIZE, seed: 7 });
  const seedSeconds = (performance.now() - seedStart) / 1000;
  log(`seeded in ${seedSeconds.toFixed(1)} s`);

  // Same value parsing as the service's pool (numeric/int8 -> number, timestamptz -> ISO), same size.
  const parsers: Record<number, (t: string) => unknown> = { 20: Number, 1700: Number, 1184: (t) => new Date(t).toISOString() };
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 10,
    options: '-c TimeZone=UTC',
    types: { getTypeParser: (oid: number, format?: any) => parsers[oid] ?? (pg.types.getTypeParser as any)(oid, format) },
  });
  cleanups.push({ name: 'close pool', run: () => pool.end() });

  // Abandoned carts for one customer in ten (the seed makes none); written straight into the bench's own database.
  await pool.query(
    `INSERT INTO abandoned_carts (id, account_id, email, created_at)
     SELECT gen_random_uuid(), $1, 'customer' || g || '@example.com', now() - make_interval(days => g % 60)
       FROM generate_series(0, $2::int - 1, 10) g`,
    [account.id, SIZE.customers],
  );
  // SPEC Limits: 300 requests per minute per key. Extra keys (customers:read), rotated, so the load is not measuring 429s.
  const extra = Array.from({ length: KEY_COUNT - 1 }, () => generateApiKey());
  await pool.query(
    `INSERT INTO api_keys (id, account_id, name, prefix, key_hash, scopes)
     SELECT k.id, $1, 'bench-' || k.n, k.prefix, k.hash, ARRAY['customers:read']::text[]
       FROM unnest($2::uuid[], $3::text[], $4::text[]) WITH ORDINALITY AS k(id, prefix, hash, n)`,
    [account.id, extra.map(() => crypto.randomUUID()), extra.map((k) => k.prefix), extra.map((k) => k.hash)],
  );
  const keys = [key, ...extra.map((k) => k.key)];
  let next = 0;
  const nextKey = () => keys[next++ % keys.length];
  for (const table of ['orders', 'customer_aggregates', 'pages', 'products', 'abandoned_carts', 'api_keys'])
    await pool.query(`VACUUM (ANALYZE) ${table}`);

  const counts = (
    await pool.query(
      `SELECT (SELECT count(*) FROM orders WHERE account_id = $1)::int AS orders,
              (SELECT count(*) FROM customer_aggregates WHERE account_id = $1)::int AS customers,
              (SELECT count(*) FROM abandoned_carts WHERE account_id = $1)::int AS carts,
              pg_total_relation_size('customer_aggregates')::bigint AS agg_bytes`,
      [account.id],
    )
  ).rows[0];
  const topProduct = (
    await pool.query(
      `SELECT li->>'product_id' AS id, count(*)::int AS n FROM orders, jsonb_array_elements(line_items) li
        WHERE account_id = $1 GROUP BY 1 ORDER BY 2 DESC LIMIT 1`,
      [account.id],
    )
  ).rows[0];
  log(`${counts.orders} orders, ${counts.customers} customers, ${counts.carts} carts; top product ${topProduct.id} in ${topProduct.n} orders`);

  const pids = async () => {
    const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
    return [process.pid, service.pid, ...rows.map((r) => r.pid)];
  };

  const deepOffset = Math.max(0, Math.floor((counts.customers * 0.8) / 50) * 50);
  const since = new Date(Date.now() - 90 * 86_400_000).toISOString().slice(0, 10);
  const segmentFilters = { minOrders: 3, minTotal: 150, lastOrderAfterDate: since, hasEmail: true };
  const productFilters = { productId: topProduct.id, minOrders: 2 };
  // hasAbandonedCart is not load-tested: its count is a per-customer scan of every cart (see the one-shot section).
  const cartFilters = { hasAbandonedCart: true, minOrders: 3 };

  interface Case {
    name: string;
    request: string;
    parallel: boolean;
    capture: (sql: Sql) => Promise<unknown>;
    agree: (api: any, raw: any) => string;
    before?: () => Promise<void>;
  }
  const customerCase = (name: string, input: { limit?: number; offset?: number; q?: string }): Case => {
    const qs = new URLSearchParams(Object.entries(input).map(([k, v]) => [k, String(v)])).toString();
    return {
      name,
      request: `GET /api/v1/customers${qs ? `?${qs}` : ''}`,
      parallel: true,
      capture: (sql) => listCustomers(sql, account.id, input),
      agree: (api, raw) => `total ${api.total} (raw ${raw.total}), ${api.data.length} rows, first ${api.data[0]?.key ?? '–'}`,
    };
  };
  let segmentIds: string[] = [];
  const segmentCase = (name: string, filters: Record<string, unknown>): Case => ({
    name,
    request: `GET /api/v1/segments (${segmentIds.length + 1} computed: ${JSON.stringify(filters)})`,
    parallel: false,
    before: async () => {
      const created = await call(service.url, key, 'POST', '/api/v1/segments', { name, filters });
      segmentIds.push(created.data.id);
    },
    capture: (sql) => listSegments(sql, account.id),
    agree: (api, raw) =>
      `customer_count ${api.data.map((s: any) => s.customer_count).join(', ')} (raw ${raw.map((s: any) => s.customer_count).join(', ')})`,
  });
  const cases: Case[] = [
    customerCase('customers: first page', {}),
    customerCase('customers: q broad (surname)', { q: 'petrova' }),
    customerCase('customers: q narrow (one email)', { q: 'customer12345@' }),
    customerCase('customers: deep offset', { offset: deepOffset }),
    segmentCase('segment count: aggregate filters', segmentFilters),
  ];
  const productCase = segmentCase('segment count: + a productId segment', productFilters);
  productCase.request = `GET /api/v1/segments (2 computed: the one above, then ${JSON.stringify(productFilters)})`;
  cases.push(productCase);

  const scenarios: Scenario[] = [];
  const plans: Plan[] = [];
  for (const c of cases) {
    await c.before?.();
    const path_ = c.request.startsWith('GET /api/v1/segments') ? '/api/v1/segments' : c.request.slice(4);
    const apiOnce = await call(service.url, key, 'GET', path_);
    const { statements, result } = await capture(pool, c.capture);
    // The captured functions answer JSON text PostgreSQL wrote (issue 12).
    const note = c.agree(apiOnce, valueOf(result));
    log(`${c.name}: ${note}`);
    const busy = await waitForQuiet(QUIET_WAIT_S);
    if (busy !== null && busy >= 0.3) log(`machine busy (${busy.toFixed(2)} cores) after ${QUIET_WAIT_S} s of waiting: measuring anyway`);
    const single = await loadApi(service.url, path_, nextKey, 1, SINGLE_SECONDS, pids);
    const api = await loadApi(service.url, path_, nextKey, SHAPE.connections, SHAPE.seconds, pids);
    const raw = await loadRaw(replay(pool, statements, c.parallel), SHAPE.connections, SHAPE.seconds, pids);
    scenarios.push({ name: c.name, request: c.request, api, raw, single, statements: statements.length, note });
    log(
      `${c.name}: 1 conn p50 ${fmt(single.p50)} ms | API ${fmt(api.reqPerSec, 0)} req/s p50 ${fmt(api.p50)} p99 ${fmt(api.p99)}` +
        ` | raw ${fmt(raw.reqPerSec, 0)} req/s p50 ${fmt(raw.p50)} p99 ${fmt(raw.p99)} | other CPU ${cores(api.other)}/${cores(raw.other)}` +
        (api.failures || raw.failures || single.failures
          ? ` | FAILURES ${[single.failures, api.failures, raw.failures].filter(Boolean).join('; ')}`
          : ''),
    );
    for (const [i, s] of statements.entries()) {
      // The segment list statement, and the first segment's count, repeat in the second segment case: explain each once.
      if (plans.some((p) => p.sql === s.text.replace(/\s+/g, ' ').trim() && p.params === JSON.stringify(s.params))) continue;
      plans.push(await explain(pool, `${c.name}: statement ${i + 1}/${statements.length}`, s));
    }
  }

  // One-shot: a computed segment with hasAbandonedCart, previewed through the API (dry-run create answers its
  // customer_count) and its count statement run once directly, both bounded by ONE_SHOT_TIMEOUT_S.
  const oneShot: string[] = [];
  {
    const t0 = performance.now();
    let apiOutcome: string;
    try {
      const res = await fetch(`${service.url}/api/v1/segments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'X-Merx-Dry-Run': '1' },
        body: JSON.stringify({ name: 'carts', filters: cartFilters }),
        signal: AbortSignal.timeout(ONE_SHOT_TIMEOUT_S * 1000),
      });
      const body = await res.json();
      apiOutcome = `HTTP ${res.status} in ${fmt(performance.now() - t0, 0)} ms, customer_count ${body.data?.customer_count}`;
    } catch (err) {
      apiOutcome = `no answer within ${ONE_SHOT_TIMEOUT_S} s (${err instanceof Error ? err.name : err})`;
    }
    log(`one-shot ${JSON.stringify(cartFilters)} via API dry-run create: ${apiOutcome}`);
    const statements: Statement[] = [];
    const { countSegment } = await import('../src/modules/customers/segments.ts');
    const client = await pool.connect();
    let rawOutcome: string;
    let plan = '';
    try {
      await client.query(`SET statement_timeout = '${ONE_SHOT_TIMEOUT_S}s'`);
      const t1 = performance.now();
      const sql = recorder({ query: (text: string, params: any[]) => client.query(text, params) } as unknown as pg.Pool, statements);
      try {
        const n = await countSegment(sql, account.id, { id: crypto.randomUUID(), filters: cartFilters });
        rawOutcome = `${fmt(performance.now() - t1, 0)} ms, count ${n}`;
      } catch (err) {
        rawOutcome = `did not finish within ${ONE_SHOT_TIMEOUT_S} s (${err instanceof Error ? err.message : err})`;
      }
      const last = statements[statements.length - 1];
      plan = (await client.query(`EXPLAIN ${last.text}`, last.params as any[])).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      oneShot.push(
        `- Filters \`${JSON.stringify(cartFilters)}\` (${counts.carts.toLocaleString('en-US')} carts, ${counts.customers.toLocaleString('en-US')} customers)`,
      );
      oneShot.push(`- Through the API (\`POST /api/v1/segments\` with \`X-Merx-Dry-Run: 1\`, which answers the count): ${apiOutcome}`);
      oneShot.push(`- The same count statement run once directly: ${rawOutcome}`);
      oneShot.push('');
      oneShot.push('```sql');
      oneShot.push(last.text.replace(/\s+/g, ' ').trim());
      oneShot.push(`-- params: ${JSON.stringify(last.params)}`);
      oneShot.push('```');
      oneShot.push('');
      oneShot.push('EXPLAIN (without ANALYZE; the statement may not finish):');
      oneShot.push('');
      oneShot.push('```');
      oneShot.push(plan);
      oneShot.push('```');
    } finally {
      await client.query('RESET statement_timeout').catch(() => {});
      client.release();
    }
    log(`one-shot ${JSON.stringify(cartFilters)} directly: ${rawOutcome}`);
  }

  const version = (await pool.query('SELECT version() AS v')).rows[0].v as string;
  const settings = (
    await pool.query(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'effective_cache_size', 'random_page_cost', 'max_connections') ORDER BY name`,
    )
  ).rows.map((r: any) => `${r.name}=${r.setting}${r.unit ? ` (${r.unit})` : ''}`);
  const autocannonVersion = JSON.parse(
    fs.readFileSync(path.join(import.meta.dirname, '..', 'node_modules', 'autocannon', 'package.json'), 'utf8'),
  ).version;
  const cpus = os.cpus();
  const invalid = scenarios.some((s) => s.api.failures || s.raw.failures || s.single.failures);

  const lines: string[] = [];
  lines.push('# Customers and segments benchmark');
  lines.push('');
  lines.push('Written by `node bench/customers.ts` (do not edit by hand; rerun instead).');
  lines.push('');
  lines.push('## Environment');
  lines.push('');
  lines.push(`- Date: ${new Date().toISOString()}`);
  lines.push(
    `- Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM; ${os.type()} ${os.release()} ${os.arch()}`,
  );
  lines.push(`- Load average (1 min) before / after: ${loadBefore.toFixed(2)} / ${os.loadavg()[0].toFixed(2)}`);
  lines.push(`- Node ${process.version}; ${version.split(' on ')[0]}; autocannon ${autocannonVersion}`);
  lines.push(`- PostgreSQL settings: ${settings.join(', ')}`);
  lines.push(
    `- Data: ${counts.orders.toLocaleString('en-US')} orders (seed ${seedSeconds.toFixed(1)} s through POST /admin/api/accounts/{id}/seed), ${counts.customers.toLocaleString('en-US')} customers in customer_aggregates (${(Number(counts.agg_bytes) / 1024 / 1024).toFixed(1)} MB with indexes), ${counts.carts.toLocaleString('en-US')} abandoned carts`,
  );
  lines.push(
    `- Load: ${SHAPE.connections} connections (API, autocannon) and ${SHAPE.connections} concurrent callers (raw), ${SHAPE.warmup} s warm-up then ${SHAPE.seconds} s measured each; "1 conn" is one autocannon connection for ${SINGLE_SECONDS} s (unloaded latency). ${keys.length} API keys rotated (SPEC: 300 req/min per key).`,
  );
  lines.push(
    "- **raw** replays the exact statements the service sends for that request (captured from `listCustomers` / `listSegments` themselves) on a `pg` pool of 10 with the service's type parsing: no HTTP, auth, rate limit, validation or serialisation. The customer list sends its page and its count in parallel; the segment list reads the segments' filters (and each segment an inSegment names), then sends one statement that writes every view with its count, one after another.",
  );
  lines.push(
    "- **other CPU**: cores used by processes other than the bench, the service and the bench database's backends during the measured seconds; trust a row only when it is near 0.",
  );
  if (invalid) lines.push('- **INVALID RUN**: some requests failed (see the table).');
  lines.push('');
  lines.push('## Results');
  lines.push('');
  lines.push(
    '| scenario | request | 1 conn p50 / p99 ms | API req/s | API p50 ms | API p99 ms | raw req/s | raw p50 ms | raw p99 ms | API/raw | other CPU (API/raw) | check |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const s of scenarios) {
    const failures = [s.single.failures, s.api.failures, s.raw.failures].filter(Boolean).join('; ');
    lines.push(
      `| ${s.name} | \`${s.request}\` | ${fmt(s.single.p50)} / ${fmt(s.single.p99)} | ${fmt(s.api.reqPerSec, 0)} | ${fmt(s.api.p50)} | ${fmt(s.api.p99)} | ` +
        `${fmt(s.raw.reqPerSec, 0)} | ${fmt(s.raw.p50)} | ${fmt(s.raw.p99)} | ${fmt((100 * s.api.reqPerSec) / s.raw.reqPerSec, 0)}% | ` +
        `${cores(s.api.other)} / ${cores(s.raw.other)} | ${s.note}${failures ? ` **FAILURES: ${failures}**` : ''} |`,
    );
  }
  lines.push('');
  lines.push('## One-shot: a segment with hasAbandonedCart');
  lines.push('');
  lines.push(...oneShot);
  lines.push('');
  lines.push('## EXPLAIN (ANALYZE, BUFFERS)');
  lines.push('');
  lines.push('| statement | execution ms | Seq Scan on |');
  lines.push('|---|---|---|');
  for (const p of plans) lines.push(`| ${p.name} | ${fmt(p.executionMs, 3)} | ${p.seqScans.join(', ') || '–'} |`);
  lines.push('');
  for (const p of plans) {
    lines.push(`### ${p.name}`);
    lines.push('');
    lines.push('```sql');
    lines.push(p.sql);
    lines.push(`-- params: ${p.params}`);
    lines.push('```');
    lines.push('');
    lines.push('```');
    lines.push(p.plan);
    lines.push('```');
    lines.push('');
  }
  lines.push(`Total run time ${((performance.now() - started) / 1000).toFixed(0)} s.`);
  lines.push('');
  fs.writeFileSync(RESULTS_FILE, lines.join('\n'));
  log(`wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
  if (invalid) process.exitCode = 1;
  segmentIds = [];
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}

try {
  await main();
} catch (err) {
  process.exitCode = 1;
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
} finally {
  await cleanUp();
  log('service stopped, database dropped');
}
