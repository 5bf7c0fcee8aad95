// npm run bench:overload (issue 27): the order list's first page at 50, 200
// and 1,000 connections, on PostgreSQL, with load shedding off (before) and on
// (after, the default bounds) in the same run against the same database.
// Records the served rate (2xx a second), p50/p99 of the 2xx answers, the
// share of 503s, and what the shedding reads: the service's event-loop delay
// (prom-client's monitor, scraped from /metrics after each step) and its CPU.
// Writes its section into bench/RESULTS-overload.md.
//
// PostgreSQL only: with PGlite the database runs inside the service's own
// event loop, so "the loop is overloaded" and "the database is busy" are one
// thing there and a connection count says little; the figures (p99
// 1.9 s at 1,000 connections, nothing refused) were measured on PostgreSQL.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import http from 'node:http';
import autocannon from 'autocannon';
import { openDb } from '../src/platform/db/open-db.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { addBenchKeys, provisionAndSeed, settle } from './fixtures.ts';
import { roundRobin } from './load.ts';
import { benchTools, setting } from './bench-tools.ts';
import { pidJiffies } from './cpu.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const ORDERS = setting('BENCH_ORDERS', 20_000);
const SECONDS = setting('BENCH_SECONDS', 10);
const WARMUP = setting('BENCH_WARMUP_SECONDS', 2);
const KEYS = setting('BENCH_KEYS', 200);
const STEPS = (process.env.BENCH_CONNECTIONS || '50,200,1000').split(',').map(Number);
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-overload.md');
const LIST_PATH = '/api/v1/orders?limit=50';

const { log, cleanups, createDatabase, run } = benchTools('overload', ADMIN_URL, 'merx_overload');

interface Step {
  connections: number;
  servedPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Share of all answers that were 503 unavailable. */
  shed: number;
  /** Answers neither 2xx nor 503, and connection errors or timeouts. */
  other: number;
  errors: number;
  /** Mean and p99 event-loop delay of the service over the step, ms (prom-client, reset at each scrape). */
  loopMeanMs: number;
  loopP99Ms: number;
  /** Cores' worth of CPU the service used. */
  serviceCores: number;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}

async function loopDelay(service: ServiceProcess, adminToken: string): Promise<{ meanMs: number; p99Ms: number }> {
  const text = await (await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })).text();
  const read = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  return { meanMs: read('merx_nodejs_eventloop_lag_mean_seconds'), p99Ms: read('merx_nodejs_eventloop_lag_p99_seconds') };
}

function load(service: ServiceProcess, connections: number, seconds: number, nextKey: () => string) {
  const served: number[] = [];
  let shed = 0;
  let other = 0;
  return new Promise<{ served: number[]; shed: number; other: number; errors: number; seconds: number }>((resolve, reject) => {
    const instance = autocannon(
      {
        url: service.url,
        connections,
        duration: seconds,
        timeout: 30,
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => ({ ...request, path: LIST_PATH, headers: { ...request.headers, authorization: `Bearer ${nextKey()}` } }),
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        resolve({ served, shed, other, errors: result.errors + result.timeouts, seconds: (result.finish.getTime() - result.start.getTime()) / 1000 });
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) served.push(ms);
      else if (status === 503) shed++;
      else other++;
    });
  });
}

/**
 * Clients that honour Retry-After, which autocannon cannot be: each of the
 * `connections` loops sends its next request when the previous answer came,
 * and after a 503 first waits the Retry-After seconds (a well-behaved client;
 * the generated client package does so). node:http on keep-alive sockets.
 */
function politeLoad(service: ServiceProcess, connections: number, seconds: number, nextKey: () => string) {
  const served: number[] = [];
  let shed = 0;
  let other = 0;
  let errors = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const url = new URL(LIST_PATH, service.url);
  const once = () =>
    new Promise<{ status: number; retryAfterSec: number }>((resolve) => {
      const sent = performance.now();
      const request = http.get(
        { agent, host: url.hostname, port: url.port, path: LIST_PATH, headers: { authorization: `Bearer ${nextKey()}` }, timeout: 30_000 },
        (response) => {
          response.resume();
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            if (performance.now() <= deadline) {
              if (status >= 200 && status < 300) served.push(performance.now() - sent);
              else if (status === 503) shed++;
              else other++;
            }
            resolve({ status, retryAfterSec: Number(response.headers['retry-after'] ?? 1) });
          });
        },
      );
      request.on('error', () => {
        errors++;
        resolve({ status: 0, retryAfterSec: 1 });
      });
    });
  const loop = async () => {
    while (performance.now() < deadline) {
      const { status, retryAfterSec } = await once();
      if (status === 503)
        await new Promise((resolve) => setTimeout(resolve, Math.min(retryAfterSec * 1000, Math.max(0, deadline - performance.now()))));
    }
  };
  return Promise.all(Array.from({ length: connections }, loop)).then(() => {
    agent.destroy();
    return { served, shed, other, errors, seconds: (performance.now() - started) / 1000 };
  });
}

type Client = 'autocannon' | 'polite';

