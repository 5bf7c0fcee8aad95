// npm run bench:events — the events feed (EXTENSIONS 1) on PostgreSQL:
// GET /api/v1/events over HTTP (service in a child process, autocannon) next
// to the same readFeed() code on a pg pool, at the same concurrency, over
// 100k events written in 1,000 transactions: a page from a cursor in the
// middle of the feed, the first page of an order_id filter, and the poll a
// consumer makes most (a cursor at the end: nothing newer). The ratio is
// what HTTP, the key check and serialisation add to the feed's own SQL
// (the horizon, the keyset scan). Writes bench/RESULTS-events.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { openDb } from '../src/platform/db/open-db.ts';
import type { Db } from '../src/platform/db/db.ts';
import { SUBSCRIBABLE_EVENTS } from '../src/platform/db/outbox.ts';
import { encodeFeedCursor, readFeed } from '../src/modules/events/feed.ts';
import { loadCursorSeal } from '../src/platform/contract/cursor-seal.ts';
import { startServiceProcess } from './service-process.ts';
import { addBenchKeys } from './fixtures.ts';
import { compareApiWithRaw, roundRobin, type LoadShape, type LoadStats } from './load.ts';
import { CpuMeter, waitForQuiet } from './cpu.ts';
import { benchTools, setting } from './bench-tools.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const EVENTS = setting('BENCH_EVENTS', 100_000);
const TRANSACTIONS = 1000;
const SHAPE: LoadShape = {
  connections: setting('BENCH_CONNECTIONS', 20),
  warmupSeconds: setting('BENCH_WARMUP_SECONDS', 2),
  seconds: setting('BENCH_SECONDS', 10),
  rounds: Math.max(1, setting('BENCH_ROUNDS', 5)),
};
const QUIET_BUDGET = { seconds: setting('BENCH_QUIET_WAIT_SECONDS', 60) };
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-events.md');

const { log, cleanups, createDatabase, run } = benchTools('bench:events', ADMIN_URL, process.env.BENCH_DB_PREFIX || 'merx_bench_events');

