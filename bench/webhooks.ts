// node bench/webhooks.ts — the webhook delivery engine under fan-out load
// (issue 16): 5 subscriptions to order.updated on a local HTTPS receiver that
// verifies every signature and counts duplicates;
// - a closed-loop burst: 2,000 PATCH /api/v1/orders/{id}, 20 in flight
//   (10,000 deliveries), next to the same burst with no subscription;
// - an open loop below capacity: 150 PATCH a second for 20 s;
// - with BENCH_MODE=drain instead, the engine alone (runDrainSide): 10,000
//   deliveries made while the receiver refuses connections and no worker
//   runs, then sent by one worker pass with no PATCH beside it (its table is
//   appended to the results file rather than replacing it);
// - with BENCH_MODE=floor, or BENCH_FLOOR=1 beside a drain, a "floor" side:
//   the same preparation, then the service stopped and the retries sent by
//   the least a durable sender must do (bench/webhook-floor.ts, its own child
//   process), measured as a drain side is; the report gives each side's rate
//   as a share of the floor's in the same round.
// Prints and writes deliveries per second, commit-to-receipt p50/p99, PATCH
// throughput with subscriptions vs without, and who used the CPU, to
// bench/RESULTS-webhooks.md. With BENCH_BEFORE_DIR=<another checkout> the same
// run measures that tree first ("before") and this one after it, side by side:
//   git archive main | tar -x -C /tmp/before && ln -s $PWD/node_modules /tmp/before/
//   BENCH_BEFORE_DIR=/tmp/before BENCH_BEFORE_COMMIT=$(git rev-parse --short main) npm run bench:webhooks
// The service children and databases are removed at the end, also on failure or Ctrl-C.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { testCertificates } from '../test/helpers/https-receiver.ts';
import { verifyMerxSignature } from '../src/modules/webhooks/signing/signature.ts';
import { setting } from './bench-tools.ts';
import { checkBodies, startFloor, type FloorProcess } from './webhook-floor.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const EVENTS = setting('BENCH_EVENTS', 2_000);
const SUBSCRIPTIONS = setting('BENCH_SUBSCRIPTIONS', 5);
const CONCURRENCY = setting('BENCH_CONCURRENCY', 20);
const BASELINE_EVENTS = setting('BENCH_BASELINE_EVENTS', 2_000);
/** Unmeasured PATCHes before the baseline (JIT, pools, caches). */
const WARMUP_EVENTS = 200;
const OPEN_RATE = setting('BENCH_OPEN_RATE', 150);
/** Rounds of the whole run (before, after, before, after, ...); the report adds each measure's median per side. */
const ROUNDS = setting('BENCH_ROUNDS', 1);
const OPEN_SECONDS = setting('BENCH_OPEN_SECONDS', 20);
/** The PATCH load stops early after this many seconds (the run then reports how many events it made). */
const LOAD_BUDGET_SECONDS = setting('BENCH_LOAD_BUDGET_SECONDS', 180);
/** After the last PATCH answered: how long to wait for the remaining deliveries. */
const DRAIN_SECONDS = setting('BENCH_DRAIN_SECONDS', 300);
/** `drain` measures the engine alone (runDrainSide) instead of the burst and the open loop; `floor` the floor alone. */
const MODE = process.env.BENCH_MODE ?? 'fan-out';
/** A floor side (bench/webhook-floor.ts) in every drain round, after the others. */
const FLOOR = MODE === 'floor' || process.env.BENCH_FLOOR === '1';
const DRAIN_EVENTS = setting('BENCH_DRAIN_EVENTS', 2_000);
const QUIET_WAIT_SECONDS = setting('BENCH_QUIET_WAIT_SECONDS', 60);
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-webhooks.md');
const ROOT = path.join(import.meta.dirname, '..');
const SCOPES = ['webhooks:read', 'webhooks:write', 'orders:read', 'orders:write'];
const EVENT_NAME = 'order.updated';
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
  stop(): Promise<void>;
}

function startService(main: string, env: Record<string, string>): Promise<Service> {
  const child: ChildProcess = spawn(process.execPath, [main], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const force = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.once('exit', () => (clearTimeout(force), resolve()));
      child.kill('SIGTERM');
    });
  cleanups.push({ name: 'stop service', run: stop });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in 60 s:\n${output}`)), 60_000);
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`service exited with ${code}:\n${output}`))));
    const watch = () => {
      const match = /API\s+(http:\/\/\S+)\/api\/v1/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', watch);
      resolve({ url: match[1], pid: child.pid!, death: () => death, stop });
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

// Enough sockets for the open loop to start PATCHes on schedule even when answers slow down.
const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(CONCURRENCY, 64) });

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
  /** TLS connections accepted, and how many of them resumed a session. */
  handshakes: number;
  resumed: number;
  /** Stops accepting connections (a receiver that is down: attempts are refused) until listen() again on the same port. */
  refuse(): Promise<void>;
  listen(): Promise<void>;
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
    handshakes: 0,
    resumed: 0,
    refuse: async () => {},
    listen: async () => {},
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
  server.on('secureConnection', (socket) => {
    receiver.handshakes++;
    if (socket.isSessionReused()) receiver.resumed++;
  });
  // Node's default idle keep-alive (5 s), as a typical receiver: connections are reused across a burst.
  server.keepAliveTimeout = 5000;
  // A service may open many connections at once: a deep accept queue keeps SYN drops out of the numbers.
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  receiver.origin = `https://127.0.0.1:${port}`;
  receiver.refuse = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  receiver.listen = () => new Promise<void>((resolve) => server.listen({ port, host: '127.0.0.1', backlog: 4096 }, resolve));
  receiver.close = async () => {
    if (server.listening) await receiver.refuse();
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
      if (j === null) continue;
      this.base.set(pid, j);
      this.last.set(pid, j);
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
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    mean,
  };
}

