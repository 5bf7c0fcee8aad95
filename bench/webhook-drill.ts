// node bench/webhook-drill.ts — the webhook flow drill (issue 42): 10,000
// events held while the receiver is down, then let go at a rate.
// - paused: the subscription is paused, the events are made, the receiver
//   comes back, and one PATCH resumes it with rate_per_second 200;
// - circuit: the circuit breaker on and a rate of 200, the receiver down (it
//   resets every connection): the first failures open the circuit and the
//   rest are held; the receiver comes back, the failed attempts' backoffs
//   and the probe's wait pass ("time passes" in the database, as the tests
//   do), the probe succeeds, the circuit closes and the held drain.
// Two service processes (PostgreSQL, a worker in each: the rate is counted
// across both); the events are PATCHes of orders' admin notes, spread over
// both. The receiver timestamps each request when its headers arrive (the
// receiver's "begin") and counts each (subscription, event id) once; the
// report gives the drain rate against the set rate, lost, duplicates, the
// busiest second of starts at the receiver and the time to drain, and writes
// bench/RESULTS-webhooks-flow.md. Settings: BENCH_PG_URL (an admin URL),
// BENCH_DRILL_EVENTS (10,000), BENCH_DRILL_RATE (200), BENCH_DRILL_INSTANCES
// (2), BENCH_DRILL_SCENARIOS (paused,circuit), BENCH_DRILL_LOAD (a note on
// other load, for the report).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import https from 'node:https';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { testCertificates } from '../test/helpers/https-receiver.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { setting } from './bench-tools.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const EVENTS = setting('BENCH_DRILL_EVENTS', 10_000);
const RATE = setting('BENCH_DRILL_RATE', 200);
const INSTANCES = setting('BENCH_DRILL_INSTANCES', 2);
const SCENARIOS = (process.env.BENCH_DRILL_SCENARIOS ?? 'paused,circuit').split(',') as Array<'paused' | 'circuit'>;
const CONCURRENCY = 20;
const ORDERS = 200;
const DRAIN_TIMEOUT_MS = Math.max(300_000, (EVENTS / RATE) * 3_000);
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-webhooks-flow.md');
const ADMIN_TOKEN = `bench-drill-${crypto.randomBytes(12).toString('hex')}`;
const SCOPES = ['webhooks:read', 'webhooks:write', 'orders:read', 'orders:write'];

const log = (message: string) => process.stdout.write(`[bench:webhook-drill ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const wallNow = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------- receiver

interface Receiver {
  origin: string;
  caFile: string;
  /** While down, every connection is reset before TLS: nothing arrives, each attempt fails. */
  down: boolean;
  /** Going down also drops the connections kept alive (a receiver that went away). */
  setDown(down: boolean): void;
  /** Per path: when each first arrival began (receiver's clock), and the duplicates. */
  arrivals: Map<string, number[]>;
  duplicates: Map<string, number>;
  resets: number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const certs = testCertificates();
  const seen = new Set<string>();
  const receiver: Receiver = {
    origin: '',
    caFile: certs.caFile,
    down: false,
    setDown: () => {},
    arrivals: new Map(),
    duplicates: new Map(),
    resets: 0,
    close: async () => {},
  };
  const server = https.createServer({ key: fs.readFileSync(certs.keyFile), cert: fs.readFileSync(certs.certFile) }, (req, res) => {
    const began = wallNow();
    const pathname = (req.url ?? '/').split('?')[0];
    const key = `${pathname} ${String(req.headers['x-merx-event-id'])}`;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      if (seen.has(key)) {
        receiver.duplicates.set(pathname, (receiver.duplicates.get(pathname) ?? 0) + 1);
        return;
      }
      seen.add(key);
      let list = receiver.arrivals.get(pathname);
      if (!list) receiver.arrivals.set(pathname, (list = []));
      list.push(began);
    });
  });
  server.on('connection', (socket) => {
    if (!receiver.down) return;
    receiver.resets++;
    socket.destroy();
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  const address = server.address();
  receiver.origin = `https://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  receiver.setDown = (down) => {
    receiver.down = down;
    if (down) server.closeAllConnections();
  };
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

// ---------------------------------------------------------------- API

