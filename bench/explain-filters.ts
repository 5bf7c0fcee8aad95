// npm run bench:explain: EXPLAIN (ANALYZE, BUFFERS) of every order-list filter
// and of the customer list (its page and its `total`) on PostgreSQL, written
// into bench/RESULTS-explain.md as one section per (checkout, size). Sections
// of other runs stay, so a before run (BENCH_SERVICE_DIR=<a main checkout>)
// and an after run, at 100k and at 1M orders, sit side by side, and the
// summary at the top compares them. The statements are the ones the checkout's
// own query functions send (bench/explain.ts captures them).
//
// Orders are seeded through the operator API up to BENCH_SEED_ORDERS; a larger
// BENCH_ORDERS is reached by copying the seeded orders in SQL (bench only:
// fixtures.ts multiplyOrders), which takes seconds where the seed endpoint
// would take many minutes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { openDb } from '../src/platform/db/open-db.ts';
import type { Db } from '../src/platform/db/db.ts';
import { startServiceProcess } from './service-process.ts';
import {
  addShipments,
  multiplyOrders,
  pickParams,
  provisionAndSeed,
  SEED_ENDPOINT_MAX_ORDERS,
  tableSizeMb,
  withoutOrderIndexes,
} from './fixtures.ts';
import { customerCases, explainCases, explainEach, type ExplainedQuery, type ReadFunctions } from './explain.ts';
import { benchTools, setting } from './bench-tools.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const ORDERS = setting('BENCH_ORDERS', 100_000);
const SEED_ORDERS = Math.min(ORDERS, setting('BENCH_SEED_ORDERS', SEED_ENDPOINT_MAX_ORDERS));
const THIS_DIR = path.resolve(import.meta.dirname, '..');
const SERVICE_DIR = path.resolve(process.env.BENCH_SERVICE_DIR || THIS_DIR);
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-explain.md');
/** A filter's plan that removes this many rows walks rather than finds. */
const WALK_ROWS = 10_000;

const { log, cleanups, createDatabase, run } = benchTools('bench:explain', ADMIN_URL, 'merx_bench_explain');

interface Section {
  key: string;
  title: string;
  header: string[];
  plans: ExplainedQuery[];
}

function revisionOf(dir: string): string {
  try {
    const rev = execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim();
    return `${rev}${dirty ? ' (with uncommitted changes)' : ''}`;
  } catch {
    return 'unknown revision';
  }
}

async function settleAll(db: Db): Promise<void> {
  const { rows } = await db.query<{ t: string }>(
    `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema()
        AND table_name IN ('orders', 'shipments', 'pages', 'products', 'customer_aggregates', 'customer_counts')`,
  );
  for (const { t } of rows) await db.exec(`VACUUM (ANALYZE) ${t}`);
}

