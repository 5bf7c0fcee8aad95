// npm run bench:read-path (issues 12 and 29): on PostgreSQL with 100k orders
// and 50 connections, the API side by side with pgbench, alternating, 3
// rounds, medians. The yardstick is fixed SQL written in bench
// (read-path-yardsticks.ts: the minimal SQL returning what a page, or an
// order, shows as plain columns); pgbench of the service's own SQL, recorded
// from its query functions, is measured against it too. Measures the order
// list's first page (at 50 and at 8 connections, for p50/p99 beside pgbench's),
// the order by id, MCP list_orders against the same REST page, page 200 of a
// cursor walk against page 1, PATCH of an order's status (and the first page)
// on this checkout against BENCH_BEFORE_DIR's (read-path-patch.ts), and above 100k orders the
// big account against one of 100k. Appends the figures, under BENCH_LABEL, to
// bench/RESULTS-read-path.md.
//
// BENCH_SERVICE_DIR runs another checkout's service (and records that
// checkout's SQL for pgbench): measure main first, then this branch.
// BENCH_BEFORE_DIR: the checkout the PATCH pair compares against (unset: no
// PATCH pair).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { loadCursorSeal } from '../src/platform/contract/cursor-seal.ts';
import { openDb } from '../src/platform/db/open-db.ts';
import type { Db, Sql } from '../src/platform/db/db.ts';
import { encodeCursor } from '../src/platform/contract/paging.ts';
import { startServiceProcess } from './service-process.ts';
import {
  addBenchKeys,
  addShipments,
  multiplyOrders,
  provisionAndSeed,
  SEED_ENDPOINT_MAX_ORDERS,
  settle,
  withDocumentsWrittenOnce,
  withoutOrderIndexes,
} from './fixtures.ts';
import { roundRobin } from './load.ts';
import { benchTools, setting } from './bench-tools.ts';
import { recordSql, runPgbench, type Statement } from './pgbench.ts';
import { httpClient, MCP_HEADERS, runHttp, type HttpLoad, type Side } from './read-path-http.ts';
import { minimalById, minimalList } from './read-path-yardsticks.ts';
import { startPatchSide } from './read-path-patch.ts';
import { appendSection, latencyTable, pairRow, RESULTS_FILE } from './read-path-report.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const THIS_CHECKOUT = path.resolve(import.meta.dirname, '..');
const SERVICE_DIR = path.resolve(process.env.BENCH_SERVICE_DIR || THIS_CHECKOUT);
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR ? path.resolve(process.env.BENCH_BEFORE_DIR) : null;
const LABEL = process.env.BENCH_LABEL || 'after';
const ORDERS = setting('BENCH_ORDERS', 100_000);
const CONNECTIONS = setting('BENCH_CONNECTIONS', 50);
/** The second client count of the latency table (issue 29: p50 and p99 at 8 and at 50 connections). */
const FEW_CONNECTIONS = setting('BENCH_FEW_CONNECTIONS', 8);
const SECONDS = setting('BENCH_SECONDS', 8);
const WARMUP = setting('BENCH_WARMUP_SECONDS', 3);
const ROUNDS = setting('BENCH_ROUNDS', 3);
const KEYS = setting('BENCH_KEYS', 200);
const PAGE = 50;
const DEEP_PAGE = 200;
/** pgbench client counts for the list's latency floor (see the end of main). */
const FLOOR_CLIENTS = [2, 4, 8, 16, 50];
// The operator's knob (docs/operations.md): the bench measures the read path, not SPEC's per-key limits.
const SERVICE_ENV = { RATE_LIMIT_REST_PER_MINUTE: '100000000', RATE_LIMIT_MCP_PER_MINUTE: '100000000', WORKERS: '0' };

const { log, cleanups, createDatabase, run } = benchTools('read-path', ADMIN_URL, 'merx_readpath');

