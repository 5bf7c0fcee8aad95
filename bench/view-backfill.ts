// node bench/view-backfill.ts (issue 29): "Backfill existing rows in the
// migration in batches, without holding a lock on the table for more than a
// second at 1M orders (measure it)." On PostgreSQL: 100k orders through the
// seed endpoint, copied in SQL to BENCH_ORDERS (1M), with shipments; then the
// database is put back in its state before the stored views' upkeep (their
// triggers, columns and stored_views rows dropped) and migrateDatabase runs
// on it, as an instance starting on an existing database would, while a probe
// on other connections reads and writes orders every ~50 ms. Writes
// bench/RESULTS-view-backfill.md (a smoke run: BENCH_ORDERS=20000; do not
// commit its results).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import { openDb } from '../src/platform/db/open-db.ts';
import type { Db, Sql } from '../src/platform/db/db.ts';
import { DOCUMENT_COLUMN, ETAG_COLUMN, VERSION_COLUMN, type View } from '../src/platform/read-path/stored-view.ts';
import { BATCH_ROWS, BATCH_TARGET_MS, backfillViews } from '../src/platform/read-path/view-upkeep.ts';
import { latestViewBlocks } from '../src/platform/read-path/view-migrations.ts';
import { migrateDatabase, views } from '../src/views.ts';
import { startServiceProcess } from './service-process.ts';
import { addShipments, multiplyOrders, provisionAndSeed, SEED_ENDPOINT_MAX_ORDERS, settle, tableSizeMb, withoutOrderIndexes } from './fixtures.ts';
import { benchTools, setting } from './bench-tools.ts';
import { pidJiffies } from './cpu.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const ORDERS = setting('BENCH_ORDERS', 1_000_000);
const PROBE_EVERY_MS = setting('BENCH_PROBE_EVERY_MS', 50);
const SAMPLE = setting('BENCH_VERIFY_SAMPLE', 1000);
/** Orders made through the seed endpoint (at most 100k); the rest are copies made in SQL. */
const SEEDED = Math.min(ORDERS, setting('BENCH_SEED_ORDERS', SEED_ENDPOINT_MAX_ORDERS), SEED_ENDPOINT_MAX_ORDERS);
/** 0: no limit. Else the backfill stops starting batches after this long, and the report covers the batches it made. */
const BUDGET_SECONDS = setting('BENCH_BACKFILL_BUDGET_SECONDS', 0);
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-view-backfill.md');

const { log, cleanups, createDatabase, run } = benchTools('view-backfill', ADMIN_URL, 'merx_backfill');

/** before, install, backfill <view>, after. */
type Phase = string;
let phase: Phase = 'before';
const PHASES = ['before', 'install', ...views.filter((v) => v.stored).map((v) => `backfill ${v.name}`), 'after'];

class BudgetReached extends Error {}

/** One transaction of migrateDatabase, seen through the instrumented Db. */
interface TxRecord {
  startedMs: number;
  endedMs: number;
  /** The stored view a backfill batch worked on (from its progress-row query); undefined for the install. */
  view?: string;
  /** The install only: when its first statement on orders (ALTER TABLE orders ADD COLUMN) started. */
  ordersLockedAtMs?: number;
  /** A batch: the rows it wrote; null for the last transaction of a view, which finds it done. */
  rows?: number | null;
  /** CPU (user + system) of the PostgreSQL backend that ran the transaction, from /proc: its length on an idle core. */
  cpuMs?: number;
  statements: Array<{ what: string; ms: number }>;
}

/**
 * The Db migrateDatabase runs on, unchanged but timed: every transaction
 * (the install is the first, each backfill batch one more) and every
 * statement in it, so the install's hold on orders (from its ALTER TABLE to
 * its COMMIT) and each batch's length are measured where they happen.
 */
let budgetEndsAt: number | undefined;