async function main(): Promise<void> {
  const loadBefore = os.loadavg()[0];
  const adminToken = `bench-${crypto.randomBytes(16).toString('hex')}`;
  const databaseUrl = await createDatabase();
  const service = await startServiceProcess(databaseUrl, adminToken, { main: path.join(SERVICE_DIR, 'src', 'main.ts'), env: { WORKERS: '0' } });
  cleanups.push({ name: 'stop service', run: () => service.stop() });
  const revision = revisionOf(SERVICE_DIR);
  log(`service from ${SERVICE_DIR} (${revision})`);

  log(`seeding ${SEED_ORDERS.toLocaleString('en-US')} orders through the operator API…`);
  const tenant = await provisionAndSeed(service.url, adminToken, { orders: SEED_ORDERS, products: 200, customers: Math.round(SEED_ORDERS * 0.3) });
  log(`seeded in ${tenant.seedSeconds.toFixed(1)} s`);
  await service.stop();

  const db = await openDb({ databaseUrl, dataDir: '' });
  cleanups.push({ name: 'close pool', run: () => db.close() });
  const factor = Math.ceil(ORDERS / SEED_ORDERS);
  let multiplySeconds = 0;
  let shipments = 0;
  if (factor > 1) {
    const started = performance.now();
    await withoutOrderIndexes(db, log, async () => {
      await multiplyOrders(db, tenant.accountId, factor, log);
      shipments = await addShipments(db, tenant.accountId);
    });
    const { rebuildCustomers } = await import(path.join(SERVICE_DIR, 'src', 'modules', 'customers', 'aggregates.ts'));
    await db.tx((tx) => rebuildCustomers(tx, tenant.accountId));
    multiplySeconds = (performance.now() - started) / 1000;
  } else {
    shipments = await addShipments(db, tenant.accountId);
  }
  await settleAll(db);
  const params = await pickParams(db, tenant.accountId);
  const count = async (text: string) => (await db.query<{ n: number }>(text, [tenant.accountId])).rows[0].n;
  const orders = await count('SELECT count(*)::int AS n FROM orders WHERE account_id = $1');
  const customers = await count('SELECT count(*)::int AS n FROM customer_aggregates WHERE account_id = $1');
  log(`${orders} orders, ${customers} customers, ${shipments} shipments`);

  const read: ReadFunctions = {
    ...(await import(path.join(SERVICE_DIR, 'src', 'modules', 'orders', 'queries.ts'))),
    ...(await import(path.join(SERVICE_DIR, 'src', 'modules', 'customers', 'queries.ts'))),
  };
  const narrowCustomer = (
    await db.query<{ key: string }>('SELECT key FROM customer_aggregates WHERE account_id = $1 ORDER BY key LIMIT 1 OFFSET 1234', [tenant.accountId])
  ).rows[0].key;
  const cases = [
    ...explainCases(tenant.accountId, params, read),
    ...customerCases(tenant.accountId, { q: 'petrova', qNarrow: narrowCustomer, deepOffset: Math.floor(customers * 0.8) }, read),
  ];
  const plans: ExplainedQuery[] = [];
  for (const c of cases) plans.push(...(await explainEach(db, c)));
  for (const p of plans) log(`${p.name}: ${p.executionMs} ms${p.seqScans.length ? `, Seq Scan on ${p.seqScans.join(', ')}` : ''}`);

  const { rows: sizes } = await db.query<{ name: string; mb: number }>(
    `SELECT c.relname AS name, pg_relation_size(c.oid) / 1048576.0 AS mb FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = 'orders'::regclass ORDER BY pg_relation_size(c.oid) DESC`,
  );
  const tableMb = (await db.query<{ mb: number }>("SELECT pg_relation_size('orders') / 1048576.0 AS mb")).rows[0].mb;
  const version = (await db.query<{ v: string }>('SELECT version() AS v')).rows[0].v.split(' on ')[0];
  const { rows: settings } = await db.query<{ s: string }>(
    `SELECT string_agg(name || '=' || setting || coalesce(' (' || unit || ')', ''), ', ' ORDER BY name) AS s FROM pg_settings
      WHERE name IN ('shared_buffers', 'work_mem', 'effective_cache_size', 'random_page_cost', 'jit')`,
  );
  const cpus = os.cpus();
  const label = SERVICE_DIR === THIS_DIR ? 'this checkout' : SERVICE_DIR;
  const size = `${Math.round(orders / 1000).toLocaleString('en-US')}k orders`;
  writeSection({
    key: `${SERVICE_DIR === THIS_DIR ? 'after' : 'before'} ${size}`,
    title: `${SERVICE_DIR === THIS_DIR ? 'After' : 'Before'}: ${size}, ${revision}`,
    header: [
      `- Date: ${new Date().toISOString()}; whole run ${(performance.now() / 1000).toFixed(0)} s`,
      `- Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM; ${os.type()} ${os.release()}; Node ${process.version}; ${version}`,
      `- PostgreSQL settings: ${settings[0].s}`,
      `- Load average (1 min) before / after: ${loadBefore.toFixed(2)} / ${os.loadavg()[0].toFixed(2)} (the machine is shared: execution times move with it, plans do not)`,
      `- Checkout: ${label} (${revision})`,
      `- Data: ${orders.toLocaleString('en-US')} orders (${SEED_ORDERS.toLocaleString('en-US')} through the seed endpoint in ${tenant.seedSeconds.toFixed(1)} s` +
        `${factor > 1 ? `, then ${factor - 1} copies in SQL, their shipments and customers in ${multiplySeconds.toFixed(1)} s` : ''}), ${customers.toLocaleString('en-US')} customers, ` +
        `${shipments.toLocaleString('en-US')} shipments; orders with indexes ${(await tableSizeMb(db, 'orders')).toFixed(0)} MB; VACUUM (ANALYZE) after loading`,
      `- orders: table ${Number(tableMb).toFixed(0)} MB (an "after" table also holds the dead rows of the bench's one UPDATE that sets shipment_status ` +
        `on the orders it gave shipments), indexes ${sizes.map((x) => `${x.name} ${Number(x.mb).toFixed(0)}`).join(', ')} MB`,
      `- Parameters: q=\`${params.q}\` (${params.qMatches.toLocaleString('en-US')} visible orders), product_id=${params.productId}, page_id=${params.pageId}, ` +
        `shipment_status=${params.shipmentStatus}, courier=${params.courier}; customers q=\`petrova\` and one customer key`,
    ],
    plans,
  });
  log(`wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
}

const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 1) : 'n/a');
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const SECTION = /<!-- section (.+?) -->\n([\s\S]*?)<!-- end section -->\n/g;
const DATA = /<!-- data (.*) -->/;

function renderSection(s: Section): string {
  const lines = [
    `<!-- section ${s.key} -->`,
    `## ${s.title}`,
    '',
    ...s.header,
    '',
    '| Case | Plan | Rows | Execution ms | Planning ms | Buffers | Seq Scan on | Rows removed by filter |',
    '|---|---|---:|---:|---:|---:|---|---:|',
  ];
  for (const p of s.plans) {
    const walk = p.rowsRemovedByFilter >= WALK_ROWS ? `**${int(p.rowsRemovedByFilter)}**` : int(p.rowsRemovedByFilter);
    lines.push(
      `| ${p.name} | ${p.genericPlan ? 'generic' : 'per value'} | ${p.rowsReturned} | ${ms(p.executionMs)} | ${ms(p.planningMs)} | ${int(p.buffers)} | ${p.seqScans.length ? `**${p.seqScans.join(', ')}**` : '–'} | ${walk} |`,
    );
  }
  lines.push('', '<details><summary>Plans</summary>', '');
  for (const p of s.plans) lines.push(`### ${p.name}`, '', `\`${p.request}\``, '', '```', p.plan, '```', '');
  lines.push('</details>', '');
  const summary = s.plans.map((p) => ({ name: p.name, ms: p.executionMs, seq: p.seqScans, removed: p.rowsRemovedByFilter, buffers: p.buffers }));
  lines.push(`<!-- data ${JSON.stringify(summary)} -->`, '<!-- end section -->', '');
  return lines.join('\n');
}