/** The deep walk's cursor: where page `page` starts, as the API would have handed it out. */
async function cursorBefore(db: Db, accountId: string, page: number): Promise<string> {
  const { rows } = await db.query<{ created_at: string; id: string }>(
    `SELECT created_at, id FROM orders WHERE account_id = $1 AND status <> 'archived' ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
    [accountId, (page - 1) * PAGE - 1],
  );
  return encodeCursor((await loadCursorSeal(db)).scopedTo(accountId), { createdAt: rows[0].created_at, id: rows[0].id });
}

type Runner = (seconds: number) => Promise<Side>;

interface Pair {
  name: string;
  target: string;
  a: { label: string; run: Runner };
  b: { label: string; run: Runner };
}

const size = (n: number) => `${n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`}`;
const place = (dir: string) => (dir === THIS_CHECKOUT ? 'this checkout' : dir);

async function main(): Promise<void> {
  const started = new Date();
  const loadBefore = os.loadavg()[0];
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const databaseUrl = await createDatabase();
  const service = await startServiceProcess(databaseUrl, adminToken, { main: path.join(SERVICE_DIR, 'src', 'main.ts'), env: SERVICE_ENV });
  cleanups.push({ name: 'stop service', run: () => service.stop() });
  log(`${LABEL}: service from ${SERVICE_DIR} (pid ${service.pid})`);
  const seeded = Math.min(ORDERS, SEED_ENDPOINT_MAX_ORDERS);
  // The PATCH pair's two services, each on its own fresh database seeded as the read account is, so its writes stay
  // out of the database the read pairs measure. Seeded while the read account is: on a busy shared machine a seed of
  // 100k orders has taken minutes.
  const patchSides = BEFORE_DIR
    ? Promise.all([
        startPatchSide({ log, cleanups, createDatabase }, 'after', SERVICE_DIR, seeded, KEYS, CONNECTIONS, SERVICE_ENV),
        startPatchSide({ log, cleanups, createDatabase }, 'before', BEFORE_DIR, seeded, KEYS, CONNECTIONS, SERVICE_ENV),
      ])
    : null;
  if (patchSides) {
    patchSides.catch(() => {}); // awaited below; a failure before that must not end the process ahead of its cleanup
    // On a failure while they start, cleanup waits for them; what they push meanwhile is cleaned up after this step.
    cleanups.push({
      name: 'wait for the PATCH services',
      run: () =>
        patchSides.then(
          () => {},
          () => {},
        ),
    });
  }
  log(`seeding ${ORDERS.toLocaleString('en-US')} orders…`);
  const seedSize = { orders: seeded, products: 200, customers: Math.max(100, seeded / 4) };
  const tenant = await provisionAndSeed(service.url, adminToken, seedSize);
  // Two connections: the bench's own queries run one at a time, and the server's connections are shared.
  const db = await openDb({ databaseUrl, dataDir: '', poolMax: 2 });
  cleanups.push({ name: 'close pool', run: () => db.close() });
  const keys = roundRobin([tenant.key, ...(await addBenchKeys(db, tenant.accountId, KEYS - 1))]);
  const factor = Math.ceil(ORDERS / seeded);
  // Above 100k orders (issue 12: "1M orders within 1.2x of 100k, same queries"), a second account of 100k orders in
  // the same database, so the two sizes are measured side by side in one run, alternating, as every other ratio here.
  const smaller = factor > 1 ? await provisionAndSeed(service.url, adminToken, seedSize) : null;
  if (factor > 1) {
    // The same queries over 1M orders: the seeded ones copied in SQL, bench only; the newest stay the seeded ones.
    await withoutOrderIndexes(db, log, () =>
      withDocumentsWrittenOnce(db, tenant.accountId, log, async (tx) => {
        await multiplyOrders(tx, tenant.accountId, factor, log);
        await addShipments(tx, tenant.accountId);
      }),
    );
  } else {
    await addShipments(db, tenant.accountId);
  }
  if (smaller) await addShipments(db, smaller.accountId);
  await settle(db);
  const { rows: total } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE account_id = $1', [tenant.accountId]);
  log(`${total[0].n.toLocaleString('en-US')} orders in the account`);
  const { rows: idRows } = await db.query<{ id: string }>('SELECT id FROM orders WHERE account_id = $1 ORDER BY md5(id::text) LIMIT 50', [
    tenant.accountId,
  ]);
  const ids = idRows.map((r) => r.id);
  const { rows: visible } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND status <> 'archived'`, [
    tenant.accountId,
  ]);
  // Page 200 at 100k orders; the last full page on a small smoke-test seed.
  const deepPage = Math.min(DEEP_PAGE, Math.floor(visible[0].n / PAGE));
  const deepCursor = await cursorBefore(db, tenant.accountId, deepPage);
  const cursors = await loadCursorSeal(db);

  // The yardsticks, fixed text (read-path-yardsticks.ts), and the SQL the service under test sends, recorded from its
  // own query functions.
  const minimalListSql = minimalList(tenant.accountId);
  const minimalGetSql = minimalById(tenant.accountId, ids);
  const queries = await import(path.join(SERVICE_DIR, 'src', 'modules', 'orders', 'queries.ts'));
  const listSql = await recordSql((sql: Sql) => queries.listOrders(sql, tenant.accountId, { limit: PAGE }, cursors));
  const getSql: Statement[] = [];
  for (const id of ids) getSql.push(await recordSql((sql: Sql) => queries.getOrder(sql, tenant.accountId, id)));

  /** A load on the API, with the big account's keys unless others are given. */
  const api =
    (load: HttpLoad, keysOf = keys, connections = CONNECTIONS): Runner =>
    (seconds) =>
      runHttp(service, load, keysOf, seconds, connections);
  // The service runs its prepared statements on their generic plans (db.ts preparedPool); so does pgbench.
  const pgbench =
    (statements: Statement[], clients = CONNECTIONS): Runner =>
    async (seconds) => {
      for (let attempt = 1; ; attempt++) {
        try {
          const r = await runPgbench(databaseUrl, statements, clients, seconds, { planCacheMode: 'force_generic_plan' });
          return { reqPerSec: r.tps, p50Ms: r.p50Ms, p99Ms: r.p99Ms, answered: r.transactions, clientCpuMs: r.clientCpuMs };
        } catch (err) {
          // The PostgreSQL server is shared (max_connections 100 here): other work may hold the connections pgbench needs.
          if (attempt >= 5 || !String(err).includes('could not create connection')) throw err;
          log(`pgbench could not open its ${clients} connections (attempt ${attempt}); again in 5 s`);
          await new Promise((resolve) => setTimeout(resolve, 5000));
        }
      }
    };
  const nextId = roundRobin(ids);
  const listPath = `/api/v1/orders?limit=${PAGE}`;
  const mcpBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_orders', arguments: { limit: PAGE } } });
  const restList = api({ method: 'GET', next: () => ({ path: listPath }) });
  const orderById = api({ method: 'GET', next: () => ({ path: `/api/v1/orders/${nextId()}` }) });
  const listOnMinimal = { name: `GET /api/v1/orders?limit=50 vs minimal SQL, ${CONNECTIONS} connections`, target: 'API >= 50% of pgbench' };
  const listOnMinimalFew = { name: `GET /api/v1/orders?limit=50 vs minimal SQL, ${FEW_CONNECTIONS} connections`, target: 'latency table below' };
  const pairs: Pair[] = [
    { ...listOnMinimal, a: { label: 'API', run: restList }, b: { label: 'pgbench minimal', run: pgbench([minimalListSql]) } },
    {
      name: 'GET /api/v1/orders/{id} (50 ids) vs minimal SQL by id',
      target: 'API >= 30% of pgbench',
      a: { label: 'API', run: orderById },
      b: { label: 'pgbench minimal', run: pgbench(minimalGetSql) },
    },
    {
      name: "pgbench: the service's list SQL vs minimal SQL",
      target: ">= 80% (the database's cost of a page)",
      a: { label: 'service SQL', run: pgbench([listSql]) },
      b: { label: 'minimal', run: pgbench([minimalListSql]) },
    },
    {
      name: "pgbench: the service's order-by-id SQL vs minimal SQL by id",
      target: "the database's cost of an order",
      a: { label: 'service SQL', run: pgbench(getSql) },
      b: { label: 'minimal', run: pgbench(minimalGetSql) },
    },
    {
      name: 'MCP tools/call list_orders {limit: 50}',
      target: 'MCP >= 90% of REST',
      a: {
        label: 'MCP',
        run: api({
          method: 'POST',
          headers: MCP_HEADERS,
          next: () => ({ path: '/api/mcp', body: mcpBody }),
        }),
      },
      b: { label: 'REST', run: restList },
    },
    {
      ...listOnMinimalFew,
      a: { label: 'API', run: api({ method: 'GET', next: () => ({ path: listPath }) }, keys, FEW_CONNECTIONS) },
      b: { label: 'pgbench minimal', run: pgbench([minimalListSql], FEW_CONNECTIONS) },
    },
    {
      name: `page ${deepPage} of a cursor walk (limit 50)`,
      target: 'within 1.2x of the first page',
      a: { label: `page ${deepPage}`, run: api({ method: 'GET', next: () => ({ path: `${listPath}&cursor=${deepCursor}` }) }) },
      b: { label: 'page 1', run: restList },
    },
  ];

  // The floor under MCP vs REST: the two answers' bytes as the service sent them, from a server that does nothing else.
  const answersDir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-answers-'));
  cleanups.push({ name: 'remove the fixed answers', run: async () => fs.rmSync(answersDir, { recursive: true, force: true }) });
  const answerBytes = async (init: Omit<RequestInit, 'headers'> & { headers?: Record<string, string> }) => {
    const res = await fetch(`${service.url}${init.method === 'POST' ? '/api/mcp' : listPath}`, {
      ...init,
      headers: { ...init.headers, authorization: `Bearer ${keys()}` },
    });
    if (!res.ok) throw new Error(`fixed answer: ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  };
  const restAnswer = await answerBytes({ method: 'GET' });
  const mcpAnswer = await answerBytes({ method: 'POST', headers: MCP_HEADERS, body: mcpBody });
  fs.writeFileSync(path.join(answersDir, 'rest.json'), restAnswer);
  fs.writeFileSync(path.join(answersDir, 'mcp.json'), mcpAnswer);
  const fixed = await startServiceProcess(databaseUrl, adminToken, {
    main: path.join(import.meta.dirname, 'fixed-answer-server.ts'),
    env: { FIXED_GET_BODY: path.join(answersDir, 'rest.json'), FIXED_POST_BODY: path.join(answersDir, 'mcp.json') },
  });
  cleanups.push({ name: 'stop the fixed-answer server', run: () => fixed.stop() });
  const onFixed =
    (load: HttpLoad): Runner =>
    (seconds) =>
      runHttp(fixed, load, keys, seconds, CONNECTIONS);
  pairs.push({
    name: `fixed bytes, no work: the MCP answer (${(mcpAnswer.length / 1024).toFixed(0)} kB) vs the REST page (${(restAnswer.length / 1024).toFixed(0)} kB)`,
    target: 'the floor under MCP vs REST on this machine',
    a: { label: 'MCP answer', run: onFixed({ method: 'POST', headers: MCP_HEADERS, next: () => ({ path: '/api/mcp', body: mcpBody }) }) },
    b: { label: 'REST page', run: onFixed({ method: 'GET', next: () => ({ path: listPath }) }) },
  });

  /** Every service the pairs load: a round ends early if one of them died. */
  const services = [service, fixed];
  if (patchSides) {
    const [after, before] = await patchSides;
    services.push(after.service, before.service);
    pairs.push(
      {
        name: 'PATCH /api/v1/orders/{id} {status} (confirmed <-> processing), after vs before',
        target: 'after >= 90% of before',
        a: { label: 'after', run: after.run },
        b: { label: 'before', run: before.run },
      },
      {
        name: "GET /api/v1/orders?limit=50 on the PATCH pair's services, after vs before",
        target: 'what the change costs a read',
        a: { label: 'after', run: after.list },
        b: { label: 'before', run: before.list },
      },
    );
  } else {
    log('BENCH_BEFORE_DIR is unset: no PATCH pair (after vs before) in this run');
  }

  if (smaller) {
    const smallerKeys = roundRobin([smaller.key, ...(await addBenchKeys(db, smaller.accountId, KEYS - 1))]);
    const { rows: smallerIdRows } = await db.query<{ id: string }>('SELECT id FROM orders WHERE account_id = $1 ORDER BY md5(id::text) LIMIT 50', [
      smaller.accountId,
    ]);
    const nextSmallerId = roundRobin(smallerIdRows.map((r) => r.id));
    pairs.push(
      {
        name: `GET /api/v1/orders?limit=50, account of ${size(total[0].n)} vs account of ${size(seeded)}`,
        target: 'within 1.2x of 100k',
        a: { label: size(total[0].n), run: restList },
        b: { label: size(seeded), run: api({ method: 'GET', next: () => ({ path: listPath }) }, smallerKeys) },
      },
      {
        name: `GET /api/v1/orders/{id}, account of ${size(total[0].n)} vs account of ${size(seeded)}`,
        target: 'within 1.2x of 100k',
        a: { label: size(total[0].n), run: orderById },
        b: { label: size(seeded), run: api({ method: 'GET', next: () => ({ path: `/api/v1/orders/${nextSmallerId()}` }) }, smallerKeys) },
      },
    );
  }

  for (const pair of pairs) {
    await pair.a.run(WARMUP);
    await pair.b.run(WARMUP);
  }
  const measured = pairs.map(() => ({ a: [] as Side[], b: [] as Side[] }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, pair] of pairs.entries()) {
      // Alternate which side goes first, so drift on the machine weighs on both.
      const first = round % 2 === 0 ? 'a' : 'b';
      const second = first === 'a' ? 'b' : 'a';
      measured[i][first].push(await pair[first].run(SECONDS));
      measured[i][second].push(await pair[second].run(SECONDS));
      const a = measured[i].a.at(-1)!;
      const b = measured[i].b.at(-1)!;
      log(
        `round ${round + 1} ${pair.name}: ${pair.a.label} ${a.reqPerSec.toFixed(0)}/s p99 ${a.p99Ms.toFixed(1)} | ${pair.b.label} ${b.reqPerSec.toFixed(0)}/s p99 ${b.p99Ms.toFixed(1)} | ${((a.reqPerSec / b.reqPerSec) * 100).toFixed(0)}%`,
      );
      const death = services.map((s) => s.death()).find(Boolean);
      if (death) throw new Error(death);
    }
  }

  // The floor under any latency target: in a closed loop of 50 connections the mean latency is 50 / throughput, and no
  // server of this page answers faster than PostgreSQL alone returns its data at the concurrency that suits it best.
  const floor: Array<{ clients: number; side: Side }> = [];
  for (const clients of FLOOR_CLIENTS) {
    const side = await pgbench([minimalListSql], clients)(SECONDS);
    floor.push({ clients, side });
    log(`pgbench of the minimal list SQL at ${clients} clients: ${side.reqPerSec.toFixed(0)}/s p99 ${side.p99Ms.toFixed(1)}`);
  }
  const best = floor.reduce((a, b) => (b.side.reqPerSec > a.side.reqPerSec ? b : a));

  const cpus = os.cpus();
  const version = (await db.query<{ v: string }>('SELECT version() AS v')).rows[0].v.split(' on ')[0];
  const rows = pairs.map((pair, i) =>
    pairRow(pair.name, pair.target, { label: pair.a.label, sides: measured[i].a }, { label: pair.b.label, sides: measured[i].b }),
  );
  const sidesOf = (name: string) => measured[pairs.findIndex((p) => p.name === name)];
  const revision = process.env.BENCH_REVISION ? ` (${process.env.BENCH_REVISION})` : '';
  const section = [
    `## ${LABEL}: ${started.toISOString()}`,
    '',
    `- Yardstick: minimal SQL (bench/read-path-yardsticks.ts). Service: ${place(SERVICE_DIR)}${revision}; "service SQL" is recorded from that checkout's listOrders/getOrder.`,
    BEFORE_DIR
      ? `- PATCH: after = ${place(SERVICE_DIR)}, before = ${place(BEFORE_DIR)}${BEFORE_DIR === SERVICE_DIR ? ' (the same checkout: a null comparison)' : ''}; each its own service on a fresh database of ${seeded.toLocaleString('en-US')} orders seeded the same way.`
      : '- PATCH: not measured (BENCH_BEFORE_DIR unset).',
    `- Machine: ${cpus.length} × ${cpus[0]?.model.trim()}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB; ${version}; Node ${process.version}. Load average (1 min) before: ${loadBefore.toFixed(2)}, after: ${os.loadavg()[0].toFixed(2)}.`,
    `- ${ORDERS.toLocaleString('en-US')} orders${ORDERS > SEED_ENDPOINT_MAX_ORDERS ? ` (${SEED_ENDPOINT_MAX_ORDERS.toLocaleString('en-US')} through the seed endpoint, the rest copies of them made in SQL)` : ''}; ${CONNECTIONS} connections on each side unless the row says otherwise (${httpClient()} -t 2 for the API's GETs and MCP calls, autocannon for PATCH; pgbench -M prepared -c ${CONNECTIONS} -j 2); ${ROUNDS} rounds of ${SECONDS} s per side, alternating; medians of the rounds (per-round ratios in brackets). Keys rotate over ${KEYS}; rate limits raised.`,
    '- pgbench: plan_cache_mode=force_generic_plan for every statement, as the service runs its prepared statements.',
    ...(smaller
      ? [
          `- A second account of ${seeded.toLocaleString('en-US')} orders (the seed endpoint, same sizes and shipments) in the same database and service, for the rows comparing the two accounts with the same requests.`,
        ]
      : []),
    '',
    '| measure | side A | side B | A / B | target |',
    '|---|---|---|---:|---|',
    ...rows,
    '',
    `Latency of the list page, API beside pgbench of the minimal SQL at the same client count (medians of the rounds; no p99 target: at 50 connections the machine bounds it, see the floor):`,
    '',
    ...latencyTable([
      { connections: FEW_CONNECTIONS, api: sidesOf(listOnMinimalFew.name).a, pgbench: sidesOf(listOnMinimalFew.name).b },
      { connections: CONNECTIONS, api: sidesOf(listOnMinimal.name).a, pgbench: sidesOf(listOnMinimal.name).b },
    ]),
    '',
    `The list's latency floor: pgbench of the minimal list SQL alone, ${SECONDS} s at each client count: ${floor.map((f) => `${f.clients} clients ${f.side.reqPerSec.toFixed(0)}/s (p99 ${f.side.p99Ms.toFixed(1)} ms)`).join(', ')}.`,
    `At most ${best.side.reqPerSec.toFixed(0)} pages/s (${best.clients} clients), so with ${CONNECTIONS} connections in a closed loop any server of this page has a mean latency of at least ${CONNECTIONS} / ${best.side.reqPerSec.toFixed(0)} = ${((CONNECTIONS / best.side.reqPerSec) * 1000).toFixed(1)} ms on this machine now, and a p99 above that.`,
    '',
  ].join('\n');
  appendSection(section);
  log(`wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
}

await run(main);