// ---------------------------------------------------------------- load

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
  /** PATCHes answered 200, i.e. events committed. */
  events: number;
  seconds: number;
  errors: Map<string, number>;
  startedAt: number;
  endedAt: number;
}

/** One PATCH of an order's admin notes: exactly one order.updated, no stock or notice side effects. */
async function patchOnce(base: string, key: string, orderId: string, note: string, into: LoadResult): Promise<void> {
  const sentAt = wallNow();
  let code = 0;
  try {
    const res = await request(base, 'PATCH', `/api/v1/orders/${orderId}`, key, { admin_notes: note });
    code = res.status;
    if (res.status === 200) into.events++;
    else {
      const what = `${res.status} ${res.json?.error?.code ?? res.text.slice(0, 80)}`;
      into.errors.set(what, (into.errors.get(what) ?? 0) + 1);
    }
  } catch (err) {
    const what = `network ${err instanceof Error ? err.message : String(err)}`;
    into.errors.set(what, (into.errors.get(what) ?? 0) + 1);
  }
  const doneAt = wallNow();
  into.samples.push({ orderId, sentAt, doneAt, ms: doneAt - sentAt, status: code });
}

function emptyLoad(): LoadResult {
  const now = wallNow();
  return { samples: [], events: 0, seconds: 0, errors: new Map(), startedAt: now, endedAt: now };
}

/** Closed loop: one PATCH per order, CONCURRENCY at a time, as fast as the API answers. */
async function patchBurst(base: string, key: string, orders: string[], tag: string): Promise<LoadResult> {
  const load = emptyLoad();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < orders.length && wallNow() < load.startedAt + LOAD_BUDGET_SECONDS * 1000 && !interrupted; i = next++) {
      await patchOnce(base, key, orders[i], `${tag} ${i}`, load);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  load.endedAt = wallNow();
  load.seconds = (load.endedAt - load.startedAt) / 1000;
  return load;
}

/** Open loop: PATCHes started on a fixed schedule (`rate` a second), whatever the answers take. */
async function patchOpenLoop(base: string, key: string, orders: string[], rate: number, seconds: number): Promise<LoadResult> {
  const load = emptyLoad();
  const running = new Set<Promise<void>>();
  const total = rate * seconds;
  for (let i = 0; i < total && !interrupted; i++) {
    const wait = load.startedAt + (i * 1000) / rate - wallNow();
    if (wait > 1) await sleep(wait);
    const work = patchOnce(base, key, orders[i % orders.length], `open ${i}`, load);
    running.add(work);
    void work.finally(() => running.delete(work));
  }
  await Promise.all(running);
  load.endedAt = wallNow();
  load.seconds = (load.endedAt - load.startedAt) / 1000;
  return load;
}

/** Waits until the receiver has `expected` unique deliveries (or the drain budget ends, or the sender died). */
async function drain(receiver: Receiver, expected: number, service: Pick<Service, 'death'>): Promise<void> {
  const deadline = Date.now() + DRAIN_SECONDS * 1000;
  const progress = setInterval(() => log(`  received ${receiver.unique}/${expected}`), 10_000);
  while (receiver.unique < expected && Date.now() < deadline && !service.death() && !interrupted) await sleep(100);
  clearInterval(progress);
  // A short grace for late duplicates, not part of any timing.
  await sleep(1000);
}

// ---------------------------------------------------------------- one side

interface Phase {
  load: LoadResult;
  expected: number;
  received: number;
  duplicates: number;
  /** Deliveries per second, first PATCH to last receipt. */
  rate: number;
  latency: Dist;
  cpu: CpuReport | null;
}

interface Side {
  label: string;
  commit: string;
  baseline: LoadResult;
  baselineCpu: CpuReport | null;
  burst: Phase;
  open: Phase;
  badSignatures: number;
  verified: number;
  malformed: string[];
  recorded: Array<{ status: string; attempt: number; n: number }>;
  log: string[];
  death: string | null;
}

async function runPhase(receiver: Receiver, service: Service, pgPids: () => Promise<number[]>, run: () => Promise<LoadResult>): Promise<Phase> {
  const firstArrival = receiver.arrivals.length;
  const uniqueBefore = receiver.unique;
  const duplicatesBefore = receiver.duplicates;
  const cpu = new CpuWindow({ bench: process.pid, service: service.pid }, await pgPids(), pgPids);
  const load = await run();
  const expected = load.events * SUBSCRIPTIONS;
  log(
    `  ${load.events} events in ${load.seconds.toFixed(1)} s (${(load.samples.length / load.seconds).toFixed(0)} PATCH/s); received so far ${receiver.unique - uniqueBefore}/${expected}`,
  );
  await drain(receiver, uniqueBefore + expected, service);
  const cpuReport = await cpu.end();
  const arrivals = receiver.arrivals.slice(firstArrival);
  const last = arrivals.reduce((m, a) => Math.max(m, a.at), -Infinity);
  return {
    load,
    expected,
    received: receiver.unique - uniqueBefore,
    duplicates: receiver.duplicates - duplicatesBefore,
    rate: arrivals.length / ((last - load.startedAt) / 1000),
    latency: dist(arrivals.map((a) => a.latencyMs)),
    cpu: cpuReport,
  };
}

