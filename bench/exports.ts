// npm run bench:exports (issue 39, EXTENSIONS 8): an export of BENCH_ORDERS
// orders (1M by default) on PostgreSQL, JSONL and CSV, with and without gzip,
// side by side with psql copying the same stored documents (the account's
// view_json in the list's order) to /dev/null: the limit. Alternating rounds,
// medians. Reports rows/s and MB/s and the service's memory growth (its RSS
// sampled every 100 ms, highest minus the level before the export).
// With BENCH_BEFORE_DIR, that checkout's service exports the same orders in
// the same rounds (jsonl before, csv before). Appends to bench/RESULTS-exports.md.
// BENCH_KEEP_DB=1 keeps the seeded database and writes what finds it again to
// BENCH_STATE (default: a file in the temporary directory); BENCH_REUSE_DB=1
// exports from that database instead of seeding one (seeding 1M takes
// minutes); drop it with psql when done. BENCH_SIDES (comma-separated names
// of the table's sides, psql always) runs only those. BENCH_MEMORY=1 loads
// bench/memory-probe.ts into the service and reports, beside RSS, the growth
// of V8's heap and of the memory outside it (external, arrayBuffers).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import http from 'node:http';
import { spawnSync } from 'node:child_process';
import { openDb } from '../src/platform/db/open-db.ts';
import { startServiceProcess } from './service-process.ts';
import { multiplyOrders, provisionAndSeed, SEED_ENDPOINT_MAX_ORDERS, settle, withDocumentsWrittenOnce, withoutOrderIndexes } from './fixtures.ts';
import { benchTools, setting } from './bench-tools.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const ORDERS = setting('BENCH_ORDERS', 1_000_000);
const ROUNDS = setting('BENCH_ROUNDS', 3);
const RESULTS = path.join(import.meta.dirname, 'RESULTS-exports.md');
const SERVICE_ENV: Record<string, string> = { RATE_LIMIT_REST_PER_MINUTE: '100000000', WORKERS: '0' };
/** Another checkout whose service reads the same database in the same rounds (its migrations must be this one's). */
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;
const KEEP_DB = process.env.BENCH_KEEP_DB === '1';
const REUSE_DB = process.env.BENCH_REUSE_DB === '1';
const STATE = process.env.BENCH_STATE || path.join(os.tmpdir(), 'merx-exports-bench.json');
const PROBE = process.env.BENCH_MEMORY === '1' ? path.join(os.tmpdir(), `merx-exports-probe-${process.pid}.log`) : null;
const SIDES = process.env.BENCH_SIDES ? new Set(['psql', ...process.env.BENCH_SIDES.split(',').map((s) => s.trim())]) : null;

/** What finds a kept database again. */
interface Kept {
  databaseUrl: string;
  accountId: string;
  key: string;
  orders: number;
}

const { log, cleanups, createDatabase, run } = benchTools('exports', ADMIN_URL, 'merx_exports_bench');

interface Measure {
  seconds: number;
  bytes: number;
  rows: number;
  /** Highest RSS of the service during the run minus its RSS before, MB. */
  growthMb?: number;
  /** With BENCH_MEMORY: the highest of each process.memoryUsage() field minus its level before, MB. */
  fields?: Record<string, number>;
}

const PROBE_FIELDS = ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers'];

