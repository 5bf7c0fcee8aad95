// Bench tool: a CPU profile of the service under one read load (wrk), for
// finding where a request's time goes. Not a measurement of record: the
// profiler slows the service; read shares of its busy time, not rates.
//   BENCH_PROFILE_LOAD=list|order|mcp BENCH_ORDERS=20000 node bench/profile-read.ts
// writes a .cpuprofile to BENCH_PROFILE_DIR (default /tmp/merx-profile) and
// prints the functions with the most self time.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { openDb } from '../src/platform/db/open-db.ts';
import { startServiceProcess } from './service-process.ts';
import { addBenchKeys, addShipments, provisionAndSeed, settle } from './fixtures.ts';
import { roundRobin } from './load.ts';
import { benchTools, setting } from './bench-tools.ts';
import { MCP_HEADERS, runHttp, type HttpLoad } from './read-path-http.ts';

const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ORDERS = setting('BENCH_ORDERS', 20_000);
const SECONDS = setting('BENCH_SECONDS', 10);
const LOAD = process.env.BENCH_PROFILE_LOAD ?? 'list';
const DIR = process.env.BENCH_PROFILE_DIR ?? '/tmp/merx-profile';
const SERVICE_ENV = { RATE_LIMIT_REST_PER_MINUTE: '100000000', RATE_LIMIT_MCP_PER_MINUTE: '100000000', WORKERS: '0' };

const { log, cleanups, createDatabase, run } = benchTools('profile-read', ADMIN_URL, 'merx_profile');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
}

async function main(): Promise<void> {
  fs.rmSync(DIR, { recursive: true, force: true });
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const databaseUrl = await createDatabase();
  const service = await startServiceProcess(databaseUrl, adminToken, {
    env: { ...SERVICE_ENV, NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${DIR}` },
  });
  cleanups.push({ name: 'stop service', run: () => service.stop() });
  const tenant = await provisionAndSeed(service.url, adminToken, { orders: ORDERS, products: 200, customers: Math.max(100, ORDERS / 4) });
  const db = await openDb({ databaseUrl, dataDir: '', poolMax: 2 });
  cleanups.push({ name: 'close pool', run: () => db.close() });
  const keys = roundRobin([tenant.key, ...(await addBenchKeys(db, tenant.accountId, 199))]);
  await addShipments(db, tenant.accountId);
  await settle(db);
  const { rows } = await db.query<{ id: string }>('SELECT id FROM orders WHERE account_id = $1 ORDER BY md5(id::text) LIMIT 50', [tenant.accountId]);
  const ids = roundRobin(rows.map((r) => r.id));
  const loads: Record<string, HttpLoad> = {
    list: { method: 'GET', next: () => ({ path: '/api/v1/orders?limit=50' }) },
    order: { method: 'GET', next: () => ({ path: `/api/v1/orders/${ids()}` }) },
    mcp: {
      method: 'POST',
      headers: MCP_HEADERS,
      next: () => ({
        path: '/api/mcp',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_orders', arguments: { limit: 50 } } }),
      }),
    },
  };
  await runHttp(service, loads[LOAD], keys, 3, 50);
  const side = await runHttp(service, loads[LOAD], keys, SECONDS, 50);
  log(`${LOAD}: ${side.reqPerSec.toFixed(0)}/s under the profiler, service CPU ${side.serviceCpuMs?.toFixed(3)} ms/request`);
  await service.stop();
  const file = fs.readdirSync(DIR).find((f) => f.endsWith('.cpuprofile'))!;
  const profile = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as { nodes: ProfileNode[] };
  const self = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/src\//, 'src/')}:${lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + node.hitCount);
    total += node.hitCount;
  }
  const idle = self.get('(idle) :0') ?? 0;
  const busy = total - idle;
  log(`profile ${path.join(DIR, file)}: ${busy} busy samples`);
  for (const [name, hits] of [...self]
    .filter(([n]) => !n.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 40)) {
    console.log(`${((hits / busy) * 100).toFixed(1).padStart(5)}%  ${name}`);
  }
}

await run(main);