function serviceEnv(databaseUrl: string, receiver: Receiver, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    SEED_DEMO: '0',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    NODE_EXTRA_CA_CERTS: receiver.caFile,
    RATE_LIMIT_REST_PER_MINUTE: '10000000',
    // e.g. BENCH_SERVICE_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the service only.
    ...(process.env.BENCH_SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVICE_NODE_OPTIONS } : {}),
    ...extra,
  };
}

/** The bench's own connections (left out of the CPU accounting) and the PIDs of the service's backends. */
function benchPool(db: { name: string; url: string }) {
  const pool = new pg.Pool({ connectionString: db.url, max: 2, application_name: 'merx-bench' });
  const pgPids = async () =>
    (
      await pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name <> 'merx-bench'", [db.name])
    ).rows.map((r) => r.pid);
  return { pool, pgPids };
}

/** An account with a key and `wanted` seeded orders (their ids in a stable shuffled order). */
async function prepareAccount(service: Service, pool: pg.Pool, wanted: number): Promise<{ accountId: string; key: string; ids: string[] }> {
  const account = await must(
    request(service.url, 'POST', '/admin/api/accounts', ADMIN_TOKEN, { name: 'Bench Webhooks', email: 'bench-webhooks@example.com', plan: 'pro' }),
    'create account',
  );
  const accountId: string = account.data.id;
  const issued = await must(
    request(service.url, 'POST', `/admin/api/accounts/${accountId}/keys`, ADMIN_TOKEN, { name: 'bench-webhooks', scopes: SCOPES }),
    'issue key',
  );
  await must(request(service.url, 'POST', `/admin/api/accounts/${accountId}/seed`, ADMIN_TOKEN, { orders: wanted, products: 20, seed: 11 }), 'seed');
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM orders WHERE account_id = $1 ORDER BY md5(id::text)', [accountId]);
  if (rows.length < wanted) throw new Error(`the seed made ${rows.length} orders, expected ${wanted}`);
  await pool.query('VACUUM (ANALYZE) orders');
  return { accountId, key: issued.key, ids: rows.map((r) => r.id) };
}

async function subscribe(service: Service, key: string, receiver: Receiver): Promise<void> {
  for (let i = 1; i <= SUBSCRIPTIONS; i++) {
    const hookPath = `/hook-${i}/${crypto.randomUUID()}`;
    const created = await must(
      request(service.url, 'POST', '/api/v1/webhooks', key, { url: receiver.origin + hookPath, events: [EVENT_NAME], description: `bench ${i}` }),
      `create webhook ${i}`,
    );
    receiver.secrets.set(hookPath, created.secret);
  }
}

async function runSide(label: string, root: string): Promise<Side> {
  const commit = gitCommit(root);
  log(`== ${label}: ${root} (${commit})`);
  serviceLog.counts.clear();
  serviceLog.examples.length = 0;
  const db = await createDatabase();
  const receiver = await startReceiver();
  const service = await startService(path.join(root, 'src', 'main.ts'), serviceEnv(db.url, receiver));
  log(`service ${service.url} (pid ${service.pid})`);
  const { pool, pgPids } = benchPool(db);
  try {
    const wanted = BASELINE_EVENTS + WARMUP_EVENTS + EVENTS;
    const { accountId, key, ids } = await prepareAccount(service, pool, wanted);
    const warmupOrders = ids.slice(0, WARMUP_EVENTS);
    const baselineOrders = ids.slice(WARMUP_EVENTS, WARMUP_EVENTS + BASELINE_EVENTS);
    const burstOrders = ids.slice(WARMUP_EVENTS + BASELINE_EVENTS);

    // Baseline: the same PATCH burst with no subscription (events are written, nothing fans out).
    await patchBurst(service.url, key, warmupOrders, 'warm-up');
    await waitForQuiet(10);
    const baselineWindow = new CpuWindow({ bench: process.pid, service: service.pid }, await pgPids(), pgPids);
    const baseline = await patchBurst(service.url, key, baselineOrders, 'baseline');
    const baselineCpu = await baselineWindow.end();
    log(`baseline (no subscriptions): ${baseline.samples.length} PATCH in ${baseline.seconds.toFixed(1)} s`);

    await subscribe(service, key, receiver);
    // Warm the HTTPS path (TLS context, first handshakes) with a few events, not measured.
    await patchBurst(service.url, key, warmupOrders.slice(0, 40), 'warm-up 2');
    await drain(receiver, 40 * SUBSCRIPTIONS, service);
    await waitForQuiet(Math.min(20, QUIET_WAIT_SECONDS));

    log(`burst: ${burstOrders.length} PATCH, ${CONCURRENCY} in flight -> ${burstOrders.length * SUBSCRIPTIONS} deliveries`);
    const burst = await runPhase(receiver, service, pgPids, () => patchBurst(service.url, key, burstOrders, 'burst'));
    await waitForQuiet(Math.min(20, QUIET_WAIT_SECONDS));
    log(`open loop: ${OPEN_RATE} events/s for ${OPEN_SECONDS} s -> ${OPEN_RATE * OPEN_SECONDS * SUBSCRIPTIONS} deliveries`);
    const open = await runPhase(receiver, service, pgPids, () => patchOpenLoop(service.url, key, burstOrders, OPEN_RATE, OPEN_SECONDS));

    const { rows: recorded } = await pool.query<{ status: string; attempt: number; n: number }>(
      `SELECT status, attempt, count(*)::int AS n FROM webhook_deliveries WHERE account_id = $1 GROUP BY 1, 2 ORDER BY 3 DESC`,
      [accountId],
    );
    const side: Side = {
      label,
      commit,
      baseline,
      baselineCpu,
      burst,
      open,
      badSignatures: receiver.badSignatures,
      verified: receiver.verified,
      malformed: [...receiver.malformed],
      recorded,
      log: [...serviceLog.counts.entries()].map(([k, n]) => `${k} × ${n}`),
      death: service.death(),
    };
    log(
      `${label}: burst ${fmt(burst.rate)} deliveries/s, p50 ${ms(burst.latency.p50)} p99 ${ms(burst.latency.p99)} ms; ` +
        `open loop p50 ${ms(open.latency.p50)} p99 ${ms(open.latency.p99)} ms; PATCH ${fmt(patchRate(burst.load))}/s vs ${fmt(patchRate(baseline))}/s without subscriptions`,
    );
    return side;
  } finally {
    await pool.end();
    await service.stop();
    await receiver.close();
  }
}

