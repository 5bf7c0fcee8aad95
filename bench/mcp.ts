// node bench/mcp.ts: what MCP costs on top of REST for the same page.
// Seeds 100k orders into a fresh PostgreSQL database, starts the service as a
// child process, then loads, with the same connections and in alternating
// slices, GET /api/v1/orders?limit=50 and POST /api/mcp tools/call
// list_orders {limit: 50}, which answer the same page (checked first). Writes
// bench/RESULTS-mcp.md; the database and the child are removed at the end.
//
// Rate limits: SPEC's 300 REST requests and 120 MCP messages per minute per
// key would turn a load test into a 429 test. The service's own config knobs
// RATE_LIMIT_REST_PER_MINUTE and RATE_LIMIT_MCP_PER_MINUTE (src/config.ts,
// README) are raised for the child, equally for both sides: every request
// still pays the key lookup and the limiter's consume().
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { openDb } from '../src/platform/db/open-db.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { provisionAndSeed, settle } from './fixtures.ts';
import { CpuMeter, waitForQuiet, type CpuShare } from './cpu.ts';
import { benchTools, setting } from './bench-tools.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SIZE = { orders: setting('BENCH_ORDERS', 100_000), products: 200, customers: 30_000 };
const CONNECTIONS = setting('BENCH_CONNECTIONS', 20);
const WARMUP_SECONDS = setting('BENCH_WARMUP_SECONDS', 2);
const SECONDS = setting('BENCH_SECONDS', 10);
const ROUNDS = Math.max(1, setting('BENCH_ROUNDS', 5));
const QUIET_BUDGET = { seconds: setting('BENCH_QUIET_WAIT_SECONDS', 120) };
const PAGE = 50;
const RATE_LIMIT_PER_MINUTE = '100000000'; // the knobs' maximum (src/config.ts)
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-mcp.md');
/** Another checkout to measure (a before/after comparison); this one by default. */
const SERVICE_DIR = process.env.BENCH_SERVICE_DIR ? path.resolve(process.env.BENCH_SERVICE_DIR) : null;
const MCP_VERSION = '2025-06-18';

const { log, cleanups, createDatabase, run } = benchTools('bench:mcp', ADMIN_URL, 'merx_mcp_bench');

/** One side of the comparison: a fixed request autocannon repeats. */
interface Side {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Slice {
  latencies: number[];
  seconds: number;
  failures: Map<string, number>;
  bytes: number;
}

function runSlice(baseUrl: string, side: Side, seconds: number): Promise<Slice> {
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: baseUrl + side.path,
        connections: CONNECTIONS,
        duration: seconds,
        pipelining: 1,
        timeout: 30,
        method: side.method,
        headers: side.headers,
        body: side.body,
      },
      (err, result) => {
        if (err) return reject(err);
        if (result.errors) failures.set('connection errors', result.errors);
        resolve({ latencies, seconds: (result.finish.getTime() - result.start.getTime()) / 1000, failures, bytes: result.throughput.total });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
      else failures.set(`HTTP ${statusCode}`, (failures.get(`HTTP ${statusCode}`) ?? 0) + 1);
    });
  });
}