async function operatorCall(base: string, token: string, method: string, route: string, body?: unknown) {
  const res = await fetch(`${base}/admin/api${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`operator ${method} ${route} -> ${res.status} ${await res.text()}`);
  return res.json();
}

/** Order events of a realistic size (about 1.2 KB of data each), five per order, in TRANSACTIONS transactions. */
async function writeEvents(db: Db, accountId: string): Promise<string[]> {
  const perTransaction = Math.ceil(EVENTS / TRANSACTIONS);
  const orders: string[] = [];
  for (let t = 0; t < TRANSACTIONS; t++) {
    const { rows } = await db.query<{ order_id: string }>(
      `INSERT INTO events (id, account_id, event, api_version, data)
       SELECT gen_random_uuid(), $1, 'order.updated', '2026-09-01',
              json_build_object('order', json_build_object('id', o.id, 'status', 'processing', 'notes', repeat('n', 1000)), 'changed', json_build_array('admin_notes'), 'source', 'api')
         FROM (SELECT gen_random_uuid() AS id FROM generate_series(1, $2 / 5)) o, generate_series(1, 5)
       RETURNING order_id`,
      [accountId, perTransaction],
    );
    orders.push(rows[0].order_id);
  }
  await db.query('VACUUM (ANALYZE) events');
  return orders;
}

async function main(): Promise<void> {
  const started = performance.now();
  const loadBefore = os.loadavg();
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const databaseUrl = await createDatabase();
  const service = await startServiceProcess(databaseUrl, adminToken);
  cleanups.push({ name: 'stop service', run: () => service.stop() });
  const account = (await operatorCall(service.url, adminToken, 'POST', '/accounts', { name: 'Bench', email: 'bench@example.com' })).data;
  const db = await openDb({ databaseUrl, dataDir: '' });
  cleanups.push({ name: 'close raw pool', run: () => db.close() });
  const keys = await addBenchKeys(db, account.id, 1000);
  log(`writing ${EVENTS.toLocaleString('en-US')} events in ${TRANSACTIONS} transactions…`);
  const orderIds = await writeEvents(db, account.id);

  const positions = await db.query<{ xid: string; seq: number }>(
    `SELECT xid::text AS xid, seq FROM events WHERE account_id = $1 ORDER BY xid, seq OFFSET $2 LIMIT 1`,
    [account.id, Math.floor(EVENTS / 2)],
  );
  const end = await readFeedToEnd(db, account.id);
  const cursors = await loadCursorSeal(db);
  const middle = encodeFeedCursor(cursors.scopedTo(account.id), positions.rows[0]);
  const types = [...SUBSCRIBABLE_EVENTS];
  const scenarios = [
    {
      name: 'a page of 50 from the middle of the feed',
      path: `/api/v1/events?cursor=${middle}`,
      raw: () => readFeed(db, account.id, cursors, { limit: 50, cursor: middle, types }),
    },
    {
      name: 'poll at the end: nothing newer',
      path: `/api/v1/events?cursor=${end}`,
      raw: () => readFeed(db, account.id, cursors, { limit: 50, cursor: end, types }),
    },
    {
      name: 'order_id filter, first page',
      path: `/api/v1/events?order_id=${orderIds[500]}`,
      raw: () => readFeed(db, account.id, cursors, { limit: 50, types, order_id: orderIds[500] }),
    },
  ];
  const meter = new CpuMeter(async () => {
    const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
    return [process.pid, service.pid, ...rows.map((r) => r.pid)];
  });
  const nextKey = roundRobin(keys);
  const rows: string[] = [];
  for (const scenario of scenarios) {
    const busy = await waitForQuiet(QUIET_BUDGET);
    const { api, raw } = await compareApiWithRaw({ baseUrl: service.url, nextPath: () => scenario.path, nextKey }, scenario.raw, SHAPE, meter);
    if (api.failures || raw.failures) throw new Error(`${scenario.name}: ${api.failureDetail} ${raw.failureDetail}`);
    const line = row(scenario.name, api, raw, busy);
    log(line);
    rows.push(line);
  }
  const plan = await db.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN SELECT e.seq FROM events e WHERE e.account_id = $1 AND e.xid < pg_snapshot_xmax(pg_current_snapshot()) AND (e.xid, e.seq) > ($2::xid8, $3::bigint) ORDER BY e.xid, e.seq LIMIT 51`,
    [account.id, positions.rows[0].xid, positions.rows[0].seq],
  );
  const report = [
    '# Events feed benchmark',
    '',
    'Generated by `npm run bench:events` (do not edit by hand; rerun instead).',
    '',
    `- Date: ${new Date().toISOString()} (run took ${Math.round((performance.now() - started) / 1000)} s)`,
    `- Machine: ${os.type()} ${os.release()} ${os.arch()}, ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    `- ${EVENTS.toLocaleString('en-US')} events of ~1.2 KB in ${TRANSACTIONS} transactions, one account; ${SHAPE.connections} connections, ${SHAPE.seconds} s per side in ${SHAPE.rounds} alternating rounds, ${keys.length} keys`,
    '- API: `GET /api/v1/events` on the service (child process); raw: the same `readFeed()` on a pg pool in this process.',
    '',
    '| scenario | API req/s | API p50 / p99 ms | raw req/s | raw p50 / p99 ms | API / raw | other CPU (cores) |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Plan of the page query (keyset scan on `events_feed`, stopped by the LIMIT):',
    '',
    '```',
    ...plan.rows.map((r) => r['QUERY PLAN']),
    '```',
    '',
  ].join('\n');
  fs.writeFileSync(RESULTS_FILE, report);
  log(`wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
}

async function readFeedToEnd(db: Db, accountId: string): Promise<string> {
  let cursor: string | undefined;
  for (;;) {
    const page = await readFeed(db, accountId, await loadCursorSeal(db), { limit: 200, cursor, types: [...SUBSCRIBABLE_EVENTS] });
    cursor = page.next_cursor ?? undefined;
    if (!page.has_more) return cursor!;
  }
}

function row(name: string, api: LoadStats, raw: LoadStats, busyBefore: number | null): string {
  const other = [api.cpu?.otherCores, raw.cpu?.otherCores, busyBefore ?? undefined].map((v) => (v === undefined ? '?' : v.toFixed(2))).join(' / ');
  return `| ${name} | ${api.reqPerSec.toFixed(0)} | ${api.p50Ms.toFixed(1)} / ${api.p99Ms.toFixed(1)} | ${raw.reqPerSec.toFixed(0)} | ${raw.p50Ms.toFixed(1)} / ${raw.p99Ms.toFixed(1)} | **${(api.reqPerSec / raw.reqPerSec).toFixed(2)}** | ${other} |`;
}

await run(main);
