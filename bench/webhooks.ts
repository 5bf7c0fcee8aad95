// node bench/webhooks.ts — the webhook delivery engine under fan-out load:
// 10,000 order.status_changed events (one PATCH /api/v1/orders/{id} each, at
// a bounded concurrency) to 5 subscriptions on a local HTTPS receiver, i.e.
// 50,000 deliveries. Measures deliveries per second at the receiver, the
// commit-to-receipt latency of every delivery (arrival time minus the
// envelope's created_at), the API's own PATCH throughput and latency while it
// fans out (next to a short baseline with no subscriptions), retries and
// duplicates, and who used the CPU. Every signature is verified.
// Writes bench/RESULTS-webhooks.md; the service child and the database are
// removed at the end, also on failure or Ctrl-C.
// Self-contained on purpose: bench/run.ts (orders) is maintained separately.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { testCertificates } from '../test/helpers/https-receiver.ts';
import { verifyMerxSignature } from '../src/modules/webhooks/signature.ts';

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const EVENTS = setting('BENCH_EVENTS', 10_000);
const SUBSCRIPTIONS = setting('BENCH_SUBSCRIPTIONS', 5);
const CONCURRENCY = setting('BENCH_CONCURRENCY', 20);
const BASELINE_EVENTS = setting('BENCH_BASELINE_EVENTS', 1_000);
/** The PATCH load stops early after this many seconds (the run then reports how many events it made). */
const LOAD_BUDGET_SECONDS = setting('BENCH_LOAD_BUDGET_SECONDS', 180);
/** After the last PATCH answered: how long to wait for the remaining deliveries. */
const DRAIN_SECONDS = setting('BENCH_DRAIN_SECONDS', 300);
const QUIET_WAIT_SECONDS = setting('BENCH_QUIET_WAIT_SECONDS', 60);
const BUCKET_SECONDS = setting('BENCH_BUCKET_SECONDS', 5);
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-webhooks.md');
const MAIN = path.join(import.meta.dirname, '..', 'src', 'main.ts');
const SCOPES = ['webhooks:read', 'webhooks:write', 'orders:read', 'orders:write'];
const EVENT_NAME = 'order.status_changed';
const ADMIN_TOKEN = `bench-webhooks-${crypto.randomBytes(12).toString('hex')}`;

const log = (message: string) => process.stdout.write(`[bench:webhooks ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Wall clock with sub-millisecond resolution, comparable with PostgreSQL's now() on the same machine. */
const wallNow = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------- cleanup

const cleanups: Array<{ name: string; run: () => Promise<void> }> = [];
async function cleanUp(): Promise<void> {
  while (cleanups.length) {
    const step = cleanups.pop()!;
    await step.run().catch((err) => log(`cleanup "${step.name}" failed: ${err instanceof Error ? err.message : err}`));
  }
}
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- database

async function adminQuery<T = any>(text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

async function createDatabase(): Promise<{ name: string; url: string }> {
  const name = `merx_bench_wh_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${crypto.randomBytes(2).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  cleanups.push({ name: `drop database ${name}`, run: async () => void (await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) });
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  log(`database ${name}`);
  return { name, url: url.toString() };
}

// ---------------------------------------------------------------- service child

interface Service {
  url: string;
  pid: number;
  death(): string | null;
}

function startService(env: Record<string, string>): Promise<Service> {
  const child: ChildProcess = spawn(process.execPath, [MAIN], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let death: string | null = null;
  let pending = '';
  const collect = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output = (output + text).slice(-20_000);
    pending += text;
    const cut = pending.lastIndexOf('\n');
    if (cut >= 0) {
      collectServiceLog(pending.slice(0, cut));
      pending = pending.slice(cut + 1);
    }
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  child.once('exit', (code, signal) => (death = `service exited (code ${code}, signal ${signal}); last output:\n${output.slice(-4000)}`));
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
      resolve({ url: match[1], pid: child.pid!, death: () => death });
    };
    child.stdout!.on('data', watch);
  });
}

/** Warnings and errors the service logged (LOG_LEVEL=warn, pino JSON lines): message -> count, and a few examples. */
const serviceLog = { counts: new Map<string, number>(), examples: [] as string[] };
function collectServiceLog(text: string): void {
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line);
      if (typeof entry.level !== 'number' || entry.level < 40) continue;
      const what = `${entry.level >= 50 ? 'error' : 'warn'}: ${entry.msg ?? ''}${entry.err?.message ? ` (${String(entry.err.message).slice(0, 160)})` : ''}`;
      serviceLog.counts.set(what, (serviceLog.counts.get(what) ?? 0) + 1);
      if (serviceLog.examples.length < 5) serviceLog.examples.push(line.slice(0, 600));
    } catch {
      // a partial line: ignored
    }
  }
}

// ---------------------------------------------------------------- HTTP client

const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(CONCURRENCY, 4) });

interface Answer {
  status: number;
  text: string;
  json: any;
}

