// npm run bench:exports (issue 39, EXTENSIONS 8): an export of BENCH_ORDERS
// orders (1M by default) on PostgreSQL, JSONL and CSV, with and without gzip,
// side by side with psql copying the same stored documents (the account's
// view_json in the list's order) to /dev/null: the limit. Alternating rounds,
// medians. Reports rows/s and MB/s and the service's memory growth (its RSS
// sampled every 100 ms, highest minus the level before the export).
// With BENCH_BEFORE_DIR, that checkout's service exports the same orders in
// the same rounds (jsonl before, csv before). Appends to bench/RESULTS-exports.md.
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
const SERVICE_ENV = { RATE_LIMIT_REST_PER_MINUTE: '100000000', WORKERS: '0' };
/** Another checkout whose service reads the same database in the same rounds (its migrations must be this one's). */
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;

const { log, cleanups, createDatabase, run } = benchTools('exports', ADMIN_URL, 'merx_exports_bench');

interface Measure {
  seconds: number;
  bytes: number;
  rows: number;
  /** Highest RSS of the service during the run minus its RSS before, MB. */
  growthMb?: number;
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
          resolve({ seconds: (performance.now() - started) / 1000, bytes, rows, growthMb: peak - before });
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

async function main(): Promise<void> {
  const started = new Date();
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const databaseUrl = await createDatabase();
  const service = await startServiceProcess(databaseUrl, adminToken, { env: SERVICE_ENV });
  cleanups.push({ name: 'stop service', run: () => service.stop() });
  const beforeService = BEFORE_DIR
    ? await startServiceProcess(databaseUrl, adminToken, { env: SERVICE_ENV, main: path.join(BEFORE_DIR, 'src', 'main.ts') })
    : null;
  if (beforeService) cleanups.push({ name: 'stop the before service', run: () => beforeService.stop() });
  const seeded = Math.min(ORDERS, SEED_ENDPOINT_MAX_ORDERS);
  log(`seeding ${ORDERS.toLocaleString('en-US')} orders…`);
  const tenant = await provisionAndSeed(service.url, adminToken, { orders: seeded, products: 200, customers: Math.max(100, seeded / 4) });
  const db = await openDb({ databaseUrl, dataDir: '', poolMax: 2 });
  cleanups.push({ name: 'close pool', run: () => db.close() });
  const factor = Math.ceil(ORDERS / seeded);
  if (factor > 1) {
    await withoutOrderIndexes(db, log, () =>
      withDocumentsWrittenOnce(db, tenant.accountId, log, (tx) => multiplyOrders(tx, tenant.accountId, factor, log)),
    );
  }
  await settle(db);
  const {
    rows: [size],
  } = await db.query<{ n: number; bytes: number }>(
    `SELECT count(*)::int AS n, sum(octet_length(view_json::text) + 1)::bigint AS bytes FROM orders WHERE account_id = $1 AND status <> 'archived'`,
    [tenant.accountId],
  );
  log(`${size.n.toLocaleString('en-US')} orders to export, ${(size.bytes / 1e6).toFixed(0)} MB of documents`);

  const sides = {
    psql: [] as Measure[],
    jsonl: [] as Measure[],
    csv: [] as Measure[],
    'jsonl gzip': [] as Measure[],
    'csv gzip': [] as Measure[],
    ...(beforeService ? { 'jsonl before': [] as Measure[], 'csv before': [] as Measure[] } : {}),
  } as Record<string, Measure[]>;
  for (let round = 1; round <= ROUNDS; round++) {
    sides.psql.push(psqlCopy(databaseUrl, tenant.accountId, size.bytes, size.n));
    sides.jsonl.push(await exportOnce(service.url, tenant.key, 'jsonl', false, service.pid));
    sides.csv.push(await exportOnce(service.url, tenant.key, 'csv', false, service.pid));
    sides['jsonl gzip'].push({ ...(await exportOnce(service.url, tenant.key, 'jsonl', true, service.pid)), rows: size.n });
    sides['csv gzip'].push({ ...(await exportOnce(service.url, tenant.key, 'csv', true, service.pid)), rows: size.n + 1 });
    if (beforeService) {
      sides['jsonl before'].push(await exportOnce(beforeService.url, tenant.key, 'jsonl', false, beforeService.pid));
      sides['csv before'].push(await exportOnce(beforeService.url, tenant.key, 'csv', false, beforeService.pid));
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
  const section = [
    `## ${started.toISOString().slice(0, 16)}Z: ${size.n.toLocaleString('en-US')} orders (${(size.bytes / 1e6).toFixed(0)} MB of documents)`,
    '',
    ...(BEFORE_DIR ? [`- "before": the service of ${BEFORE_DIR} (BENCH_BEFORE_DIR) on the same database, in the same rounds.`] : []),
    `- ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)} at the end; PostgreSQL and the service on this machine; ${ROUNDS} rounds alternating, medians; the client only counts bytes (and lines).`,
    "- psql: `\\copy (SELECT view_json FROM orders WHERE account_id = … AND status <> 'archived' ORDER BY created_at DESC, id DESC) TO '/dev/null'`, the same documents in the list's order. MB/s of gzip rows: compressed bytes on the wire.",
    "- Memory: the service's RSS sampled every 100 ms, the highest during an export minus its level just before (the highest over the rounds).",
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
