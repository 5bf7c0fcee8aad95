// npm run bench: seeds 100k orders into a fresh PostgreSQL database, loads the
// order list and order lookup over HTTP (service in a child process) and
// the same query code directly, explains every list filter, and writes
// bench/RESULTS.md. The database and the child process are removed at the end.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { openDb } from '../src/platform/db/open-db.ts';
import type { Db } from '../src/platform/db/db.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { addBenchKeys, addShipments, pickParams, provisionAndSeed, settle, tableSizeMb } from './fixtures.ts';
import { buildScenarios, checkAgreement } from './scenarios.ts';
import { compareApiWithRaw, roundRobin, type LoadShape, type LoadStats } from './load.ts';
import { CpuMeter, waitForQuiet } from './cpu.ts';
import { explain, explainCases } from './explain.ts';
import { renderResults, type Environment, type ScenarioResult } from './report.ts';
import { benchTools, setting } from './bench-tools.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SIZE = { orders: setting('BENCH_ORDERS', 100_000), products: 200, customers: 30_000 };
const SHAPE: LoadShape = {
  connections: setting('BENCH_CONNECTIONS', 20),
  warmupSeconds: setting('BENCH_WARMUP_SECONDS', 2),
  seconds: setting('BENCH_SECONDS', 10),
  rounds: Math.max(1, setting('BENCH_ROUNDS', 5)),
};
const KEY_COUNT = setting('BENCH_KEYS', 1000);
/** How long, over the whole run, the bench may wait for other work on the machine to finish. */
const QUIET_WAIT_SECONDS = setting('BENCH_QUIET_WAIT_SECONDS', 60);
const QUIET_BUDGET = { seconds: QUIET_WAIT_SECONDS };
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS.md');

const { log, cleanups, createDatabase, run } = benchTools('bench', ADMIN_URL, 'merx_bench');

async function describeEnvironment(db: Db, loadBefore: number): Promise<Environment> {
  const cpus = os.cpus();
  const version = (await db.query<{ v: string }>('SELECT version() AS v')).rows[0].v;
  const { rows } = await db.query<{ name: string; setting: string; unit: string | null }>(
    `SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'effective_cache_size', 'random_page_cost', 'max_connections') ORDER BY name`,
  );
  const autocannonPackage = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'node_modules', 'autocannon', 'package.json'), 'utf8'));
  return {
    date: new Date().toISOString(),
    machine: `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    postgres: version.split(' on ')[0],
    postgresSettings: rows.map((r) => `${r.name}=${r.setting}${r.unit ? ` (${r.unit})` : ''}`).join(', '),
    autocannon: autocannonPackage.version,
    loadBefore,
    loadAfter: os.loadavg()[0],
    cores: cpus.length,
  };
}

const otherCores = (stats: LoadStats) => (stats.cpu ? stats.cpu.otherCores.toFixed(2) : '?');

async function main(): Promise<void> {
  const started = performance.now();
  const loadBefore = os.loadavg()[0];
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const databaseUrl = await createDatabase();

  const service: ServiceProcess = await startServiceProcess(databaseUrl, adminToken);
  cleanups.push({ name: 'stop service', run: () => service.stop() });
  log(`service pid ${service.pid} at ${service.url}`);

  log(`seeding ${SIZE.orders.toLocaleString('en-US')} orders through the operator API…`);
  const tenant = await provisionAndSeed(service.url, adminToken, SIZE);
  log(`seeded in ${tenant.seedSeconds.toFixed(1)} s`);

  const db = await openDb({ databaseUrl, dataDir: '' });
  cleanups.push({ name: 'close raw pool', run: () => db.close() });
  const keys = [tenant.key, ...(await addBenchKeys(db, tenant.accountId, KEY_COUNT - 1))];
  const shipments = await addShipments(db, tenant.accountId);
  await settle(db);
  const params = await pickParams(db, tenant.accountId);
  const seed = { ...SIZE, seedSeconds: tenant.seedSeconds, shipments, ordersTableMb: await tableSizeMb(db, 'orders') };
  log(`${shipments} shipments, ${keys.length} keys; q=${params.q} matches ${params.qMatches}, since matches ${params.sinceMatches}`);

  const scenarios = buildScenarios(db, tenant.accountId, params);
  for (const scenario of scenarios) await checkAgreement(service.url, tenant.key, scenario);

  const nextKey = roundRobin(keys);
  const meter = new CpuMeter(async () => {
    const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
    return [process.pid, service.pid, ...rows.map((r) => r.pid)];
  });
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    const busy = await waitForQuiet(QUIET_BUDGET);
    if (busy !== null && busy > 0.3) log(`machine busy (${busy.toFixed(2)} cores) and the quiet-wait budget is spent: measuring anyway`);
    const target = { baseUrl: service.url, nextPath: scenario.nextPath, nextKey };
    const { api, raw } = await compareApiWithRaw(target, scenario.callRaw, SHAPE, meter);
    const death = service.death();
    if (death) throw new Error(`during "${scenario.name}": ${death}`);
    results.push({ name: scenario.name, request: scenario.request, api, raw });
    log(
      `${scenario.name}: API ${api.reqPerSec.toFixed(0)} req/s p50 ${api.p50Ms.toFixed(2)} p99 ${api.p99Ms.toFixed(2)}` +
        ` | raw ${raw.reqPerSec.toFixed(0)} req/s p50 ${raw.p50Ms.toFixed(2)} p99 ${raw.p99Ms.toFixed(2)}` +
        ` | other CPU ${otherCores(api)}/${otherCores(raw)} cores` +
        (api.failures || raw.failures ? ` | FAILURES: ${[api.failureDetail, raw.failureDetail].filter(Boolean).join('; ')}` : ''),
    );
  }

  const plans = [];
  for (const c of explainCases(tenant.accountId, params)) plans.push(await explain(db, c));
  const seqScans = plans.filter((p) => p.seqScans.length).map((p) => p.name);
  log(seqScans.length ? `Seq Scan in: ${seqScans.join('; ')}` : 'no Seq Scan in any list filter');

  const env = await describeEnvironment(db, loadBefore);
  const totalSeconds = (performance.now() - started) / 1000;
  fs.writeFileSync(
    RESULTS_FILE,
    renderResults({
      env,
      seed,
      params,
      shape: SHAPE,
      keyCount: keys.length,
      scenarios: results,
      plans,
      totalSeconds,
      quietWait: { budgetSeconds: QUIET_WAIT_SECONDS, waitedSeconds: QUIET_WAIT_SECONDS - QUIET_BUDGET.seconds },
    }),
  );
  log(`wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
  if (results.some((r) => r.api.failures || r.raw.failures)) process.exitCode = 1;
}

await run(main);