interface Stats {
  requests: number;
  seconds: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  failures: string;
  otherCores: number | null;
  benchCores: number | null;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summarise(slices: Slice[], shares: Array<CpuShare | null>): Stats {
  const sorted = Float64Array.from(slices.flatMap((s) => s.latencies)).sort();
  const seconds = slices.reduce((sum, s) => sum + s.seconds, 0);
  const failures = new Map<string, number>();
  for (const slice of slices) for (const [what, n] of slice.failures) failures.set(what, (failures.get(what) ?? 0) + n);
  const measured = shares.every((s) => s !== null);
  const weighted = (pick: (s: CpuShare) => number) => shares.reduce((sum, s, i) => sum + pick(s!) * slices[i].seconds, 0) / seconds;
  return {
    requests: sorted.length,
    seconds,
    reqPerSec: sorted.length / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    failures: [...failures].map(([what, n]) => `${n}x ${what}`).join(', '),
    otherCores: measured ? weighted((s) => s.otherCores) : null,
    benchCores: measured ? weighted((s) => s.benchCores) : null,
  };
}

/** Checks both sides answer the same page before anything is measured; returns their body sizes. */
async function checkSamePage(baseUrl: string, rest: Side, mcp: Side): Promise<{ restBytes: number; mcpBytes: number; rows: number }> {
  const restRes = await fetch(baseUrl + rest.path, { method: rest.method, headers: rest.headers });
  const restText = await restRes.text();
  assert.equal(restRes.status, 200, restText);
  const mcpRes = await fetch(baseUrl + mcp.path, { method: mcp.method, headers: mcp.headers, body: mcp.body });
  const mcpText = await mcpRes.text();
  assert.equal(mcpRes.status, 200, mcpText);
  const rpc = JSON.parse(mcpText);
  assert.equal(rpc.result?.isError, false, mcpText.slice(0, 500));
  const restBody = JSON.parse(restText);
  assert.deepEqual(rpc.result.structuredContent, restBody, 'tools/call list_orders answers the same page as GET /api/v1/orders');
  // The same JSON, not necessarily the same bytes: REST serialises through the response schema (key order of line items may differ).
  assert.deepEqual(JSON.parse(rpc.result.content[0].text), restBody);
  assert.equal(restBody.data.length, PAGE);
  return { restBytes: Buffer.byteLength(restText), mcpBytes: Buffer.byteLength(mcpText), rows: restBody.data.length };
}

const fmt = (n: number | null, digits = 2) => (n === null || Number.isNaN(n) ? '?' : n.toFixed(digits));

async function main(): Promise<void> {
  const started = performance.now();
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const databaseUrl = await createDatabase();

  // The child inherits this environment (bench/service-process.ts): raise both limits alike.
  process.env.RATE_LIMIT_REST_PER_MINUTE = RATE_LIMIT_PER_MINUTE;
  process.env.RATE_LIMIT_MCP_PER_MINUTE = RATE_LIMIT_PER_MINUTE;
  const service: ServiceProcess = await startServiceProcess(
    databaseUrl,
    adminToken,
    SERVICE_DIR ? { main: path.join(SERVICE_DIR, 'src', 'main.ts') } : {},
  );
  cleanups.push({ name: 'stop service', run: () => service.stop() });
  log(`service pid ${service.pid} at ${service.url}`);

  log(`seeding ${SIZE.orders.toLocaleString('en-US')} orders through the operator API…`);
  const tenant = await provisionAndSeed(service.url, adminToken, SIZE);
  log(`seeded in ${tenant.seedSeconds.toFixed(1)} s`);
  const db = await openDb({ databaseUrl, dataDir: '' });
  cleanups.push({ name: 'close pool', run: () => db.close() });
  await settle(db);

  const auth = { authorization: `Bearer ${tenant.key}` };
  const rest: Side = { name: 'REST', method: 'GET', path: `/api/v1/orders?limit=${PAGE}`, headers: auth };
  const mcp: Side = {
    name: 'MCP',
    method: 'POST',
    path: '/api/mcp',
    // What an MCP client sends after initialize (stateless server: no session to set up per request).
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MCP_VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_orders', arguments: { limit: PAGE } } }),
  };
  const sizes = await checkSamePage(service.url, rest, mcp);
  log(`same page both ways: ${sizes.rows} orders; REST body ${sizes.restBytes} B, MCP body ${sizes.mcpBytes} B`);

  const meter = new CpuMeter(async () => {
    const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
    return [process.pid, service.pid, ...rows.map((r) => r.pid)];
  });
  const busyBefore = await waitForQuiet(QUIET_BUDGET);
  if (busyBefore !== null && busyBefore > 0.3)
    log(`machine busy (${busyBefore.toFixed(2)} cores) and the quiet-wait budget is spent: measuring anyway`);

  if (WARMUP_SECONDS > 0) {
    await runSlice(service.url, rest, WARMUP_SECONDS);
    await runSlice(service.url, mcp, WARMUP_SECONDS);
  }
  // Alternating slices, so whatever else the machine does weighs on both sides alike.
  const slices = { REST: [] as Slice[], MCP: [] as Slice[] };
  const shares = { REST: [] as Array<CpuShare | null>, MCP: [] as Array<CpuShare | null> };
  const sliceSeconds = SECONDS / ROUNDS;
  for (let round = 0; round < ROUNDS; round++) {
    if (round > 0) await waitForQuiet(QUIET_BUDGET); // what is left of the budget: other work that started meanwhile
    for (const side of round % 2 === 0 ? [rest, mcp] : [mcp, rest]) {
      await meter.begin();
      slices[side.name as 'REST' | 'MCP'].push(await runSlice(service.url, side, sliceSeconds));
      shares[side.name as 'REST' | 'MCP'].push(await meter.end());
      const death = service.death();
      if (death) throw new Error(death);
    }
  }
  const restStats = summarise(slices.REST, shares.REST);
  const mcpStats = summarise(slices.MCP, shares.MCP);
  for (const s of [restStats, mcpStats]) {
    log(
      `${s === restStats ? 'REST' : 'MCP '} ${fmt(s.reqPerSec, 0)} req/s p50 ${fmt(s.p50Ms)} ms p99 ${fmt(s.p99Ms)} ms other CPU ${fmt(s.otherCores)}${s.failures ? ` FAILURES ${s.failures}` : ''}`,
    );
  }

  const cpus = os.cpus();
  const pgVersion = (await db.query<{ v: string }>('SELECT version() AS v')).rows[0].v.split(' on ')[0];
  const autocannonVersion = JSON.parse(
    fs.readFileSync(path.join(import.meta.dirname, '..', 'node_modules', 'autocannon', 'package.json'), 'utf8'),
  ).version;
  const ratio = mcpStats.reqPerSec / restStats.reqPerSec;
  const p99Ratio = mcpStats.p99Ms / restStats.p99Ms;
  const valid = !restStats.failures && !mcpStats.failures;
  const row = (name: string, s: Stats, bytes: number) =>
    `| ${name} | ${s.requests.toLocaleString('en-US')} | ${fmt(s.reqPerSec, 0)} | ${fmt(s.p50Ms)} | ${fmt(s.p99Ms)} | ${bytes.toLocaleString('en-US')} | ${fmt(s.benchCores)} | ${fmt(s.otherCores)} |`;
  const report = [
    '# MCP overhead: tools/call list_orders vs GET /api/v1/orders',
    '',
    `Written by \`node bench/mcp.ts\` (do not edit by hand; rerun instead). ${valid ? '' : '**INVALID RUN: some answers were not 2xx: ' + [restStats.failures, mcpStats.failures].filter(Boolean).join('; ') + '**'}`,
    '',
    `**MCP/REST throughput ratio: ${fmt(ratio)}** (MCP serves ${fmt(ratio * 100, 0)}% of REST's requests per second; overhead ${fmt((1 - ratio) * 100, 0)}%). ` +
      `MCP/REST p99 ratio: ${fmt(p99Ratio)}.`,
    '',
    '| side | requests | req/s | p50 ms | p99 ms | response bytes | bench CPU (cores) | other CPU (cores) |',
    '|---|---|---|---|---|---|---|---|',
    row(`REST \`GET /api/v1/orders?limit=${PAGE}\``, restStats, sizes.restBytes),
    row(`MCP \`tools/call list_orders {limit: ${PAGE}}\``, mcpStats, sizes.mcpBytes),
    '',
    '## Run',
    '',
    `- Date: ${new Date().toISOString()}`,
    `- Service: ${SERVICE_DIR ?? 'this checkout'}${process.env.BENCH_REVISION ? ` (${process.env.BENCH_REVISION})` : ''}`,
    `- Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM; ${os.type()} ${os.release()} ${os.arch()}`,
    `- Node ${process.version}; ${pgVersion}; autocannon ${autocannonVersion}`,
    `- Data: ${SIZE.orders.toLocaleString('en-US')} orders, ${SIZE.products} products, ${SIZE.customers.toLocaleString('en-US')} customers, seeded through the operator API in ${tenant.seedSeconds.toFixed(1)} s, then VACUUM (ANALYZE)`,
    `- Load: ${CONNECTIONS} connections, closed loop, no pipelining; ${WARMUP_SECONDS} s warm-up per side, then ${SECONDS} s per side in ${ROUNDS} alternating slices of ${fmt(sliceSeconds, 1)} s (REST first in even rounds, MCP first in odd ones)`,
    `- Machine load before measuring: ${fmt(busyBefore)} cores busy. "bench CPU" is what this process (autocannon), the service and its PostgreSQL backends took during the measured seconds, "other CPU" everything else on the machine: trust the numbers when it is near 0`,
    `- Total run: ${fmt((performance.now() - started) / 1000, 0)} s`,
    '',
    '## What is compared',
    '',
    `Both sides use one key and answer the same first page of ${PAGE} orders (checked before measuring: \`structuredContent\` and the parsed \`content[0].text\` deep-equal the REST body). ` +
      `The MCP request is what a client sends after \`initialize\` on this stateless server: \`MCP-Protocol-Version: ${MCP_VERSION}\`, one JSON-RPC message, a JSON answer. ` +
      'The MCP answer carries the page twice (SPEC MCP: `content[0].text` is the stringified JSON and `structuredContent` the same JSON), so it is about twice the bytes and serialises the page twice; ' +
      'the rest is the JSON-RPC envelope, reading and parsing the request body, and validating the tool arguments. REST serialises through its compiled response schema; MCP stringifies the page with JSON.stringify and then again, escaped, inside the envelope.',
    '',
    'SPEC Limits (300 REST requests, 120 MCP messages per minute per key) would answer 429 within the first second of load, so the child service runs with the existing config knobs ' +
      `\`RATE_LIMIT_REST_PER_MINUTE=${RATE_LIMIT_PER_MINUTE}\` and \`RATE_LIMIT_MCP_PER_MINUTE=${RATE_LIMIT_PER_MINUTE}\` (src/config.ts): both sides still authenticate the key and consume from their limiter on every request.`,
    '',
  ].join('\n');
  fs.writeFileSync(RESULTS_FILE, report);
  log(`MCP/REST req/s ratio ${fmt(ratio)}, p99 ratio ${fmt(p99Ratio)}; wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
  if (!valid) process.exitCode = 1;
}

await run(main);