function request(base: string, method: string, route: string, token: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const url = new URL(route, base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: any = null;
          try {
            json = text ? JSON.parse(text) : null;
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function must(answer: Promise<Answer>, what: string): Promise<any> {
  const res = await answer;
  if (res.status >= 300) throw new Error(`${what} -> ${res.status} ${res.text.slice(0, 500)}`);
  return res.json;
}

// ---------------------------------------------------------------- HTTPS receiver

interface Arrival {
  /** Receiver wall clock (ms) once the body was read. */
  at: number;
  /** at minus the envelope's created_at (ms). */
  latencyMs: number;
  orderId: string;
}

interface Receiver {
  origin: string;
  caFile: string;
  /** Path -> its subscription's secret, once known. */
  secrets: Map<string, string>;
  arrivals: Arrival[];
  /** First arrivals only, per (path, event id). */
  unique: number;
  duplicates: number;
  perPath: Map<string, number>;
  badSignatures: number;
  verified: number;
  malformed: string[];
  close(): Promise<void>;
}

/**
 * The HTTPS receiver runs in this process on loopback, with the throwaway CA
 * and 127.0.0.1 certificate of test/helpers/https-receiver.ts (testCertificates).
 * It is a lean variant of that helper's startHttpsReceiver: 50,000 deliveries
 * are timestamped and verified on arrival instead of kept whole in memory.
 * Every request is answered 200 at once.
 */
async function startReceiver(): Promise<Receiver> {
  const certs = testCertificates();
  const seen = new Set<string>();
  const receiver: Receiver = {
    origin: '',
    caFile: certs.caFile,
    secrets: new Map(),
    arrivals: [],
    unique: 0,
    duplicates: 0,
    perPath: new Map(),
    badSignatures: 0,
    verified: 0,
    malformed: [],
    close: async () => {},
  };
  const server = https.createServer({ key: fs.readFileSync(certs.keyFile), cert: fs.readFileSync(certs.certFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = wallNow();
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      const pathname = (req.url ?? '/').split('?')[0];
      const raw = Buffer.concat(chunks).toString('utf8');
      let envelope: any;
      try {
        envelope = JSON.parse(raw);
      } catch {
        if (receiver.malformed.length < 20) receiver.malformed.push(`${pathname}: body is not JSON`);
        return;
      }
      const secret = receiver.secrets.get(pathname);
      if (!secret) {
        if (receiver.malformed.length < 20) receiver.malformed.push(`${pathname}: unknown path`);
        return;
      }
      if (verifyMerxSignature(raw, req.headers['x-merx-signature'] as string | undefined, secret)) receiver.verified++;
      else receiver.badSignatures++;
      if (req.headers['x-merx-event-id'] !== envelope.id || req.headers['x-merx-event'] !== envelope.event) {
        if (receiver.malformed.length < 20) receiver.malformed.push(`${pathname}: headers do not match the envelope ${envelope.id}`);
      }
      const key = `${pathname} ${envelope.id}`;
      if (seen.has(key)) {
        receiver.duplicates++;
        return;
      }
      seen.add(key);
      receiver.unique++;
      receiver.perPath.set(pathname, (receiver.perPath.get(pathname) ?? 0) + 1);
      receiver.arrivals.push({ at, latencyMs: at - Date.parse(envelope.created_at), orderId: envelope.data?.order?.id ?? '' });
    });
  });
  server.keepAliveTimeout = 1000;
  // The service opens one connection per delivery (agent: false): a deep accept queue keeps SYN drops out of the numbers.
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  receiver.origin = `https://127.0.0.1:${port}`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push({ name: 'close receiver', run: () => receiver.close() });
  return receiver;
}

// ---------------------------------------------------------------- CPU accounting

function pidJiffies(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

function machineJiffies(): { busy: number; total: number } | null {
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

interface CpuReport {
  seconds: number;
  /** Cores' worth of CPU, averaged over the window. */
  bench: number;
  service: number;
  postgres: number;
  other: number;
}

/**
 * CPU per role over a window: this process (load generator and receiver), the
 * service child, the PostgreSQL backends of the bench database (sampled every
 * second, so connections opened mid-run count from their start), and the rest.
 */
class CpuWindow {
  private start = machineJiffies();
  private startedAt = performance.now();
  private base = new Map<number, number>();
  private last = new Map<number, number>();
  private pgPids = new Set<number>();
  private timer: NodeJS.Timeout;
  private roles: { bench: number; service: number };
  private pidQuery: () => Promise<number[]>;

  constructor(roles: { bench: number; service: number }, pgPids: number[], pidQuery: () => Promise<number[]>) {
    this.roles = roles;
    this.pidQuery = pidQuery;
    for (const pid of [roles.bench, roles.service, ...pgPids]) {
      const j = pidJiffies(pid);
      if (j !== null) this.base.set(pid, j), this.last.set(pid, j);
    }
    for (const pid of pgPids) this.pgPids.add(pid);
    this.timer = setInterval(() => void this.sample(), 1000);
  }

  private async sample(): Promise<void> {
    const pids = await this.pidQuery().catch(() => [] as number[]);
    for (const pid of pids) {
      if (!this.pgPids.has(pid)) {
        this.pgPids.add(pid);
        this.base.set(pid, 0);
      }
    }
    for (const pid of [this.roles.bench, this.roles.service, ...this.pgPids]) {
      const j = pidJiffies(pid);
      if (j !== null) this.last.set(pid, j);
    }
  }

  async end(): Promise<CpuReport | null> {
    clearInterval(this.timer);
    await this.sample();
    const end = machineJiffies();
    if (!this.start || !end || end.total <= this.start.total) return null;
    const perCore = (end.total - this.start.total) / os.cpus().length;
    const used = (pid: number) => ((this.last.get(pid) ?? 0) - (this.base.get(pid) ?? 0)) / perCore;
    const bench = used(this.roles.bench);
    const service = used(this.roles.service);
    let postgres = 0;
    for (const pid of this.pgPids) postgres += used(pid);
    const busy = (end.busy - this.start.busy) / perCore;
    return { seconds: (performance.now() - this.startedAt) / 1000, bench, service, postgres, other: Math.max(0, busy - bench - service - postgres) };
  }
}

/** Cores' worth of CPU the machine uses over the next second. */
async function busyCores(): Promise<number | null> {
  const a = machineJiffies();
  await sleep(1000);
  const b = machineJiffies();
  if (!a || !b || b.total <= a.total) return null;
  return ((b.busy - a.busy) / (b.total - a.total)) * os.cpus().length;
}

async function waitForQuiet(seconds: number, threshold = 0.3): Promise<number | null> {
  let busy = await busyCores();
  const deadline = Date.now() + seconds * 1000;
  while (busy !== null && busy > threshold && Date.now() < deadline) busy = await busyCores();
  return busy;
}

// ---------------------------------------------------------------- probes

/**
 * The service's responsiveness: GET /healthz (no database work) every 250 ms on
 * its own connection, so its latency is the service's event-loop delay plus
 * loopback HTTP, not a wait behind the PATCH load.
 */
function startHealthProbe(base: string): { stop(): number[] } {
  const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  let running = true;
  const loop = async () => {
    while (running) {
      const started = performance.now();
      try {
        await new Promise<void>((resolve, reject) => {
          const req = http.get(new URL('/healthz', base), { agent: probeAgent }, (res) => {
            res.resume();
            res.on('end', () => resolve());
          });
          req.on('error', reject);
        });
        samples.push(performance.now() - started);
      } catch {
        samples.push(Infinity);
      }
      await sleep(250);
    }
  };
  void loop();
  return {
    stop() {
      running = false;
      probeAgent.destroy();
      return samples;
    },
  };
}

interface PgActivity {
  samples: number;
  /** Mean number of the service's connections per state (active, idle in transaction, idle). */
  states: Map<string, number>;
  /** Share of samples x connections that were active and waiting, by wait event. */
  waits: Map<string, number>;
}

/** Samples pg_stat_activity of the bench database (the service's pool: 10 connections) twice a second. */
function startPgSampler(pool: pg.Pool, database: string): { stop(): Promise<PgActivity> } {
  const states = new Map<string, number>();
  const waits = new Map<string, number>();
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const { rows } = await pool.query<{ state: string | null; wait: string | null }>(
          `SELECT state, CASE WHEN wait_event IS NULL THEN NULL ELSE wait_event_type || ':' || wait_event END AS wait
             FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> 'merx-bench'`,
          [database],
        );
        samples++;
        for (const r of rows) {
          const state = r.state ?? 'unknown';
          states.set(state, (states.get(state) ?? 0) + 1);
          if (state === 'active' && r.wait) waits.set(r.wait, (waits.get(r.wait) ?? 0) + 1);
        }
      } catch {
        // the database is going away: stop sampling
      }
      await sleep(500);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const mean = (m: Map<string, number>) => new Map([...m].map(([k, v]) => [k, v / Math.max(1, samples)]));
      return { samples, states: mean(states), waits: mean(waits) };
    },
  };
}

// ---------------------------------------------------------------- statistics

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

interface Dist {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

function dist(values: number[]): Dist {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / (sorted.length || 1);
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, mean };
}

// ---------------------------------------------------------------- load

interface PatchSample {
  orderId: string;
  sentAt: number;
  /** Wall clock once the answer was read: the event had committed by then. */
  doneAt: number;
  ms: number;
  status: number;
}

interface LoadResult {
  samples: PatchSample[];
  /** PATCHes answered 200 with status_changed: true, i.e. events committed. */
  events: number;
  seconds: number;
  errors: Map<string, number>;
  startedAt: number;
  endedAt: number;
}

/** PATCH status changes over the given orders, CONCURRENCY at a time, as fast as the API answers. */
async function patchOrders(base: string, key: string, orders: Array<{ id: string; status: string }>, budgetSeconds = Infinity): Promise<LoadResult> {
  const samples: PatchSample[] = [];
  const errors = new Map<string, number>();
  let next = 0;
  let events = 0;
  const startedAt = wallNow();
  const deadline = startedAt + budgetSeconds * 1000;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= orders.length || wallNow() > deadline || interrupted) return;
      const order = orders[i];
      // processing <-> confirmed: no stock movement, no customer notice, exactly one order.status_changed.
      const status = order.status === 'processing' ? 'confirmed' : 'processing';
      const sentAt = wallNow();
      let code = 0;
      try {
        const res = await request(base, 'PATCH', `/api/v1/orders/${order.id}`, key, { status });
        code = res.status;
        if (res.status === 200 && res.json?.status_changed === true) events++;
        if (res.status !== 200 || res.json?.status_changed !== true) {
          const what = `${res.status} ${res.json?.error?.code ?? (res.json?.status_changed === false ? 'status_changed false' : res.text.slice(0, 80))}`;
          errors.set(what, (errors.get(what) ?? 0) + 1);
        }
      } catch (err) {
        const what = `network ${err instanceof Error ? err.message : String(err)}`;
        errors.set(what, (errors.get(what) ?? 0) + 1);
      }
      const doneAt = wallNow();
      samples.push({ orderId: order.id, sentAt, doneAt, ms: doneAt - sentAt, status: code });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const endedAt = wallNow();
  return { samples, events, seconds: (endedAt - startedAt) / 1000, errors, startedAt, endedAt };
}