function timedDb(db: Db, records: TxRecord[]): Db {
  const timedSql = (tx: Sql, record: TxRecord): Sql =>
    new Proxy(tx, {
      get(target, key) {
        if (key !== 'query' && key !== 'exec') return Reflect.get(target, key, target);
        return async (text: string, ...rest: unknown[]) => {
          const started = performance.now();
          if (key === 'query' && /FROM stored_views WHERE name = \$1 FOR UPDATE/.test(text)) {
            record.view = String((rest[0] as unknown[])[0]);
            phase = `backfill ${record.view}`;
          }
          if (record.ordersLockedAtMs === undefined && /ALTER TABLE orders /.test(text)) record.ordersLockedAtMs = started;
          try {
            return await (target[key] as (...args: unknown[]) => Promise<unknown>)(text, ...rest);
          } finally {
            record.statements.push({ what: text.replace(/\s+/g, ' ').slice(0, 60), ms: performance.now() - started });
          }
        };
      },
    });
  return new Proxy(db, {
    get(target, key) {
      if (key !== 'tx') {
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async <T>(fn: (tx: Sql) => Promise<T>, options?: unknown) => {
        if (budgetEndsAt !== undefined && records.length > 1 && performance.now() > budgetEndsAt) throw new BudgetReached();
        const record: TxRecord = { startedMs: performance.now(), endedMs: 0, statements: [] };
        if (records.length === 0) phase = 'install';
        records.push(record);
        try {
          const result = await target.tx(async (tx) => {
            const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
            const before = pidJiffies(rows[0].pid);
            try {
              return await fn(timedSql(tx, record));
            } finally {
              const after = pidJiffies(rows[0].pid);
              // Jiffies are 10 ms; the COMMIT's own CPU is left out.
              if (before !== null && after !== null) record.cpuMs = (after - before) * 10;
            }
          }, options as never);
          if (typeof result === 'number' || result === null) record.rows = result as number | null;
          return result;
        } finally {
          record.endedMs = performance.now();
          if (records.length === 1 && BUDGET_SECONDS) budgetEndsAt = record.endedMs + BUDGET_SECONDS * 1000;
        }
      };
    },
  });
}

interface Sample {
  phase: Phase;
  ms: number;
}

/** A loop on its own connection, lock_timeout unset: one statement every PROBE_EVERY_MS, timed. */
async function probeLoop(
  databaseUrl: string,
  statement: (client: pg.Client) => Promise<unknown>,
  samples: Sample[],
  running: () => boolean,
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('RESET lock_timeout; RESET statement_timeout');
    while (running()) {
      const startedIn = phase;
      const started = performance.now();
      await statement(client);
      const ms = performance.now() - started;
      samples.push({ phase: startedIn, ms });
      await new Promise((r) => setTimeout(r, Math.max(0, PROBE_EVERY_MS - ms)));
    }
  } finally {
    await client.end();
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}

/** Puts a database back before issue 29's upkeep: no view triggers, no document columns, no stored_views rows. */
async function dropViewUpkeep(db: Db): Promise<void> {
  const { rows: triggers } = await db.query<{ name: string; table: string }>(
    `SELECT t.tgname AS name, c.relname AS table FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE t.tgname LIKE 'merx_view_%' AND NOT t.tgisinternal`,
  );
  for (const t of triggers) await db.exec(`DROP TRIGGER ${t.name} ON ${t.table}`);
  for (const view of views.filter((v) => v.stored)) {
    await db.exec(`ALTER TABLE ${view.table} DROP COLUMN ${DOCUMENT_COLUMN}, DROP COLUMN ${ETAG_COLUMN}, DROP COLUMN IF EXISTS ${VERSION_COLUMN}`);
  }
  await db.query('DELETE FROM stored_views');
  // Issue 43: the upkeep is a migration now; forgetting it makes migrate install it again.
  await db.query('DELETE FROM schema_migrations WHERE version = ANY($1)', [[...new Set([...latestViewBlocks().values()].map((b) => b.file))]]);
  log(`dropped ${triggers.length} view triggers (${triggers.map((t) => t.name).join(', ')}), the document columns and stored_views rows`);
}

/** The sampled rows of a view whose document or ETag is not the view built from the row now. */
async function staleInSample(db: Db, view: View, ids: string[]): Promise<number> {
  const { alias: a, from, joins, json } = view.built;
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${from} ${joins ?? ''}
      WHERE ${a}.id = ANY($1::uuid[])
        AND (${a}.${DOCUMENT_COLUMN} IS DISTINCT FROM ${json}::text OR ${a}.${ETAG_COLUMN} IS DISTINCT FROM merx_view_etag(${a}.${DOCUMENT_COLUMN}))`,
    [ids],
  );
  return rows[0].n;
}

async function main(): Promise<void> {
  const started = new Date();
  const loadAt: Record<string, number[]> = { start: os.loadavg() };
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const databaseUrl = await createDatabase();
  const service = await startServiceProcess(databaseUrl, adminToken, { env: { WORKERS: '0' } });
  cleanups.push({ name: 'stop service', run: () => service.stop() });
  const seeded = SEEDED;
  log(`seeding ${seeded.toLocaleString('en-US')} orders through the seed endpoint…`);
  const tenant = await provisionAndSeed(service.url, adminToken, { orders: seeded, products: 200, customers: Math.max(100, seeded / 4) });
  log(`seeded in ${tenant.seedSeconds.toFixed(1)} s`);
  await service.stop();

  const db = await openDb({ databaseUrl, dataDir: '' });
  cleanups.push({ name: 'close pool', run: () => db.close() });
  // Before the copies, so that they are made without triggers (faster) and the rows carry no dropped column.
  await dropViewUpkeep(db);
  for (const table of ['orders', 'shipments', 'products']) await db.exec(`VACUUM FULL ${table}`);
  const factor = Math.ceil(ORDERS / seeded);
  await withoutOrderIndexes(db, log, async () => {
    if (factor > 1) await multiplyOrders(db, tenant.accountId, factor, log);
    await addShipments(db, tenant.accountId);
  });
  await settle(db);
  const count = async (table: string) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
  const sizes = { orders: await count('orders'), shipments: await count('shipments'), products: await count('products') };
  const ordersMbBefore = await tableSizeMb(db, 'orders');
  log(
    `${sizes.orders.toLocaleString('en-US')} orders (${ordersMbBefore.toFixed(0)} MB), ${sizes.shipments.toLocaleString('en-US')} shipments, ${sizes.products} products`,
  );
  const { rows: idRows } = await db.query<{ id: string }>('SELECT id FROM orders TABLESAMPLE SYSTEM (5) LIMIT 20000');
  const probeIds = idRows.map((r) => r.id);

  // The probe: a page read and a random-row write, and a write to the row the backfill takes next (the first row of
  // the batch under way, whose lock it waits on: the worst case a client writing during the backfill can meet).
  const reads: Sample[] = [];
  const writes: Sample[] = [];
  const hotWrites: Sample[] = [];
  let probing = true;
  const running = () => probing;
  const probes = Promise.all([
    probeLoop(
      databaseUrl,
      (c) => c.query('SELECT o.* FROM orders o WHERE o.account_id = $1 ORDER BY o.created_at DESC, o.id DESC LIMIT 51', [tenant.accountId]),
      reads,
      running,
    ),
    probeLoop(
      databaseUrl,
      (c) =>
        c.query('UPDATE orders SET admin_notes = $2 WHERE id = $1', [probeIds[Math.floor(Math.random() * probeIds.length)], `probe ${Date.now()}`]),
      writes,
      running,
    ),
    probeLoop(
      databaseUrl,
      (c) =>
        c.query(
          `UPDATE orders SET admin_notes = $1 WHERE id = (SELECT id FROM orders WHERE id > COALESCE((SELECT backfilled_through FROM stored_views WHERE name = 'order'),
             '00000000-0000-0000-0000-000000000000') ORDER BY id LIMIT 1)`,
          [`probe ${Date.now()}`],
        ),
      hotWrites,
      running,
    ),
  ]);
  await new Promise((r) => setTimeout(r, 2000));

  log('migrateDatabase…');
  const records: TxRecord[] = [];
  const migrationStarted = performance.now();
  loadAt.migration = os.loadavg();
  let applied: string[] = [];
  let stopped = false;
  try {
    // Issue 43: an instance listens between the two; here they run back to back, as the backfill's cost is what is measured.
    const timed = timedDb(db, records);
    applied = await migrateDatabase(timed);
    for (const p of await backfillViews(timed, views)) log(`stored view documents written ${JSON.stringify(p)}`);
  } catch (err) {
    if (!(err instanceof BudgetReached)) throw err;
    stopped = true;
    applied = ['(stopped by the budget)'];
    log(`budget of ${BUDGET_SECONDS} s reached: no new batch started`);
  }
  const migrationMs = performance.now() - migrationStarted;
  phase = 'after';
  loadAt.end = os.loadavg();
  await new Promise((r) => setTimeout(r, 2000));
  probing = false;
  await probes;
  log(`applied: ${applied.join(', ')} in ${(migrationMs / 1000).toFixed(1)} s`);

  const install = records[0];
  const installMs = install.endedMs - install.startedMs;
  const ordersHeldMs = install.endedMs - (install.ordersLockedAtMs ?? install.startedMs);
  const batches = records.slice(1);
  const perView = views
    .filter((v) => v.stored)
    .map((view) => {
      const mine = batches.filter((b) => b.view === view.name);
      const writing = mine.filter((b) => typeof b.rows === 'number');
      const times = writing.map((b) => b.endedMs - b.startedMs);
      const rows = writing.reduce((n, b) => n + (b.rows ?? 0), 0);
      const spanMs = mine.length ? mine.at(-1)!.endedMs - mine[0].startedMs : 0;
      const done = mine.some((b) => b.rows === null);
      const cpu = writing.map((b) => b.cpuMs ?? NaN);
      const cpuPerRowMs = writing.reduce((n, b) => n + (b.cpuMs ?? 0), 0) / Math.max(1, rows);
      // Per row, from every batch but the last, which is short and mostly its fixed cost.
      const full = writing.length > 1 ? writing.slice(0, -1) : writing.filter((b) => b.rows);
      const wallPerRowMaxMs = Math.max(0, ...full.map((b) => (b.endedMs - b.startedMs) / b.rows!));
      const cpuPerRowMaxMs = Math.max(0, ...full.map((b) => (b.cpuMs ?? 0) / b.rows!));
      return {
        view,
        rows,
        done,
        wallPerRowMaxMs,
        cpuPerRowMaxMs,
        cpuP50Ms: percentile(cpu, 50),
        cpuMaxMs: Math.max(0, ...cpu),
        cpuPerRowMs,
        batches: writing.length,
        spanMs,
        longestMs: Math.max(0, ...times),
        p99Ms: percentile(times, 99),
        p50Ms: percentile(times, 50),
      };
    });

  // Every row has a document; a sample of each equals the view built from the row now.
  const verify: string[] = [];
  for (const view of views.filter((v) => v.stored)) {
    const { rows } = await db.query<{ missing: number; total: number }>(
      `SELECT count(*) FILTER (WHERE ${DOCUMENT_COLUMN} IS NULL OR ${ETAG_COLUMN} IS NULL)::int AS missing, count(*)::int AS total FROM ${view.table}`,
    );
    // Stopped by the budget: the sample is drawn from the rows the backfill reached.
    const { rows: sample } = await db.query<{ id: string }>(
      `SELECT t.id FROM ${view.table} t LEFT JOIN stored_views s ON s.name = $1
        WHERE s.backfilled OR t.id <= s.backfilled_through ORDER BY random() LIMIT ${SAMPLE}`,
      [view.name],
    );
    const stale = sample.length
      ? await staleInSample(
          db,
          view,
          sample.map((r) => r.id),
        )
      : 0;
    verify.push(
      `| ${view.name} (${view.table}) | ${rows[0].total.toLocaleString('en-US')} | ${rows[0].missing.toLocaleString('en-US')} | ${sample.length} | ${stale} |`,
    );
    if ((rows[0].missing && !stopped) || stale) process.exitCode = 1;
  }
  const ordersMbAfter = await tableSizeMb(db, 'orders');

  const cpus = os.cpus();
  const version = (await db.query<{ v: string }>('SELECT version() AS v')).rows[0].v.split(' on ')[0];
  const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(n < 10 ? 1 : 0)} ms` : '-');
  const probeRow = (label: string, samples: Sample[]) =>
    PHASES.flatMap((p) => {
      const values = samples.filter((s) => s.phase === p).map((s) => s.ms);
      return values.length
        ? [`| ${label} | ${p} | ${values.length} | ${ms(percentile(values, 50))} | ${ms(percentile(values, 99))} | ${ms(Math.max(...values))} |`]
        : [];
    });
  const worst = Math.max(...[...reads, ...writes, ...hotWrites].filter((s) => s.phase !== 'before' && s.phase !== 'after').map((s) => s.ms));
  const longestBatch = Math.max(...perView.map((v) => v.longestMs));
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  const lines = [
    '# Stored views: the migration on an existing database (issue 29)',
    '',
    'Written by `node bench/view-backfill.ts` (do not edit by hand; rerun instead; each run appends its section). The database is seeded, then put back in',
    'its state before the stored views (their triggers, `view_json`/`view_etag` columns and `stored_views` rows dropped), and',
    '`migrateDatabase` (src/views.ts) runs on it as an instance starting on it would: `migrate` installs the upkeep in the',
    "migrations' transaction, then `backfillViews` writes every document in batches sized to hold their rows about",
    "`BATCH_TARGET_MS` (from the previous batch's pace, within `BATCH_ROWS`), each its own",
    'transaction. A probe on three other connections (`lock_timeout` unset) runs all the while, one statement every',
    `${PROBE_EVERY_MS} ms each: a page read (the account's newest 51 orders, \`SELECT o.*\`), an update of a random order, and an`,
    'update of the next order the backfill takes (the first row of the batch under way: the longest row-lock wait a writer can',
    'meet). A statement counts in the phase it started in. "Backend CPU" is the user + system time of the PostgreSQL',
    'backend that ran each batch (from /proc, 10 ms steps): about how long the batch would take on an idle core, whatever',
    'else the machine was doing.',
    '',
    `## ${started.toISOString()}`,
    '',
    `- Machine: ${cpus.length} × ${cpus[0]?.model.trim()}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB; ${version}; Node ${process.version}.`,
    `- Load average (1 / 5 / 15 min) at the start: ${load(loadAt.start)}; when the migration started: ${load(loadAt.migration)}; at its end: ${load(loadAt.end)} (the machine is shared: other work ran beside it).`,
    `- Data: ${sizes.orders.toLocaleString('en-US')} orders (${seeded.toLocaleString('en-US')} through the seed endpoint${factor > 1 ? ', the rest copies made in SQL' : ''}; the orders table ${ordersMbBefore.toFixed(0)} MB before, ${ordersMbAfter.toFixed(0)} MB after), ${sizes.shipments.toLocaleString('en-US')} shipments, ${sizes.products} products; \`VACUUM (ANALYZE)\` before the migration.`,
    `- Batches sized for ${BATCH_TARGET_MS} ms each, ${BATCH_ROWS.min} to ${BATCH_ROWS.max} rows (the first ${BATCH_ROWS.first}). migrateDatabase took ${(migrationMs / 1000).toFixed(1)} s in all (${applied.join(', ')}).`,
    '',
    '### The install (one transaction: the upkeep of the three views)',
    '',
    `- The transaction: ${ms(installMs)}; orders held (ACCESS EXCLUSIVE from \`ALTER TABLE orders ADD COLUMN\` to the commit): **${ms(ordersHeldMs)}**.`,
    `- Its statements: ${install.statements.map((s) => `\`${s.what.replace(/`/g, '')}…\` ${ms(s.ms)}`).join('; ')}.`,
    '',
    '### The backfill',
    '',
    ...(stopped
      ? [
          `Stopped by \`BENCH_BACKFILL_BUDGET_SECONDS\`=${BUDGET_SECONDS}: after that long no new batch started, so the table shows the batches made until then (the rows without a document below are the rest).`,
          '',
        ]
      : []),
    '| view | rows written | batches | time | rows/s | batch p50 | batch p99 | longest batch | backend CPU per batch: p50 / max | CPU per row |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...perView.map(
      (v) =>
        `| ${v.view.name}${v.done ? '' : ' (unfinished)'} | ${v.rows.toLocaleString('en-US')} | ${v.batches} | ${(v.spanMs / 1000).toFixed(1)} s | ${v.spanMs ? ((v.rows / v.spanMs) * 1000).toFixed(0) : '-'} | ${ms(v.p50Ms)} | ${ms(v.p99Ms)} | **${ms(v.longestMs)}** | ${ms(v.cpuP50Ms)} / ${ms(v.cpuMaxMs)} | ${v.rows ? `${v.cpuPerRowMs.toFixed(2)} ms` : '-'} |`,
    ),
    '',
    '### The probe',
    '',
    '| statement | phase | statements | p50 | p99 | max |',
    '|---|---|---:|---:|---:|---:|',
    ...probeRow('read: newest 51 orders', reads),
    ...probeRow('write: a random order', writes),
    ...probeRow('write: the next order the backfill takes', hotWrites),
    '',
    '### Verification',
    '',
    '| view | rows | without a document | sampled | sample not equal to the built view |',
    '|---|---:|---:|---:|---:|',
    ...verify,
    '',
    `At the slowest batch's time per row, ${perView
      .filter((v) => v.batches)
      .map((v) => `${v.view.name} ${v.wallPerRowMaxMs.toFixed(2)} ms`)
      .join(', ')}, batches of at most ${perView
      .filter((v) => v.batches)
      .map((v) => `${Math.floor(1000 / v.wallPerRowMaxMs)} ${v.view.table}`)
      .join(
        ', ',
      )} would have stayed under a second on this machine as loaded; at the backend's CPU per row (an idle core) of the most costly batch, ${perView
      .filter((v) => v.batches && v.cpuPerRowMaxMs)
      .map((v) => `${Math.floor(1000 / v.cpuPerRowMaxMs)} ${v.view.table}`)
      .join(', ')}.`,
    '',
    `**Longest batch ${ms(longestBatch)}, orders held by the install ${ms(ordersHeldMs)}, longest probe statement during the migration ${ms(worst)}: ${Math.max(longestBatch, ordersHeldMs, worst) < 1000 ? 'under' : 'OVER'} the issue's one second.**`,
    '',
  ];
  // Each run appends its section under the page's header (a 1M run and a smaller one stay side by side).
  const firstSection = lines.findIndex((line) => line.startsWith('## '));
  const previous = fs.existsSync(RESULTS_FILE) ? fs.readFileSync(RESULTS_FILE, 'utf8').trimEnd() : '';
  const written = previous.includes('\n## ') ? `${previous}\n\n${lines.slice(firstSection).join('\n')}` : lines.join('\n');
  fs.writeFileSync(RESULTS_FILE, written);
  log(
    `wrote ${path.relative(process.cwd(), RESULTS_FILE)}; longest batch ${ms(longestBatch)}, install hold ${ms(ordersHeldMs)}, worst probe ${ms(worst)}`,
  );
}

await run(main);