/** The commit a tree was checked out at; a tree exported without git (git archive) names it in BENCH_BEFORE_COMMIT. */
function gitCommit(root: string): string {
  try {
    return execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return process.env.BENCH_BEFORE_COMMIT || 'unknown';
  }
}

// ---------------------------------------------------------------- report

const fmt = (v: number, digits = 0) =>
  Number.isFinite(v) ? v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';
const ms = (v: number) => (Number.isFinite(v) ? (v >= 100 ? fmt(v, 0) : fmt(v, 1)) : 'n/a');
const patchRate = (load: LoadResult) => load.samples.length / load.seconds;
const cores = (v: number | undefined) => (v === undefined ? 'n/a' : v.toFixed(2));

const ROLES = ['service', 'postgres', 'bench'] as const;

/**
 * Where the cost of fan-out goes: CPU milliseconds per PATCH in the baseline,
 * and per delivery in the burst once its PATCHes are counted at the
 * baseline's cost (the burst's window includes the drain). On a machine whose
 * cores are all in use, PATCH/s with subscriptions / without can be no better
 * than PATCH cost / (PATCH cost + deliveries per PATCH x delivery cost).
 */
function cpuCost(side: Side): { patch: string; delivery: string } {
  const base = side.baselineCpu;
  const burst = side.burst.cpu;
  if (!base || !burst) return { patch: 'n/a', delivery: 'n/a' };
  const perPatch = (role: (typeof ROLES)[number]) => (base[role] * base.seconds * 1000) / side.baseline.samples.length;
  const perDelivery = (role: (typeof ROLES)[number]) =>
    (burst[role] * burst.seconds * 1000 - perPatch(role) * side.burst.load.samples.length) / Math.max(1, side.burst.received);
  const list = (f: (role: (typeof ROLES)[number]) => number) => ROLES.map((r) => f(r).toFixed(2)).join(' / ');
  return { patch: list(perPatch), delivery: list(perDelivery) };
}

type MedianRow<S> = [title: string, measure: (s: S) => number, show: (v: number) => string];