/** Replaces this run's section (or adds it) and rebuilds the comparison from every section's data. */
function writeSection(section: Section): void {
  const old = fs.existsSync(RESULTS_FILE) ? fs.readFileSync(RESULTS_FILE, 'utf8') : '';
  const sections = new Map<string, string>();
  for (const m of old.matchAll(SECTION)) sections.set(m[1], m[0]);
  sections.set(section.key, renderSection(section));
  const order = ['before 100k orders', 'after 100k orders', 'before 1,000k orders', 'after 1,000k orders'];
  const keys = [...sections.keys()].sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99));
  const data = keys.map((k) => ({
    key: k,
    rows: JSON.parse(DATA.exec(sections.get(k)!)![1]) as Array<{ name: string; ms: number; seq: string[]; removed: number; buffers: number }>,
  }));
  const names = [...new Set(data.flatMap((d) => d.rows.map((r) => r.name)))];
  const cell = (r?: { ms: number; seq: string[]; removed: number; buffers: number }) =>
    !r
      ? ''
      : `${ms(r.ms)} ms, ${int(r.buffers)} buf${r.seq.length ? `, **Seq Scan on ${r.seq.join(', ')}**` : ''}${r.removed >= WALK_ROWS ? `, **${int(r.removed)} removed**` : ''}`;
  const lines = [
    '# EXPLAIN of every list filter, before and after',
    '',
    'Written by `npm run bench:explain` (bench/explain-filters.ts); do not edit by hand, rerun instead. Each section is one run:',
    '`BENCH_SERVICE_DIR=<main checkout> npm run bench:explain` writes a "before" section, a run from this checkout an "after" one,',
    '`BENCH_ORDERS=1000000` the 1M-order ones. Execution times come from `EXPLAIN (ANALYZE, BUFFERS)` after one warming',
    'execution, on a shared 2-core machine: compare plans and buffers first, milliseconds second. A Seq Scan on pages (a',
    'handful of rows), or on customer_counts (at most 16 rows an account), is the right plan; one on orders or customer_aggregates is not. "removed" in bold: the plan walked',
    `${int(WALK_ROWS)} or more rows it did not return (an index scan in name only). "Plan": generic for a statement the service`,
    'prepares, which runs on its generic plan (src/platform/db/db.ts preparedPool), explained so (PREPARE, EXPLAIN EXECUTE);',
    '"per value" for one planned for its values on each request.',
    '',
    '## Summary',
    '',
    `| Case | ${keys.join(' | ')} |`,
    `|---|${keys.map(() => '---').join('|')}|`,
    ...names.map((n) => `| ${n} | ${data.map((d) => cell(d.rows.find((r) => r.name === n))).join(' | ')} |`),
    '',
    ...keys.map((k) => sections.get(k)!),
  ];
  fs.writeFileSync(RESULTS_FILE, lines.join('\n'));
}

await run(main);