/** The probe's samples of the service `pid` from `since` to `until` (ms since the epoch): each field's highest minus its last level before. */
function probedGrowth(pid: number, since: number, until: number): Record<string, number> | undefined {
  const file = `${PROBE}.${pid}`;
  if (!PROBE || !fs.existsSync(file)) return undefined;
  const samples = fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' ').map(Number));
  const before = samples.findLast((s) => s[0] < since);
  const during = samples.filter((s) => s[0] >= since && s[0] <= until);
  if (!before || !during.length) return undefined;
  return Object.fromEntries(PROBE_FIELDS.map((name, i) => [name, Math.max(...during.map((s) => s[i + 1])) - before[i + 1]]));
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** One export read to the end by a client that only counts (bytes on the wire, lines). */
function exportOnce(url: string, key: string, format: 'jsonl' | 'csv', gzip: boolean, pid: number): Promise<Measure> {
  return new Promise((resolve, reject) => {
    const before = rssMb(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
    const since = Date.now();
    const started = performance.now();
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'accept-encoding': gzip ? 'gzip' : 'identity' };
    http
      .get(`${url}/api/v1/exports/orders?format=${format}`, { headers }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`export answered ${res.statusCode}`));
        let bytes = 0;
        let rows = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (!gzip) for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++;
        });
        res.on('end', () => {
          clearInterval(sampler);
          const seconds = (performance.now() - started) / 1000;
          resolve({ seconds, bytes, rows, growthMb: peak - before, fields: probedGrowth(pid, since, Date.now()) });
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** psql copying the same documents, in the same order, to /dev/null. */
function psqlCopy(databaseUrl: string, accountId: string, bytes: number, rows: number): Measure {
  const sql = `\\copy (SELECT view_json FROM orders WHERE account_id = '${accountId}' AND status <> 'archived' ORDER BY created_at DESC, id DESC) TO '/dev/null'`;
  const started = performance.now();
  const ran = spawnSync('psql', [databaseUrl, '-X', '-q', '-c', sql], { encoding: 'utf8' });
  if (ran.status !== 0) throw new Error(`psql: ${ran.stderr}`);
  return { seconds: (performance.now() - started) / 1000, bytes, rows };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function seed(serviceUrl: string, adminToken: string, db: Awaited<ReturnType<typeof openDb>>) {
  const seeded = Math.min(ORDERS, SEED_ENDPOINT_MAX_ORDERS);
  log(`seeding ${ORDERS.toLocaleString('en-US')} orders…`);
  const tenant = await provisionAndSeed(serviceUrl, adminToken, { orders: seeded, products: 200, customers: Math.max(100, seeded / 4) });
  const factor = Math.ceil(ORDERS / seeded);
  if (factor > 1) {
    await withoutOrderIndexes(db, log, () =>
      withDocumentsWrittenOnce(db, tenant.accountId, log, (tx) => multiplyOrders(tx, tenant.accountId, factor, log)),
    );
  }
  return tenant;
}

async function main(): Promise<void> {
  const started = new Date();
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const kept: Kept | null = REUSE_DB ? JSON.parse(fs.readFileSync(STATE, 'utf8')) : null;
  if (kept && kept.orders !== ORDERS) throw new Error(`${STATE} holds ${kept.orders} orders, BENCH_ORDERS is ${ORDERS}`);
  const databaseUrl = kept?.databaseUrl ?? (await createDatabase());
  if (KEEP_DB && !kept) cleanups.splice(0, cleanups.length);
  if (PROBE) {
    Object.assign(SERVICE_ENV, { NODE_OPTIONS: `--import=${path.join(import.meta.dirname, 'memory-probe.ts')}`, MERX_MEMORY_PROBE: PROBE });
    cleanups.push({
      name: 'remove the probe file',
      run: async () => [service.pid, beforeService?.pid].forEach((pid) => fs.rmSync(`${PROBE}.${pid}`, { force: true })),
    });
  }
  const service = await startServiceProcess(databaseUrl, adminToken, { env: SERVICE_ENV });
  cleanups.push({ name: 'stop service', run: () => service.stop() });
  const beforeService = BEFORE_DIR
    ? await startServiceProcess(databaseUrl, adminToken, { env: SERVICE_ENV, main: path.join(BEFORE_DIR, 'src', 'main.ts') })
    : null;
  if (beforeService) cleanups.push({ name: 'stop the before service', run: () => beforeService.stop() });
  const db = await openDb({ databaseUrl, dataDir: '', poolMax: 2 });
  cleanups.push({ name: 'close pool', run: () => db.close() });
  const tenant = kept ?? (await seed(service.url, adminToken, db));
  if (KEEP_DB && !kept) {
    fs.writeFileSync(STATE, JSON.stringify({ databaseUrl, accountId: tenant.accountId, key: tenant.key, orders: ORDERS } satisfies Kept));
    log(`kept: ${STATE}`);
  }
  await settle(db);
  const {
    rows: [size],
  } = await db.query<{ n: number; bytes: number }>(
    `SELECT count(*)::int AS n, sum(octet_length(view_json::text) + 1)::bigint AS bytes FROM orders WHERE account_id = $1 AND status <> 'archived'`,
    [tenant.accountId],
  );
  log(`${size.n.toLocaleString('en-US')} orders to export, ${(size.bytes / 1e6).toFixed(0)} MB of documents`);

  const sides = Object.fromEntries(
    ['psql', 'jsonl', 'csv', 'jsonl gzip', 'csv gzip', ...(beforeService ? ['jsonl before', 'csv before'] : [])]
      .filter((name) => !SIDES || SIDES.has(name))
      .map((name) => [name, [] as Measure[]]),
  );
  const measure = async (name: string, once: () => Promise<Measure>) => sides[name]?.push(await once());
  for (let round = 1; round <= ROUNDS; round++) {
    sides.psql.push(psqlCopy(databaseUrl, tenant.accountId, size.bytes, size.n));
    await measure('jsonl', () => exportOnce(service.url, tenant.key, 'jsonl', false, service.pid));
    await measure('csv', () => exportOnce(service.url, tenant.key, 'csv', false, service.pid));
    await measure('jsonl gzip', async () => ({ ...(await exportOnce(service.url, tenant.key, 'jsonl', true, service.pid)), rows: size.n }));
    await measure('csv gzip', async () => ({ ...(await exportOnce(service.url, tenant.key, 'csv', true, service.pid)), rows: size.n + 1 }));
    if (beforeService) {
      await measure('jsonl before', () => exportOnce(beforeService.url, tenant.key, 'jsonl', false, beforeService.pid));
      await measure('csv before', () => exportOnce(beforeService.url, tenant.key, 'csv', false, beforeService.pid));
    }
    log(
      `round ${round}: ${Object.entries(sides)
        .map(([name, m]) => `${name} ${m.at(-1)!.seconds.toFixed(1)} s`)
        .join(', ')}`,
    );
  }
  for (const name of ['jsonl', 'csv', 'jsonl before', 'csv before']) {
    for (const m of sides[name] ?? [])
      if (m.rows !== size.n + (name.startsWith('csv') ? 1 : 0)) throw new Error(`${name} streamed ${m.rows} lines for ${size.n} orders`);
  }
  const psqlRate = size.n / median(sides.psql.map((m) => m.seconds));
  const lines = Object.entries(sides).map(([name, measures]) => {
    const seconds = median(measures.map((m) => m.seconds));
    const rows = measures[0].rows - (name.startsWith('csv') ? 1 : 0);
    const growth = measures.some((m) => m.growthMb !== undefined) ? `${Math.max(...measures.map((m) => m.growthMb ?? 0)).toFixed(0)} MB` : '—';
    return `| ${name} | ${seconds.toFixed(2)} | ${Math.round(rows / seconds).toLocaleString('en-US')} | ${(median(measures.map((m) => m.bytes)) / 1e6 / seconds).toFixed(1)} | ${Math.round((rows / seconds / psqlRate) * 100)}% | ${growth} |`;
  });
  const probed = Object.entries(sides)
    .filter(([, measures]) => measures.some((m) => m.fields))
    .map(([name, measures]) => {
      const highest = (field: string) => Math.max(...measures.map((m) => m.fields?.[field] ?? 0)).toFixed(0);
      return `  - ${name}: ${PROBE_FIELDS.map((field) => `${field} +${highest(field)}`).join(', ')} MB`;
    });
  const section = [
    `## ${started.toISOString().slice(0, 16)}Z: ${size.n.toLocaleString('en-US')} orders (${(size.bytes / 1e6).toFixed(0)} MB of documents)`,
    '',
    ...(BEFORE_DIR ? [`- "before": the service of ${BEFORE_DIR} (BENCH_BEFORE_DIR) on the same database, in the same rounds.`] : []),
    `- ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)} at the end; PostgreSQL and the service on this machine; ${ROUNDS} rounds alternating, medians; the client only counts bytes (and lines).`,
    "- psql: `\\copy (SELECT view_json FROM orders WHERE account_id = … AND status <> 'archived' ORDER BY created_at DESC, id DESC) TO '/dev/null'`, the same documents in the list's order. MB/s of gzip rows: compressed bytes on the wire.",
    "- Memory: the service's RSS sampled every 100 ms, the highest during an export minus its level just before (the highest over the rounds).",
    ...(probed.length
      ? ["- process.memoryUsage() in the service (bench/memory-probe.ts), each field's highest growth over the rounds:", ...probed]
      : []),
    ...(REUSE_DB ? [`- On the database kept by an earlier run (BENCH_REUSE_DB).`] : []),
    '',
    '| side | seconds | rows/s | MB/s | rows/s vs psql | service memory growth |',
    '| --- | --- | --- | --- | --- | --- |',
    ...lines,
    '',
  ].join('\n');
  if (!fs.existsSync(RESULTS)) {
    fs.writeFileSync(
      RESULTS,
      "# Exports: the service beside psql (bench/exports.ts)\n\nTarget (issue 39): JSONL at >= 70% of psql's rows/s; the service's memory grows by no more than 100 MB.\n\n",
    );
  }
  fs.appendFileSync(RESULTS, `${section}\n`);
  log(`\n${section}`);
}

await run(main);