async function measure(service: ServiceProcess, adminToken: string, connections: number, nextKey: () => string, client: Client): Promise<Step> {
  const drive = client === 'polite' ? politeLoad : load;
  if (WARMUP) await drive(service, connections, WARMUP, nextKey);
  await loopDelay(service, adminToken); // resets the monitor
  const cpuBefore = pidJiffies(service.pid);
  const result = await drive(service, connections, SECONDS, nextKey);
  const cpuAfter = pidJiffies(service.pid);
  const loop = await loopDelay(service, adminToken);
  const sorted = Float64Array.from(result.served).sort();
  const answers = result.served.length + result.shed + result.other;
  // Let the queue drain before the next step, so a step does not pay for the one before.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  return {
    connections,
    servedPerSec: result.served.length / result.seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    shed: answers ? result.shed / answers : 0,
    other: result.other,
    errors: result.errors,
    loopMeanMs: loop.meanMs,
    loopP99Ms: loop.p99Ms,
    serviceCores: cpuBefore !== null && cpuAfter !== null ? (cpuAfter - cpuBefore) / 100 / result.seconds : NaN,
  };
}

function cpuModel(): string {
  try {
    return /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-';

function table(rows: Array<{ label: string; step: Step }>): string {
  const lines = [
    '| shedding, client | connections | served (2xx/s) | p50 2xx | p99 2xx | 503 share | other non-2xx / errors | loop delay mean / p99 | service CPU |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const { label, step: s } of rows) {
    lines.push(
      `| ${label} | ${fmt(s.connections)} | ${fmt(s.servedPerSec)} | ${fmt(s.p50Ms)} ms | ${fmt(s.p99Ms)} ms | ${fmt(s.shed * 100, 1)}% | ${s.other} / ${s.errors} | ${fmt(s.loopMeanMs)} / ${fmt(s.loopP99Ms)} ms | ${fmt(s.serviceCores, 2)} cores |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const started = new Date();
  const loadBefore = os.loadavg()[0];
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const databaseUrl = await createDatabase();
  // The read path, not SPEC's per-key limits: raised, and the load spread over many keys (fixtures.ts addBenchKeys).
  const base = { RATE_LIMIT_REST_PER_MINUTE: '100000000', WORKERS: '0' };
  const off = { ...base, OVERLOAD_SHEDDING: '0' };
  const on = { ...base, OVERLOAD_SHEDDING: '1' };
  const sides: Array<{ label: string; env: Record<string, string>; client: Client }> = [
    { label: 'off (before), autocannon', env: off, client: 'autocannon' },
    { label: 'on (after), autocannon', env: on, client: 'autocannon' },
    { label: 'off (before), polite', env: off, client: 'polite' },
    { label: 'on (after), polite', env: on, client: 'polite' },
  ];
  let nextKey: (() => string) | null = null;
  const rows: Array<{ label: string; step: Step }> = [];
  for (const side of sides) {
    const service = await startServiceProcess(databaseUrl, adminToken, { env: side.env });
    const stop = { name: 'stop service', run: () => service.stop() };
    cleanups.push(stop);
    log(`shedding ${side.label}: service pid ${service.pid}`);
    if (!nextKey) {
      log(`seeding ${ORDERS.toLocaleString('en-US')} orders…`);
      const tenant = await provisionAndSeed(service.url, adminToken, { orders: ORDERS, products: 100, customers: Math.max(100, ORDERS / 4) });
      const db = await openDb({ databaseUrl, dataDir: '' });
      nextKey = roundRobin([tenant.key, ...(await addBenchKeys(db, tenant.accountId, KEYS - 1))]);
      await settle(db);
      await db.close();
    }
    for (const connections of STEPS) {
      const step = await measure(service, adminToken, connections, nextKey, side.client);
      log(
        `${side.label} ${connections} connections: ${fmt(step.servedPerSec)} 2xx/s, p50 ${fmt(step.p50Ms)} ms, p99 ${fmt(step.p99Ms)} ms, 503 ${fmt(step.shed * 100, 1)}%, loop ${fmt(step.loopMeanMs)}/${fmt(step.loopP99Ms)} ms`,
      );
      rows.push({ label: side.label, step });
      if (service.death()) throw new Error(service.death()!);
    }
    await service.stop();
    cleanups.splice(cleanups.indexOf(stop), 1);
  }
  const section = [
    `## ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `- Machine: ${os.availableParallelism()} cores (nproc), ${cpuModel()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; load average ${loadBefore.toFixed(2)} at the start.`,
    `- PostgreSQL, ${ORDERS.toLocaleString('en-US')} orders, \`GET ${LIST_PATH}\` over ${KEYS} keys (rate limits raised); ${SECONDS} s per step after ${WARMUP} s of warm-up, 2 s pause between steps; autocannon on the same machine.`,
    '- "on" uses the default bounds (docs/operations.md, load shedding); "off" is `OVERLOAD_SHEDDING=0`. "autocannon" clients send again the',
    '  moment an answer comes, 503 or not; "polite" clients (node:http, bench/overload.ts politeLoad) wait Retry-After after a 503.',
    '',
    table(rows),
    '',
  ].join('\n');
  const header = [
    '# Overload: the order list at 50, 200 and 1,000 connections, load shedding off and on',
    '',
    'Written by `npm run bench:overload` (bench/overload.ts); each run adds its section at the top. The machine (2 cores) is',
    'shared with PostgreSQL, autocannon and whatever else runs; compare the rows of one section. "served" counts 2xx answers',
    'only, and p50/p99 are of the 2xx answers; "503 share" is of all answers. Loop delay is prom-client\'s event-loop monitor',
    'in the service over the step (mean and p99 of its samples), read from /metrics, which is never shed.',
    '',
  ].join('\n');
  const previous = fs.existsSync(RESULTS_FILE)
    ? fs
        .readFileSync(RESULTS_FILE, 'utf8')
        .split('\n## ')
        .slice(1)
        .map((s) => `## ${s}`)
    : [];
  fs.writeFileSync(RESULTS_FILE, [header, section, ...previous].join('\n'));
  log(`written to ${RESULTS_FILE}`);
}

await run(main);