/** With BENCH_ROUNDS > 1: each measure's median over the rounds, per side (before / after / this tree), each round's figure in brackets. */
function medianRows<S extends { label: string }>(sides: S[], rows: Array<MedianRow<S>>): string[] {
  const groups = new Map<string, S[]>();
  for (const side of sides) {
    const name = side.label.replace(/ #\d+$/, '');
    groups.set(name, [...(groups.get(name) ?? []), side]);
  }
  if ([...groups.values()].every((g) => g.length < 2)) return [];
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const names = [...groups.keys()];
  const row = ([title, f, show]: MedianRow<S>) =>
    `| ${title} | ${names
      .map(
        (n) =>
          `${show(median(groups.get(n)!.map(f)))} (${groups
            .get(n)!
            .map((s) => show(f(s)))
            .join(', ')})`,
      )
      .join(' | ')} |`;
  return [
    `Medians over ${groups.get(names[0])!.length} alternating rounds (each round's figure in brackets):`,
    '',
    `| | ${names.join(' | ')} |`,
    `|---|${names.map(() => '---').join('|')}|`,
    ...rows.map(row),
    '',
  ];
}

function medians(sides: Side[]): string[] {
  return medianRows(sides, [
    ['Burst: signed deliveries per second', (s) => s.burst.rate, (v) => fmt(v)],
    ['Burst: PATCH/s with subscriptions / without', (s) => (patchRate(s.burst.load) / patchRate(s.baseline)) * 100, (v) => `${v.toFixed(0)} %`],
    ['Open loop: commit-to-receipt p99 ms', (s) => s.open.latency.p99, ms],
  ]);
}

function valid(side: Side): boolean {
  const phases = [side.burst, side.open];
  return (
    phases.every((p) => p.received === p.expected && p.load.errors.size === 0) &&
    side.baseline.errors.size === 0 &&
    side.badSignatures === 0 &&
    side.malformed.length === 0 &&
    side.death === null
  );
}

function report(sides: Side[], started: number, pgVersion: string, quiet: number | null): string {
  const cpus = os.cpus();
  const col = (f: (s: Side) => string) => sides.map(f).join(' | ');
  const lost = (p: Phase) => p.expected - p.received;
  const lines = [
    '# Webhook fan-out benchmark',
    '',
    'Generated by `node bench/webhooks.ts` (do not edit by hand; rerun instead).',
    '',
    `- Date: ${new Date(started).toISOString()} (run took ${((Date.now() - started) / 1000).toFixed(0)} s)`,
    `- Machine: ${os.type()} ${os.release()} ${os.arch()}, ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM; busy before the run (other work): ${quiet === null ? 'n/a' : `${quiet.toFixed(2)} cores`}`,
    `- Node ${process.version}, PostgreSQL ${pgVersion}`,
    '- Service: child process `node src/main.ts` (pg pool 10, workers on), `LOG_LEVEL=warn`, `WEBHOOK_ALLOW_HOSTS=127.0.0.1`, `NODE_EXTRA_CA_CERTS=<throwaway CA>`, `RATE_LIMIT_REST_PER_MINUTE=10000000`; each side on a fresh database',
    '- Receiver: HTTPS on 127.0.0.1 in the bench process, answers 200 at once, verifies every signature, counts duplicates (same event to the same path again)',
    `- ${SUBSCRIPTIONS} subscriptions to \`${EVENT_NAME}\`, distinct paths; each \`PATCH /api/v1/orders/{id}\` \`{admin_notes}\` makes one event, so ${SUBSCRIPTIONS} deliveries`,
    `- Burst (closed loop): ${fmt(EVENTS)} PATCH, ${CONCURRENCY} in flight, distinct orders. Open loop (below capacity): ${OPEN_RATE} PATCH/s for ${OPEN_SECONDS} s, started on schedule whatever the answers take`,
    `- Baseline: the same ${fmt(BASELINE_EVENTS)}-PATCH burst before any subscription exists (after ${WARMUP_EVENTS} unmeasured)`,
    "- Commit-to-receipt: receiver arrival minus the envelope `created_at` (the event row's `now()`, its transaction's start)",
    '',
    `| | ${col((s) => `${s.label} (\`${s.commit}\`)`)} |`,
    `|---|${sides.map(() => '---').join('|')}|`,
    `| Run valid (nothing lost, no bad signature, no error) | ${col((s) => (valid(s) ? 'yes' : '**NO**'))} |`,
    `| **Burst: signed deliveries per second** (first PATCH → last receipt) | ${col((s) => `**${fmt(s.burst.rate)}**`)} |`,
    `| Burst: commit-to-receipt p50 / p99 ms | ${col((s) => `${ms(s.burst.latency.p50)} / **${ms(s.burst.latency.p99)}**`)} |`,
    `| Burst: PATCH/s with ${SUBSCRIPTIONS} subscriptions / without (ratio) | ${col((s) => `${fmt(patchRate(s.burst.load))} / ${fmt(patchRate(s.baseline))} (**${((patchRate(s.burst.load) / patchRate(s.baseline)) * 100).toFixed(0)} %**)`)} |`,
    `| Burst: PATCH p99 ms with / without | ${col((s) => `${ms(dist(s.burst.load.samples.map((x) => x.ms)).p99)} / ${ms(dist(s.baseline.samples.map((x) => x.ms)).p99)}`)} |`,
    `| Burst: CPU cores, service / PostgreSQL / bench / other | ${col((s) => `${cores(s.burst.cpu?.service)} / ${cores(s.burst.cpu?.postgres)} / ${cores(s.burst.cpu?.bench)} / ${cores(s.burst.cpu?.other)}`)} |`,
    `| Baseline: CPU cores, service / PostgreSQL / bench / other | ${col((s) => `${cores(s.baselineCpu?.service)} / ${cores(s.baselineCpu?.postgres)} / ${cores(s.baselineCpu?.bench)} / ${cores(s.baselineCpu?.other)}`)} |`,
    `| CPU ms per PATCH (baseline), service / PostgreSQL / bench | ${col((s) => cpuCost(s).patch)} |`,
    `| CPU ms per delivery (burst less its PATCHes at the baseline's cost), service / PostgreSQL / bench (receiver) | ${col((s) => cpuCost(s).delivery)} |`,
    `| **Open loop: commit-to-receipt p50 / p99 ms** | ${col((s) => `${ms(s.open.latency.p50)} / **${ms(s.open.latency.p99)}**`)} |`,
    `| Open loop: deliveries per second; PATCH p99 ms | ${col((s) => `${fmt(s.open.rate)}; ${ms(dist(s.open.load.samples.map((x) => x.ms)).p99)}`)} |`,
    `| Open loop: CPU cores, service / PostgreSQL / other | ${col((s) => `${cores(s.open.cpu?.service)} / ${cores(s.open.cpu?.postgres)} / ${cores(s.open.cpu?.other)}`)} |`,
    `| Lost (burst + open) | ${col((s) => fmt(lost(s.burst) + lost(s.open)))} |`,
    `| Duplicated (burst + open) | ${col((s) => fmt(s.burst.duplicates + s.open.duplicates))} |`,
    `| Signatures verified / bad | ${col((s) => `${fmt(s.verified)} / ${fmt(s.badSignatures)}`)} |`,
    `| Delivery rows by status, attempt | ${col((s) => s.recorded.map((r) => `${r.status} ${r.attempt}: ${fmt(r.n)}`).join('; '))} |`,
    `| Service log (warn and above) | ${col((s) => (s.log.length ? s.log.join('; ').replace(/\|/g, '/') : 'nothing'))} |`,
    `| PATCH errors | ${col((s) => [...s.baseline.errors, ...s.burst.load.errors, ...s.open.load.errors].map(([k, n]) => `${k} × ${n}`).join('; ') || 'none')} |`,
    '',
    'Trust a column only when "other" CPU is near 0: the machine is shared, and every process here competes for its cores.',
    '',
    ...medians(sides),
  ];
  for (const s of sides) if (s.death) lines.push(`${s.label}: ${s.death}`, '');
  return lines.join('\n');
}

// ---------------------------------------------------------------- drain (BENCH_MODE=drain)

interface DrainSide {
  label: string;
  commit: string;
  /** Sent by the floor (bench/webhook-floor.ts) rather than the service's worker. */
  floor: boolean;
  round: number;
  expected: number;
  received: number;
  duplicates: number;
  /** Pass start to the last receipt. */
  seconds: number;
  /** Pass start to the pass's answer (every outcome recorded). */
  passSeconds: number;
  processed: number;
  /** TLS connections the receiver accepted during the pass, and how many resumed a session. */
  handshakes: number;
  resumed: number;
  cpu: CpuReport | null;
  badSignatures: number;
  malformed: string[];
  recorded: Array<{ status: string; attempt: number; n: number }>;
  log: string[];
  death: string | null;
  patchErrors: Map<string, number>;
  /** The pass's failure, or the floor's outcomes other than delivered (examples). */
  failures: string[];
}

/**
 * The engine alone, no PATCH beside it: DRAIN_EVENTS events x SUBSCRIPTIONS
 * deliveries made while the receiver refuses connections (each first attempt
 * fails at once and waits for its retry), with WORKERS=0 so that no worker
 * sends the retries; then the receiver listens again and one worker pass
 * (the operator's POST /admin/api/jobs/webhook-deliveries/run, the clock set
 * past the retries' due time) sends them all.
 */
async function runDrainSide(label: string, root: string, round: number, floor = false): Promise<DrainSide> {
  const commit = gitCommit(root);
  log(`== ${label}: ${root} (${commit}), ${floor ? 'floor' : 'drain'}`);
  serviceLog.counts.clear();
  serviceLog.examples.length = 0;
  const db = await createDatabase();
  const receiver = await startReceiver();
  await receiver.refuse();
  const service = await startService(path.join(root, 'src', 'main.ts'), serviceEnv(db.url, receiver, { WORKERS: '0' }));
  log(`service ${service.url} (pid ${service.pid})`);
  const { pool, pgPids } = benchPool(db);
  try {
    const { accountId, key, ids } = await prepareAccount(service, pool, DRAIN_EVENTS);
    await subscribe(service, key, receiver);
    const load = await patchBurst(service.url, key, ids, 'drain');
    const expected = load.events * SUBSCRIPTIONS;
    const attempts = async () => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_attempts')).rows[0].n;
    const deadline = Date.now() + DRAIN_SECONDS * 1000;
    while ((await attempts()) < expected && Date.now() < deadline && !service.death()) await sleep(500);
    log(`  ${load.events} events in ${load.seconds.toFixed(1)} s; ${await attempts()} first attempts refused`);
    await receiver.listen();
    const now = new Date(Date.now() + 10 * 60_000).toISOString();
    // The floor: the service's part ends with the preparation; its death would be the preparation's.
    const serviceDeath = service.death();
    let floorProcess: FloorProcess | null = null;
    const bodyCheck = floor ? await checkBodies(pool, accountId) : null;
    if (floor) {
      await service.stop();
      const secrets = Object.fromEntries([...receiver.secrets].map(([hookPath, secret]) => [receiver.origin + hookPath, secret]));
      floorProcess = await startFloor({ databaseUrl: db.url, caFile: receiver.caFile, secrets, now });
      cleanups.push({ name: 'stop floor', run: floorProcess.stop });
      log(`floor pid ${floorProcess.pid}`);
    }
    const sender = floorProcess ?? service;
    const quiet = await waitForQuiet(QUIET_WAIT_SECONDS);
    log(`  machine busy before the pass: ${quiet === null ? 'n/a' : quiet.toFixed(2)} cores`);
    const cpu = new CpuWindow({ bench: process.pid, service: sender.pid }, await pgPids(), pgPids);
    const handshakesBefore = receiver.handshakes;
    const resumedBefore = receiver.resumed;
    const startedAt = wallNow();
    let passEnd = NaN;
    const pass = (
      floorProcess
        ? floorProcess.run()
        : must(request(service.url, 'POST', '/admin/api/jobs/webhook-deliveries/run', ADMIN_TOKEN, { now }), 'worker pass').then((answer) => ({
            claimed: answer.data.processed as number,
            failures: [] as string[],
          }))
    ).then((answer) => ((passEnd = wallNow()), answer));
    // A failed pass ends the wait at once (not after the drain budget), and only its side is invalid.
    let passError: string | null = null;
    const settled = pass.catch((err) => {
      passError = `pass failed: ${err instanceof Error ? err.message : String(err)}`;
      return { claimed: NaN, failures: [passError] };
    });
    await drain(receiver, expected, { death: () => sender.death() ?? passError });
    const { claimed: processed, failures } = await settled;
    const cpuReport = await cpu.end();
    await floorProcess?.stop();
    const last = receiver.arrivals.reduce((m, a) => Math.max(m, a.at), -Infinity);
    const { rows: recorded } = await pool.query<{ status: string; attempt: number; n: number }>(
      `SELECT status, attempt, count(*)::int AS n FROM webhook_deliveries WHERE account_id = $1 GROUP BY 1, 2 ORDER BY 3 DESC`,
      [accountId],
    );
    const side: DrainSide = {
      label,
      commit,
      floor,
      round,
      expected,
      received: receiver.unique,
      duplicates: receiver.duplicates,
      seconds: (last - startedAt) / 1000,
      passSeconds: (passEnd - startedAt) / 1000,
      processed,
      handshakes: receiver.handshakes - handshakesBefore,
      resumed: receiver.resumed - resumedBefore,
      cpu: cpuReport,
      badSignatures: receiver.badSignatures,
      malformed: [...receiver.malformed],
      recorded,
      log: [...serviceLog.counts.entries()].map(([k, n]) => `${k} × ${n}`),
      death: floorProcess ? (serviceDeath ?? floorProcess.death()) : service.death(),
      patchErrors: load.errors,
      failures: bodyCheck ? [bodyCheck, ...failures] : failures,
    };
    log(
      `${label}: drain ${fmt(drainRate(side))} deliveries/s to the last receipt, ${fmt(side.received / side.passSeconds)}/s to the pass's end; ` +
        `CPU ms per delivery ${drainCost(side)}`,
    );
    return side;
  } finally {
    await pool.end();
    await service.stop();
    await receiver.close();
  }
}

const drainRate = (s: DrainSide) => s.received / s.seconds;
/** CPU milliseconds per delivery over the pass (start to last receipt and a 1 s grace), service / PostgreSQL / bench (receiver). */
function drainCostOf(s: DrainSide, role: 'service' | 'postgres' | 'bench' | 'other'): number {
  return s.cpu ? (s.cpu[role] * s.cpu.seconds * 1000) / Math.max(1, s.received) : NaN;
}
const drainCost = (s: DrainSide) => (['service', 'postgres', 'bench'] as const).map((r) => drainCostOf(s, r).toFixed(3)).join(' / ');
const drainValid = (s: DrainSide) =>
  s.received === s.expected &&
  s.badSignatures === 0 &&
  s.malformed.length === 0 &&
  s.death === null &&
  s.patchErrors.size === 0 &&
  s.failures.length === 0 &&
  // The floor counts only if every delivery arrived once and was recorded delivered.
  (!s.floor || (s.duplicates === 0 && s.recorded.every((r) => r.status === 'delivered')));
/** A side's rate as a share of the floor's in the same round (NaN without a floor side). */
function ofFloor(s: DrainSide, sides: DrainSide[]): number {
  const floor = sides.find((f) => f.floor && f.round === s.round);
  return floor ? (drainRate(s) / drainRate(floor)) * 100 : NaN;
}

function drainReport(sides: DrainSide[], started: number, pgVersion: string, quiet: number | null): string {
  const cpus = os.cpus();
  const col = (f: (s: DrainSide) => string) => sides.map(f).join(' | ');
  return [
    '',
    `## Drain: the engine alone${FLOOR ? ', beside the floor' : ''} (BENCH_MODE=${MODE}${FLOOR && MODE !== 'floor' ? ', BENCH_FLOOR=1' : ''}), ${new Date(started).toISOString()}`,
    '',
    `Generated by \`BENCH_MODE=${MODE}${FLOOR && MODE !== 'floor' ? ' BENCH_FLOOR=1' : ''} node bench/webhooks.ts\` (appended; rerun rather than edit the table).`,
    '',
    `- Run took ${((Date.now() - started) / 1000).toFixed(0)} s. Machine: ${os.type()} ${os.release()} ${os.arch()}, ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}; busy before the run (other work): ${quiet === null ? 'n/a' : `${quiet.toFixed(2)} cores`}; Node ${process.version}, PostgreSQL ${pgVersion}`,
    `- Each side on a fresh database, service with \`WORKERS=0\`: ${fmt(DRAIN_EVENTS)} PATCHes x ${SUBSCRIPTIONS} subscriptions while the receiver refuses connections (every first attempt fails at once), then the receiver listens again and one worker pass (\`POST /admin/api/jobs/webhook-deliveries/run\`, clock 10 min ahead) sends every retry; nothing else runs in the service meanwhile`,
    '- Rate: deliveries / (pass start → last receipt). CPU: the window from the pass start to the last receipt plus a 1 s grace, per delivery',
    ...(sides.some((s) => s.floor)
      ? [
          `- floor: the same preparation on this tree, then the service stopped and the retries sent by \`bench/webhook-floor.ts\` in its own process (its CPU in the "service" column): claims of 200 by one UPDATE ... RETURNING with the body built by PostgreSQL, X-Merx-Signature and webhook-signature (one HMAC each), HTTPS keep-alive with at most 32 attempts in flight per subscription (undici, a pool each), outcomes recorded in batches (one UPDATE of the deliveries and one INSERT of attempt rows in one statement, asynchronous commit): the least a durable sender must do for the same data`,
        ]
      : []),
    '',
    `| | ${col((s) => `${s.label} (\`${s.commit}\`)`)} |`,
    `|---|${sides.map(() => '---').join('|')}|`,
    `| Run valid (nothing lost, no bad signature, no error) | ${col((s) => (drainValid(s) ? 'yes' : '**NO**'))} |`,
    `| **Drain: deliveries per second** (pass start → last receipt) | ${col((s) => `**${fmt(drainRate(s))}**`)} |`,
    ...(sides.some((s) => s.floor) ? [`| **Rate, % of the floor's in the same round** | ${col((s) => `**${fmt(ofFloor(s, sides))} %**`)} |`] : []),
    `| Drain: seconds to the last receipt / to the pass's answer | ${col((s) => `${s.seconds.toFixed(2)} / ${s.passSeconds.toFixed(2)}`)} |`,
    `| **CPU ms per delivery, service (floor: its process) / PostgreSQL / bench (receiver)** | ${col((s) => `**${drainCost(s)}**`)} |`,
    `| CPU cores, service / PostgreSQL / bench / other | ${col((s) => `${cores(s.cpu?.service)} / ${cores(s.cpu?.postgres)} / ${cores(s.cpu?.bench)} / ${cores(s.cpu?.other)}`)} |`,
    `| TLS connections the receiver accepted in the pass (resumed sessions) | ${col((s) => `${fmt(s.handshakes)} (${fmt(s.resumed)})`)} |`,
    `| Expected / received / duplicated / processed by the pass | ${col((s) => `${fmt(s.expected)} / ${fmt(s.received)} / ${fmt(s.duplicates)} / ${fmt(s.processed)}`)} |`,
    `| Delivery rows by status, attempt | ${col((s) => s.recorded.map((r) => `${r.status} ${r.attempt}: ${fmt(r.n)}`).join('; '))} |`,
    `| Service log (warn and above, less the ENCRYPTION_KEYS notice) | ${col(
      (s) =>
        s.log
          .filter((l) => !l.includes('ENCRYPTION_KEYS'))
          .join('; ')
          .replace(/\|/g, '/') || 'nothing',
    )} |`,
    `| The pass's failure, or the floor's outcomes other than delivered | ${col((s) => s.failures.join('; ').replace(/\|/g, '/') || 'none')} |`,
    '',
    ...medianRows(sides, [
      ['Drain: deliveries per second', drainRate, (v) => fmt(v)],
      ...(sides.some((s) => s.floor)
        ? [["Rate, % of the floor's in the same round", (s: DrainSide) => ofFloor(s, sides), (v: number) => `${fmt(v)} %`] as MedianRow<DrainSide>]
        : []),
      ['CPU ms per delivery, service', (s) => drainCostOf(s, 'service'), (v) => v.toFixed(3)],
      ['CPU ms per delivery, PostgreSQL', (s) => drainCostOf(s, 'postgres'), (v) => v.toFixed(3)],
      ['CPU ms per delivery, bench (receiver)', (s) => drainCostOf(s, 'bench'), (v) => v.toFixed(3)],
      ['Other CPU, cores', (s) => s.cpu?.other ?? NaN, (v) => v.toFixed(2)],
    ]),
  ].join('\n');
}