async function call(base: string, method: string, route: string, token: string, body?: unknown): Promise<any> {
  const res = await fetch(new URL(route, base), {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${route} -> ${res.status} ${text.slice(0, 400)}`);
  return text ? JSON.parse(text) : null;
}

/** EVENTS PATCHes of admin notes over the orders, CONCURRENCY in flight, spread over the instances. */
async function makeEvents(services: ServiceProcess[], key: string, orders: string[], tag: string): Promise<number> {
  let next = 0;
  let made = 0;
  const worker = async (w: number) => {
    for (let i = next++; i < EVENTS; i = next++) {
      const base = services[(w + i) % services.length].url;
      await call(base, 'PATCH', `/api/v1/orders/${orders[i % orders.length]}`, key, { admin_notes: `${tag} ${i}` });
      made++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
  return made;
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------- one scenario

interface Outcome {
  scenario: string;
  held: number;
  sentWhileDown: number;
  makeSeconds: number;
  received: number;
  lost: number;
  duplicates: number;
  drainSeconds: number;
  drainRate: number;
  steadyRate: number;
  busiestSlidingSecond: number;
  busiestCalendarSecond: number;
  statuses: string;
  attemptsLogged: number;
  load: string;
}

function busiest(times: number[]): { sliding: number; calendar: number } {
  const sorted = [...times].sort((a, b) => a - b);
  let sliding = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[j] <= sorted[i] - 1000) j++;
    sliding = Math.max(sliding, i - j + 1);
  }
  const buckets = new Map<number, number>();
  for (const t of sorted) buckets.set(Math.floor(t / 1000), (buckets.get(Math.floor(t / 1000)) ?? 0) + 1);
  return { sliding, calendar: Math.max(0, ...buckets.values()) };
}

async function scenario(name: 'paused' | 'circuit', services: ServiceProcess[], receiver: Receiver, db: pg.Pool): Promise<Outcome> {
  const [a] = services;
  log(`== ${name}`);
  const account = await call(a.url, 'POST', '/admin/api/accounts', ADMIN_TOKEN, { name: `Drill ${name}`, email: `drill-${name}@example.com` });
  const accountId: string = account.data.id;
  const key: string = (await call(a.url, 'POST', `/admin/api/accounts/${accountId}/keys`, ADMIN_TOKEN, { name: 'drill', scopes: SCOPES })).key;
  await call(a.url, 'POST', `/admin/api/accounts/${accountId}/seed`, ADMIN_TOKEN, { orders: ORDERS, products: 5, seed: 7 });
  const orders = (await db.query<{ id: string }>('SELECT id FROM orders WHERE account_id = $1', [accountId])).rows.map((r) => r.id);
  const hookPath = `/drill-${name}/${crypto.randomUUID()}`;
  const sub = (await call(a.url, 'POST', '/api/v1/webhooks', key, { url: receiver.origin + hookPath, events: ['order.updated'] })).data;
  const flowOf = async () => (await call(a.url, 'GET', `/api/v1/webhooks/${sub.id}/flow`, key)).data;
  const patchFlow = (body: unknown) => call(services[services.length - 1].url, 'PATCH', `/api/v1/webhooks/${sub.id}/flow`, key, body);

  receiver.setDown(true);
  const resetsBefore = receiver.resets;
  await patchFlow(name === 'paused' ? { paused: true } : { circuit_breaker: true, rate_per_second: RATE });
  const madeAt = wallNow();
  const made = await makeEvents(services, key, orders, name);
  const makeSeconds = (wallNow() - madeAt) / 1000;
  log(`  ${made} events in ${makeSeconds.toFixed(1)} s`);
  let held: number;
  if (name === 'paused') {
    held = (await until('every delivery held', async () => ((await flowOf()).held === EVENTS ? EVENTS : null), 120_000)).valueOf();
  } else {
    await until('the circuit open', async () => (await flowOf()).circuit === 'open', 120_000);
    // Nothing in flight: every attempt made while down has failed.
    await sleep(2_000);
    held = (await flowOf()).held;
  }
  const sentWhileDown = receiver.resets - resetsBefore;
  log(`  held ${held}; connections reset while down ${sentWhileDown}`);

  receiver.setDown(false);
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const resumedAt = wallNow();
  if (name === 'paused') await patchFlow({ paused: false, rate_per_second: RATE });
  else {
    // "Time passes" in the database: the backoffs of the attempts that failed while down (the first probe's too,
    // if it fell due while the events were being made), and the probe's wait.
    const { rowCount } = await db.query(
      `UPDATE webhook_deliveries SET next_attempt_at = now() WHERE webhook_id = $1 AND status = 'pending' AND next_attempt_at > now()`,
      [sub.id],
    );
    log(`  ${rowCount} failed attempts' backoffs passed`);
    await db.query(`UPDATE webhook_flows SET next_probe_at = now() WHERE webhook_id = $1`, [sub.id]);
    await call(a.url, 'POST', '/admin/api/jobs/webhook-deliveries/run', ADMIN_TOKEN, {});
  }
  const arrivals = () => receiver.arrivals.get(hookPath) ?? [];
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  let reported = Date.now();
  while (arrivals().length < EVENTS && Date.now() < deadline) {
    await sleep(100);
    if (Date.now() - reported > 10_000) {
      reported = Date.now();
      log(`  received ${arrivals().length}/${EVENTS}`);
    }
  }
  // Late duplicates, if any, before counting.
  await sleep(2_000);
  const times = arrivals();
  const last = Math.max(...times);
  const first = Math.min(...times);
  const most = busiest(times);
  const statuses = (
    await db.query<{ status: string; attempt: number; n: number }>(
      'SELECT status, attempt, count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 GROUP BY 1, 2 ORDER BY 3 DESC',
      [sub.id],
    )
  ).rows
    .map((r) => `${r.status} on attempt ${r.attempt}: ${r.n}`)
    .join(', ');
  const attemptsLogged = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_attempts WHERE webhook_id = $1', [sub.id])).rows[0].n;
  const outcome: Outcome = {
    scenario: name,
    held,
    sentWhileDown,
    makeSeconds,
    received: times.length,
    lost: EVENTS - times.length,
    duplicates: receiver.duplicates.get(hookPath) ?? 0,
    drainSeconds: (last - resumedAt) / 1000,
    drainRate: times.length / ((last - resumedAt) / 1000),
    steadyRate: (times.length - 1) / ((last - first) / 1000),
    busiestSlidingSecond: most.sliding,
    busiestCalendarSecond: most.calendar,
    statuses,
    attemptsLogged,
    load,
  };
  log(
    `  ${name}: ${outcome.received}/${EVENTS} in ${outcome.drainSeconds.toFixed(1)} s (${outcome.drainRate.toFixed(1)}/s, steady ${outcome.steadyRate.toFixed(1)}/s) at a rate of ${RATE}; ` +
      `busiest second ${most.sliding} (sliding) ${most.calendar} (calendar); lost ${outcome.lost}, duplicates ${outcome.duplicates}; ${statuses}; ${attemptsLogged} attempts logged`,
  );
  return outcome;
}

// ---------------------------------------------------------------- report

function report(outcomes: Outcome[], context: string[]): string {
  const rows = outcomes.map(
    (o) =>
      `| ${o.scenario} | ${o.held} | ${o.sentWhileDown} | ${o.received} | ${o.lost} | ${o.duplicates} | ${o.drainSeconds.toFixed(1)} s | ${o.drainRate.toFixed(1)}/s (${((o.drainRate / RATE) * 100).toFixed(0)}%) | ${o.steadyRate.toFixed(1)}/s | ${o.busiestSlidingSecond} / ${o.busiestCalendarSecond} | ${o.load} |`,
  );
  return [
    `## Drill, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    ...context.map((c) => `- ${c}`),
    '',
    `| scenario | held | connections reset while down | received | lost | duplicates | time to drain (resume to last arrival) | drain rate (of ${RATE}/s) | first to last arrival | busiest second at the receiver, sliding / calendar | load 1/5/15 at resume |`,
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...outcomes.map(
      (o) => `- ${o.scenario}: deliveries ${o.statuses}; ${o.attemptsLogged} attempts logged; events made in ${o.makeSeconds.toFixed(1)} s.`,
    ),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const name = `flow_drill_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const version = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version;
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const receiver = await startReceiver();
  const services: ServiceProcess[] = [];
  const db = new pg.Pool({ connectionString: url.toString(), max: 2 });
  const outcomes: Outcome[] = [];
  try {
    const env = {
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      NODE_EXTRA_CA_CERTS: receiver.caFile,
      RATE_LIMIT_REST_PER_MINUTE: '10000000',
    };
    // One after the other: the first migrates the database.
    for (let i = 0; i < INSTANCES; i++) services.push(await startServiceProcess(url.toString(), ADMIN_TOKEN, { env }));
    log(`database ${name}; ${INSTANCES} instances: ${services.map((s) => s.url).join(', ')}`);
    for (const s of SCENARIOS) outcomes.push(await scenario(s, services, receiver, db));
  } finally {
    await db.end();
    await Promise.all(services.map((s) => s.stop()));
    await receiver.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: path.join(import.meta.dirname, '..') })
    .toString()
    .trim();
  const cpus = os.cpus();
  const text = report(outcomes, [
    `Commit ${commit}; ${EVENTS} events per scenario, rate_per_second ${RATE}, ${INSTANCES} service instances (a worker in each) on PostgreSQL ${version}.`,
    `Machine: ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; Node ${process.version}. Other load: ${process.env.BENCH_DRILL_LOAD ?? 'shared machine, not controlled'}.`,
  ]);
  process.stdout.write(`\n${text}\n`);
  const previous = fs.existsSync(RESULTS_FILE) ? fs.readFileSync(RESULTS_FILE, 'utf8') : '# Webhook flow (EXTENSIONS 9)\n\n';
  fs.writeFileSync(RESULTS_FILE, `${previous.trimEnd()}\n\n${text}`);
  log(`written to ${path.relative(process.cwd(), RESULTS_FILE)}`);
}

await main();