// ---------------------------------------------------------------- report

const fmt = (v: number, digits = 0) => (Number.isFinite(v) ? v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a');
const ms = (v: number) => (Number.isFinite(v) ? (v >= 100 ? fmt(v, 0) : fmt(v, 1)) : 'n/a');

interface Timeline {
  from: number;
  patches: number;
  patchP99: number;
  deliveries: number;
  deliveryP50: number;
  deliveryP99: number;
}

function timeline(t0: number, patches: PatchSample[], arrivals: Arrival[]): Timeline[] {
  const width = BUCKET_SECONDS * 1000;
  const rows: Timeline[] = [];
  const bucketOf = (t: number) => Math.max(0, Math.floor((t - t0) / width));
  const p: number[][] = [];
  const d: number[][] = [];
  for (const s of patches) (p[bucketOf(s.doneAt)] ??= []).push(s.ms);
  for (const a of arrivals) (d[bucketOf(a.at)] ??= []).push(a.latencyMs);
  const count = Math.max(p.length, d.length);
  for (let i = 0; i < count; i++) {
    const pd = dist(p[i] ?? []);
    const dd = dist(d[i] ?? []);
    rows.push({ from: i * BUCKET_SECONDS, patches: pd.n, patchP99: pd.p99, deliveries: dd.n, deliveryP50: dd.p50, deliveryP99: dd.p99 });
  }
  return rows;
}

// ---------------------------------------------------------------- main

async function main() {
  const startedRun = Date.now();
  const pgVersion = (await adminQuery<{ server_version: string }>('SHOW server_version'))[0].server_version;
  const quietBefore = await waitForQuiet(QUIET_WAIT_SECONDS);
  log(`machine busy before start: ${quietBefore === null ? 'n/a' : `${quietBefore.toFixed(2)} cores`}`);

  const db = await createDatabase();
  const receiver = await startReceiver();
  log(`receiver ${receiver.origin} (CA ${receiver.caFile})`);

  const serviceEnv = {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: db.url,
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    SEED_DEMO: '0',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    NODE_EXTRA_CA_CERTS: receiver.caFile,
    RATE_LIMIT_REST_PER_MINUTE: '10000000',
    // e.g. BENCH_SERVICE_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the service only.
    ...(process.env.BENCH_SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVICE_NODE_OPTIONS } : {}),
  };
  const service = await startService(serviceEnv);
  log(`service ${service.url} (pid ${service.pid})`);

  const pool = new pg.Pool({ connectionString: db.url, max: 3, application_name: 'merx-bench' });
  cleanups.push({ name: 'close bench pool', run: () => pool.end() });
  const pgPids = async () =>
    (await pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name <> 'merx-bench'", [db.name])).rows.map((r) => r.pid);

  // Account, key, orders (the seed writes orders without events).
  const account = await must(request(service.url, 'POST', '/admin/api/accounts', ADMIN_TOKEN, { name: 'Bench Webhooks', email: 'bench-webhooks@example.com', plan: 'pro' }), 'create account');
  const accountId: string = account.data.id;
  const issued = await must(request(service.url, 'POST', `/admin/api/accounts/${accountId}/keys`, ADMIN_TOKEN, { name: 'bench-webhooks', scopes: SCOPES }), 'issue key');
  const key: string = issued.key;
  const seedStarted = performance.now();
  await must(request(service.url, 'POST', `/admin/api/accounts/${accountId}/seed`, ADMIN_TOKEN, { orders: EVENTS + BASELINE_EVENTS, products: 20, seed: 11 }), 'seed');
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const { rows: orders } = await pool.query<{ id: string; status: string }>('SELECT id, status FROM orders WHERE account_id = $1 ORDER BY md5(id::text)', [accountId]);
  if (orders.length < EVENTS + BASELINE_EVENTS) throw new Error(`the seed made ${orders.length} orders, expected ${EVENTS + BASELINE_EVENTS}`);
  await pool.query('VACUUM (ANALYZE) orders');
  log(`seeded ${orders.length} orders in ${seedSeconds.toFixed(1)} s`);
  const baselineOrders = orders.slice(0, BASELINE_EVENTS);
  const mainOrders = orders.slice(BASELINE_EVENTS, BASELINE_EVENTS + EVENTS);

  // Baseline: the same PATCH with no subscription (events are written, nothing fans out).
  let baseline: LoadResult | null = null;
  let baselineHealth: Dist | null = null;
  if (BASELINE_EVENTS > 0) {
    await patchOrders(service.url, key, baselineOrders.slice(0, Math.min(200, baselineOrders.length))); // warm-up, not measured
    await waitForQuiet(10);
    const probe = startHealthProbe(service.url);
    baseline = await patchOrders(service.url, key, baselineOrders.slice(200));
    baselineHealth = dist(probe.stop());
    log(`baseline (no subscriptions): ${baseline.samples.length} PATCH in ${baseline.seconds.toFixed(1)} s`);
  }
  const { rows: baselineDeliveries } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries');

  // Five subscriptions to the receiver, distinct paths.
  const subscriptions: Array<{ id: string; path: string }> = [];
  for (let i = 1; i <= SUBSCRIPTIONS; i++) {
    const hookPath = `/hook-${i}/${crypto.randomUUID()}`;
    const created = await must(
      request(service.url, 'POST', '/api/v1/webhooks', key, { url: receiver.origin + hookPath, events: [EVENT_NAME], description: `bench ${i}` }),
      `create webhook ${i}`,
    );
    receiver.secrets.set(hookPath, created.secret);
    subscriptions.push({ id: created.data.id, path: hookPath });
  }
  log(`${SUBSCRIPTIONS} subscriptions to ${receiver.origin}/hook-N/<uuid> for ${EVENT_NAME}`);

  // Warm the HTTPS path once (first TLS context, first handshake) before measuring.
  await must(request(service.url, 'POST', `/api/v1/webhooks/${subscriptions[0].id}/test`, key), 'test delivery');
  receiver.arrivals.length = 0; // the test event is not part of the run (its path count stays out too)
  receiver.unique = 0;
  receiver.perPath.clear();
  receiver.verified = 0;
  const { rows: eventsBefore } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE account_id = $1 AND event = $2', [accountId, EVENT_NAME]);

  const quietMain = await waitForQuiet(Math.min(20, QUIET_WAIT_SECONDS));
  log(`machine busy before the run: ${quietMain === null ? 'n/a' : `${quietMain.toFixed(2)} cores`}`);
  let expected = EVENTS * SUBSCRIPTIONS;
  const cpu = new CpuWindow({ bench: process.pid, service: service.pid }, await pgPids(), pgPids);
  const memBefore = process.memoryUsage().rss;
  log(`run: ${EVENTS} PATCH at concurrency ${CONCURRENCY} (budget ${LOAD_BUDGET_SECONDS} s) -> expect ${expected} deliveries`);
  const health = startHealthProbe(service.url);
  const activity = startPgSampler(pool, db.name);
  const progress = setInterval(() => log(`  received ${receiver.unique}/${expected}`), 10_000);
  const load = await patchOrders(service.url, key, mainOrders, LOAD_BUDGET_SECONDS);
  const complete = load.samples.length === EVENTS;
  expected = load.events * SUBSCRIPTIONS;
  log(
    `PATCH done in ${load.seconds.toFixed(1)} s: ${load.events} events` +
      `${complete ? '' : ` (STOPPED by the ${LOAD_BUDGET_SECONDS} s budget, ${EVENTS - load.samples.length} PATCH not sent)`}; received so far ${receiver.unique}/${expected}`,
  );
  const receivedAtLoadEnd = receiver.unique;

  // Drain: wait for the remaining deliveries (or the deadline; the service may also die).
  const drainDeadline = Date.now() + DRAIN_SECONDS * 1000;
  while (receiver.unique < expected && Date.now() < drainDeadline && !service.death() && !interrupted) await sleep(200);
  clearInterval(progress);
  const drainedAt = wallNow();
  if (interrupted) throw new Error('interrupted');
  const cpuReport = await cpu.end();
  const runHealth = dist(health.stop());
  const pgActivity = await activity.stop();
  // A short grace for late duplicates (a retry racing a slow first attempt), not part of the timing.
  await sleep(1000);
  log(`received ${receiver.unique}/${expected} unique deliveries (${receiver.duplicates} duplicates)`);
  if (service.death()) log(service.death()!);

  // What the service recorded.
  const { rows: byStatus } = await pool.query<{ status: string; attempt: number; last_error: string | null; n: number }>(
    `SELECT d.status, d.attempt, d.last_error, count(*)::int AS n FROM webhook_deliveries d
       JOIN webhook_subscriptions s ON s.id = d.webhook_id WHERE s.id = ANY($1::uuid[]) AND d.event = $2
      GROUP BY 1, 2, 3 ORDER BY n DESC`,
    [subscriptions.map((s) => s.id), EVENT_NAME],
  );
  const { rows: counts } = await pool.query<{ events: number; deliveries: number }>(
    `SELECT (SELECT count(*)::int FROM events WHERE account_id = $1 AND event = $2) - $3 AS events,
            (SELECT count(*)::int FROM webhook_deliveries WHERE account_id = $1 AND event = $2) AS deliveries`,
    [accountId, EVENT_NAME, eventsBefore[0].n],
  );
  const { rows: recorded } = await pool.query<{ n: number; p50: number; p99: number; max: number }>(
    `SELECT count(*)::int AS n,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d.delivered_at - e.created_at) * 1000) AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM d.delivered_at - e.created_at) * 1000) AS p99,
            max(extract(epoch FROM d.delivered_at - e.created_at) * 1000) AS max
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.account_id = $1 AND d.event = $2 AND d.status = 'delivered'`,
    [accountId, EVENT_NAME],
  );
  // The same through the public API: the newest deliveries of each subscription.
  const apiSample: Record<string, number> = {};
  for (const s of subscriptions) {
    const listed = await must(request(service.url, 'GET', `/api/v1/webhooks/${s.id}/deliveries?limit=200`, key), 'list deliveries');
    for (const d of listed.data as Array<{ status: string; attempt: number }>) {
      const k = `${d.status}, attempt ${d.attempt}`;
      apiSample[k] = (apiSample[k] ?? 0) + 1;
    }
  }
  const memAfter = process.memoryUsage().rss;

  // Numbers.
  const arrivals = receiver.arrivals;
  const latency = dist(arrivals.map((a) => a.latencyMs));
  const doneByOrder = new Map(load.samples.map((s) => [s.orderId, s.doneAt]));
  const afterAnswer = dist(arrivals.filter((a) => doneByOrder.has(a.orderId)).map((a) => a.at - doneByOrder.get(a.orderId)!));
  const lastArrival = arrivals.reduce((m, a) => Math.max(m, a.at), -Infinity);
  const runSeconds = (lastArrival - load.startedAt) / 1000;
  const deliveryRate = arrivals.length / runSeconds;
  const duringLoad = arrivals.filter((a) => a.at <= load.endedAt).length;
  const rateDuringLoad = duringLoad / load.seconds;
  const afterLoadSeconds = Math.max(0, (lastArrival - load.endedAt) / 1000);
  const rateAfterLoad = afterLoadSeconds > 0 ? (arrivals.length - duringLoad) / afterLoadSeconds : NaN;
  const patch = dist(load.samples.map((s) => s.ms));
  const patchRate = load.samples.length / load.seconds;
  const base = baseline ? dist(baseline.samples.map((s) => s.ms)) : null;
  const baseRate = baseline ? baseline.samples.length / baseline.seconds : NaN;
  const retried = byStatus.filter((r) => r.attempt > 1).reduce((s, r) => s + r.n, 0);
  const notDelivered = byStatus.filter((r) => r.status !== 'delivered').reduce((s, r) => s + r.n, 0);
  const lost = expected - receiver.unique;
  const rows = timeline(load.startedAt, load.samples, arrivals);
  const valid = complete && lost === 0 && serviceLog.counts.size === 0 && load.errors.size === 0 && receiver.badSignatures === 0 && receiver.malformed.length === 0 && !service.death();

  const cpus = os.cpus();
  const lines: string[] = [];
  const push = (...l: string[]) => lines.push(...l);
  push(
    '# Webhook fan-out benchmark',
    '',
    'Generated by `node bench/webhooks.ts` (do not edit by hand; rerun instead).',
    '',
    `- Date: ${new Date(startedRun).toISOString()} (run took ${((Date.now() - startedRun) / 1000).toFixed(0)} s)`,
    `- Machine: ${os.type()} ${os.release()} ${os.arch()}, ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    `- Node ${process.version}, PostgreSQL ${pgVersion}`,
    `- Service: child process \`node src/main.ts\` (pg pool 10, workers on: first attempts in-process after commit, minute worker for retries), ` +
      '`LOG_LEVEL=warn`, `SEED_DEMO=0`, `WEBHOOK_ALLOW_HOSTS=127.0.0.1`, `NODE_EXTRA_CA_CERTS=<throwaway CA>`, `RATE_LIMIT_REST_PER_MINUTE=10000000`',
    `- Receiver: HTTPS on 127.0.0.1 in the bench process (certificate from test/helpers/https-receiver.ts \`testCertificates\`), answers 200 at once, verifies every signature`,
    `- Load: ${fmt(EVENTS)} × \`PATCH /api/v1/orders/{id}\` \`{status}\` (processing ↔ confirmed: one \`${EVENT_NAME}\` each, no stock or notice side effects) ` +
      `over orders made by the operator seed, ${CONCURRENCY} concurrent keep-alive connections, one key; ` +
      `budget ${LOAD_BUDGET_SECONDS} s for the load, then up to ${DRAIN_SECONDS} s for the remaining deliveries`,
    complete
      ? `- Events made: ${fmt(load.events)} of ${fmt(EVENTS)}`
      : `- **Events made: ${fmt(load.events)} of ${fmt(EVENTS)}: the load was stopped by its ${LOAD_BUDGET_SECONDS} s budget** (${fmt(EVENTS - load.samples.length)} PATCH not sent)`,
    `- Subscriptions: ${SUBSCRIPTIONS}, distinct paths, each to \`${EVENT_NAME}\` → ${fmt(expected)} deliveries expected for the events made`,
    `- Machine busy before the run (other work): ${quietMain === null ? 'n/a' : `${quietMain.toFixed(2)} cores`}`,
    '',
    valid
      ? '**Run valid**: every delivery arrived once or more, every signature verified, every PATCH answered 200 with a status change.'
      : complete
        ? '**Run INVALID**: see the checks below.'
        : `**Run INCOMPLETE**: the service made ${fmt(load.events)} of ${fmt(EVENTS)} events within the ${LOAD_BUDGET_SECONDS} s load budget; the rates and latencies below are for those.`,
    '',
    '## Deliveries',
    '',
    '| | |',
    '|---|---|',
    `| Received (unique per subscription and event) | **${fmt(receiver.unique)} / ${fmt(expected)}** |`,
    `| Duplicates (same event to the same path again) | ${fmt(receiver.duplicates)} |`,
    `| Per path | ${[...receiver.perPath.values()].map((n) => fmt(n)).join(', ') || 'none'} |`,
    `| Signatures verified / bad | ${fmt(receiver.verified)} / ${fmt(receiver.badSignatures)} |`,
    `| Deliveries per second, first PATCH → last receipt (${runSeconds.toFixed(1)} s) | **${fmt(deliveryRate, 0)}** |`,
    `| … while the PATCH load ran (${load.seconds.toFixed(1)} s, ${fmt(duringLoad)} received) | ${fmt(rateDuringLoad, 0)} |`,
    `| … after it, draining the backlog (${afterLoadSeconds.toFixed(1)} s, ${fmt(arrivals.length - duringLoad)} received) | ${fmt(rateAfterLoad, 0)} |`,
    `| Received when the last PATCH answered | ${fmt(receivedAtLoadEnd)} (${((receivedAtLoadEnd / expected) * 100).toFixed(1)} %) |`,
    '',
    '### Commit-to-receipt latency',
    '',
    'Receiver arrival time minus the envelope `created_at` (the event row\'s `now()`: its transaction\'s start, so a few ms of the',
    'PATCH transaction are included) — and, as a cross-check from the client side, arrival minus the moment the PATCH answer was read',
    '(the transaction had committed by then; a lower bound on commit-to-receipt).',
    '',
    '| ms | n | p50 | p95 | p99 | max | mean |',
    '|---|---|---|---|---|---|---|',
    `| receipt − created_at | ${fmt(latency.n)} | **${ms(latency.p50)}** | ${ms(latency.p95)} | **${ms(latency.p99)}** | ${ms(latency.max)} | ${ms(latency.mean)} |`,
    `| receipt − PATCH answered | ${fmt(afterAnswer.n)} | ${ms(afterAnswer.p50)} | ${ms(afterAnswer.p95)} | ${ms(afterAnswer.p99)} | ${ms(afterAnswer.max)} | ${ms(afterAnswer.mean)} |`,
    `| delivered_at − created_at (the service's own record) | ${fmt(recorded[0]?.n ?? 0)} | ${ms(Number(recorded[0]?.p50))} | | ${ms(Number(recorded[0]?.p99))} | ${ms(Number(recorded[0]?.max))} | |`,
    '',
    '## The API while it fans out',
    '',
    '| PATCH /api/v1/orders/{id} | requests | req/s | p50 ms | p95 ms | p99 ms | max ms | errors |',
    '|---|---|---|---|---|---|---|---|',
    ...(baseline && base
      ? [`| baseline, no subscriptions | ${fmt(base.n)} | ${fmt(baseRate, 0)} | ${ms(base.p50)} | ${ms(base.p95)} | ${ms(base.p99)} | ${ms(base.max)} | ${[...baseline.errors.values()].reduce((a, b) => a + b, 0)} |`]
      : []),
    `| with ${SUBSCRIPTIONS} subscriptions (the run) | ${fmt(patch.n)} | **${fmt(patchRate, 0)}** | ${ms(patch.p50)} | ${ms(patch.p95)} | **${ms(patch.p99)}** | ${ms(patch.max)} | ${[...load.errors.values()].reduce((a, b) => a + b, 0)} |`,
    '',
    ...(load.errors.size ? ['PATCH errors: ' + [...load.errors.entries()].map(([k, n]) => `${k} × ${n}`).join('; '), ''] : []),
    '## What the service recorded',
    '',
    `Events \`${EVENT_NAME}\` written during the run: ${fmt(counts[0].events)} (PATCHes that changed a status: ${fmt(load.events)}); delivery rows: ${fmt(counts[0].deliveries)} (expected ${fmt(expected)}); ` +
      `delivery rows made during the baseline (no subscriptions): ${baselineDeliveries[0].n}.`,
    '',
    '| status | attempt | last_error | rows |',
    '|---|---|---|---|',
    ...byStatus.map((r) => `| ${r.status} | ${r.attempt} | ${r.last_error ? `\`${r.last_error.slice(0, 120)}\`` : ''} | ${fmt(r.n)} |`),
    '',
    `Needed a retry (attempt > 1): **${fmt(retried)}**; not delivered at the end: **${fmt(notDelivered)}**.`,
    `Through the API (\`GET /api/v1/webhooks/{id}/deliveries?limit=200\`, newest 200 of each subscription): ` +
      Object.entries(apiSample).map(([k, n]) => `${k}: ${n}`).join('; ') + '.',
    '',
    '## Timeline',
    '',
    `Per ${BUCKET_SECONDS} s from the first PATCH: PATCH answers (and their p99), deliveries received (and their commit-to-receipt p50/p99).`,
    '',
    '| from s | PATCH | PATCH p99 ms | deliveries | latency p50 ms | latency p99 ms |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.from} | ${fmt(r.patches)} | ${r.patches ? ms(r.patchP99) : ''} | ${fmt(r.deliveries)} | ${r.deliveries ? ms(r.deliveryP50) : ''} | ${r.deliveries ? ms(r.deliveryP99) : ''} |`),
    '',
    '## Where the time goes',
    '',
    'Service responsiveness: `GET /healthz` (no database work) every 250 ms on its own connection; its latency is mostly the service\'s event-loop delay.',
    '',
    '| /healthz ms | n | p50 | p95 | p99 | max |',
    '|---|---|---|---|---|---|',
    ...(baselineHealth ? [`| during the baseline | ${baselineHealth.n} | ${ms(baselineHealth.p50)} | ${ms(baselineHealth.p95)} | ${ms(baselineHealth.p99)} | ${ms(baselineHealth.max)} |`] : []),
    `| during the run | ${runHealth.n} | ${ms(runHealth.p50)} | ${ms(runHealth.p95)} | ${ms(runHealth.p99)} | ${ms(runHealth.max)} |`,
    '',
    `The service's PostgreSQL connections (its pool holds at most 10), sampled ${pgActivity.samples} times during the run: mean number per state ` +
      ([...pgActivity.states].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ') || 'none') +
      '; active and waiting, by wait event: ' +
      ([...pgActivity.waits].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ') || 'none') +
      '. "idle in transaction" is a transaction waiting for the service to send its next statement.',
    '',
    '## CPU',
    '',
    cpuReport
      ? `Cores' worth of CPU, averaged over the ${cpuReport.seconds.toFixed(1)} s from the first PATCH to the end of the drain (${cpus.length} cores): ` +
          `service ${cpuReport.service.toFixed(2)}, PostgreSQL backends of the bench database ${cpuReport.postgres.toFixed(2)}, ` +
          `bench process (load generator + HTTPS receiver) ${cpuReport.bench.toFixed(2)}, **other processes ${cpuReport.other.toFixed(2)}** ` +
          '(trust the numbers only when that is near 0). Bench process RSS ' +
          `${(memBefore / 2 ** 20).toFixed(0)} → ${(memAfter / 2 ** 20).toFixed(0)} MiB.`
      : 'n/a (no /proc).',
    '',
    '## Checks',
    '',
    `- Not received by the end of the drain: ${fmt(lost)}`,
    `- Bad signatures: ${receiver.badSignatures}`,
    `- Malformed or unexpected requests: ${receiver.malformed.length ? receiver.malformed.join('; ') : 'none'}`,
    `- PATCH errors: ${load.errors.size ? [...load.errors.entries()].map(([k, n]) => `${k} × ${n}`).join('; ') : 'none'}`,
    `- Service: ${service.death() ?? 'alive until the end'}`,
    `- Service log (warn and above): ${serviceLog.counts.size ? [...serviceLog.counts.entries()].map(([k, n]) => `${k} × ${n}`).join('; ') : 'nothing'}`,
    ...(serviceLog.examples.length ? ['', '```', ...serviceLog.examples, '```'] : []),
    '',
  );
  if (interrupted) throw new Error('interrupted');
  fs.writeFileSync(RESULTS_FILE, lines.join('\n'));
  log(`wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
  log(
    `deliveries ${receiver.unique}/${expected}, ${deliveryRate.toFixed(0)}/s; latency p50 ${ms(latency.p50)} p95 ${ms(latency.p95)} p99 ${ms(latency.p99)} max ${ms(latency.max)} ms; ` +
      `PATCH ${patchRate.toFixed(0)} req/s p99 ${ms(patch.p99)} ms (baseline ${fmt(baseRate, 0)} req/s p99 ${base ? ms(base.p99) : 'n/a'}); retried ${retried}; duplicates ${receiver.duplicates}`,
  );
  return valid;
}

let ok = false;
try {
  ok = await main();
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
} finally {
  agent.destroy();
  await cleanUp();
}
process.exit(ok ? 0 : 1);