async function mainDrain(started: number, pgVersion: string, quiet: number | null): Promise<boolean> {
  const sides: DrainSide[] = [];
  const before = process.env.BENCH_BEFORE_DIR;
  for (let round = 1; round <= ROUNDS && !interrupted; round++) {
    const suffix = ROUNDS > 1 ? ` #${round}` : '';
    if (MODE !== 'floor') {
      if (before) sides.push(await runDrainSide(`before${suffix}`, path.resolve(before), round));
      sides.push(await runDrainSide(`${before ? 'after' : 'this tree'}${suffix}`, ROOT, round));
    }
    if (FLOOR) sides.push(await runDrainSide(`floor${suffix}`, ROOT, round, true));
  }
  if (interrupted) throw new Error('interrupted');
  fs.appendFileSync(RESULTS_FILE, drainReport(sides, started, pgVersion, quiet));
  log(`appended the drain to ${path.relative(process.cwd(), RESULTS_FILE)}`);
  return sides.every(drainValid);
}

// ---------------------------------------------------------------- main

async function main(): Promise<boolean> {
  const started = Date.now();
  const pgVersion = (await adminQuery<{ server_version: string }>('SHOW server_version'))[0].server_version;
  const quiet = await waitForQuiet(QUIET_WAIT_SECONDS);
  log(`machine busy before start: ${quiet === null ? 'n/a' : `${quiet.toFixed(2)} cores`}`);
  if (MODE === 'drain' || MODE === 'floor') return mainDrain(started, pgVersion, quiet);
  const sides: Side[] = [];
  const before = process.env.BENCH_BEFORE_DIR;
  // Alternating rounds: on a shared machine one run of each side can land in a slow minute and the other in a fast one.
  for (let round = 1; round <= ROUNDS && !interrupted; round++) {
    const suffix = ROUNDS > 1 ? ` #${round}` : '';
    if (before) sides.push(await runSide(`before${suffix}`, path.resolve(before)));
    sides.push(await runSide(`${before ? 'after' : 'this tree'}${suffix}`, ROOT));
  }
  if (interrupted) throw new Error('interrupted');
  // The fan-out report replaces only itself: the drains and notes appended below it (each a "## " section) stay.
  const previous = fs.existsSync(RESULTS_FILE) ? fs.readFileSync(RESULTS_FILE, 'utf8') : '';
  const appended = previous.search(/^## /m);
  fs.writeFileSync(RESULTS_FILE, report(sides, started, pgVersion, quiet) + (appended >= 0 ? `\n${previous.slice(appended)}` : ''));
  log(`wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
  return sides.every(valid);
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
