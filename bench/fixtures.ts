// The data the benchmark runs on: an account provisioned and seeded through
// the operator API, plus what the seed does not make (shipments, a pool of
// API keys), and realistic filter values picked from the data itself.
import crypto from 'node:crypto';
import { Agent, fetch } from 'undici';
import type { Db, Sql } from '../src/platform/db/db.ts';
import { generateApiKey } from '../src/platform/edge/auth.ts';
import { PRESETS } from '../src/platform/contract/scopes.ts';
import { encodeCursor } from '../src/platform/contract/paging.ts';
import { loadCursorSeal, type CursorSeal } from '../src/platform/contract/cursor-seal.ts';
import { SEARCH_TEXT } from '../src/modules/orders/queries.ts';

export interface Tenant {
  accountId: string;
  /** The key issued through the operator API, then the bench's extra keys. */
  keys: string[];
}

export interface SeedReport {
  orders: number;
  products: number;
  customers: number;
  seedSeconds: number;
  shipments: number;
  ordersTableMb: number;
}

/** Values every scenario and EXPLAIN draws from, chosen from the seeded rows. */
export interface BenchParams {
  status: string;
  payment: string;
  q: string;
  qMatches: number;
  qNarrow: string;
  since: string;
  sinceMatches: number;
  /** The database's cursor key, as the service under test seals cursors with it. */
  cursors: CursorSeal;
  deepCursor: string;
  deepCursorPage: number;
  from: string;
  to: string;
  pageId: string;
  productId: string;
  courier: string;
  shipmentStatus: string;
  orderIds: string[];
}

/** No time limit on an answer: seeding 100k orders on a busy shared machine once took over fetch's default 300 s. */
const PATIENT = new Agent({ headersTimeout: 0, bodyTimeout: 0 });

async function operatorCall(baseUrl: string, token: string, method: string, path: string, body: unknown) {
  const res = await fetch(`${baseUrl}/admin/api${path}`, {
    dispatcher: PATIENT,
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`operator ${method} ${path} -> ${res.status} ${text}`);
  return JSON.parse(text);
}

/** The most orders the seed endpoint makes at once; more are copies of those, made in SQL (multiplyOrders). */
export const SEED_ENDPOINT_MAX_ORDERS = 100_000;

export async function provisionAndSeed(baseUrl: string, adminToken: string, size: { orders: number; products: number; customers: number }) {
  const account = await operatorCall(baseUrl, adminToken, 'POST', '/accounts', { name: 'Bench Shop', email: 'bench@example.com', plan: 'pro' });
  const accountId: string = account.data.id;
  const issued = await operatorCall(baseUrl, adminToken, 'POST', `/accounts/${accountId}/keys`, { name: 'bench', preset: 'fulfilment' });
  const started = performance.now();
  await operatorCall(baseUrl, adminToken, 'POST', `/accounts/${accountId}/seed`, { ...size, seed: 7 });
  const seedSeconds = (performance.now() - started) / 1000;
  return { accountId, key: issued.key as string, seedSeconds };
}

/**
 * SPEC Limits: 300 requests per minute per key, and at most 10 active keys per
 * account through the API. A load test far above 5 req/s therefore spreads its
 * requests over many keys, as many clients would: the bench writes extra key
 * rows straight into its own database (same hashing as issueKey) and rotates
 * them, so every request still pays the real key lookup and rate-limit check.
 */
export async function addBenchKeys(db: Db, accountId: string, count: number): Promise<string[]> {
  const keys = Array.from({ length: count }, () => generateApiKey());
  await db.query(
    `INSERT INTO api_keys (id, account_id, name, prefix, key_hash, scopes)
     SELECT k.id, $1, 'bench-' || k.n, k.prefix, k.hash, $5::text[]
       FROM unnest($2::uuid[], $3::text[], $4::text[]) WITH ORDINALITY AS k(id, prefix, hash, n)`,
    [accountId, keys.map(() => crypto.randomUUID()), keys.map((k) => k.prefix), keys.map((k) => k.hash), PRESETS.fulfilment],
  );
  return keys.map((k) => k.key);
}

/**
 * The seed makes no shipments; without them the LATERAL "latest shipment" join
 * and the shipment_status filter would run against an empty table. Every
 * order with a tracking number gets a waybill matching its status, and one in
 * twenty also gets an older, cancelled one (so "latest" has a choice to make).
 */
export async function addShipments(db: Sql, accountId: string): Promise<number> {
  await db.query(
    `INSERT INTO shipments (id, account_id, order_id, courier_slug, tracking_number, status, last_status_label, last_status_at, created_at, updated_at)
     SELECT gen_random_uuid(), o.account_id, o.id, o.courier, 'OLD' || o.tracking_number, 'cancelled', 'Cancelled',
            o.created_at + interval '1 hour', o.created_at + interval '1 hour', o.created_at + interval '1 hour'
       FROM orders o WHERE o.account_id = $1 AND o.tracking_number IS NOT NULL AND o.number % 20 = 0`,
    [accountId],
  );
  await db.query(
    `INSERT INTO shipments (id, account_id, order_id, courier_slug, tracking_number, status, last_status_label, last_status_at, created_at, updated_at)
     SELECT gen_random_uuid(), o.account_id, o.id, o.courier, o.tracking_number, st.status, initcap(replace(st.status, '_', ' ')),
            o.updated_at, o.created_at + interval '2 hours', o.updated_at
       FROM orders o
       CROSS JOIN LATERAL (SELECT CASE
            WHEN o.status = 'delivered' THEN 'delivered' WHEN o.status = 'returned' THEN 'returned'
            WHEN o.number % 4 = 0 THEN 'picked_up' ELSE 'in_transit' END AS status) st
      WHERE o.account_id = $1 AND o.tracking_number IS NOT NULL`,
    [accountId],
  );
  // Migration 017: the service keeps the latest shipment's status on the order (orders' recordShipmentStatus) in
  // the transaction that writes the shipment; rows inserted behind its back need the same, on a tree that has it.
  if (await hasColumn(db, 'orders', 'shipment_status')) {
    await db.query(
      `UPDATE orders o SET shipment_status = (SELECT s.status FROM shipments s WHERE s.account_id = o.account_id AND s.order_id = o.id
                                                ORDER BY s.created_at DESC, s.id DESC LIMIT 1)
        WHERE o.account_id = $1 AND o.tracking_number IS NOT NULL`,
      [accountId],
    );
  }
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM shipments WHERE account_id = $1', [accountId]);
  return rows[0].n;
}

export async function hasColumn(db: Sql, table: string, column: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = $2', [table, column]);
  return rows.length > 0;
}

/**
 * Bench only: the seed endpoint makes about 5,000 orders a second, so 1M
 * orders would take minutes. This copies the account's seeded orders
 * `factor - 1` times in SQL, each copy shifted back in time by the seeded
 * span (the newest orders stay the seeded ones), with its own numbers,
 * tracking numbers and customer emails (so customers grow with the orders).
 * Generated columns are left to PostgreSQL. Run it inside withoutOrderIndexes;
 * customer aggregates are rebuilt by the caller with the checkout's own
 * rebuildCustomers.
 */
export async function multiplyOrders(db: Sql, accountId: string, factor: number, log: (message: string) => void): Promise<void> {
  const { rows: columns } = await db.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
      WHERE table_name = 'orders' AND table_schema = current_schema() AND is_generated = 'NEVER' ORDER BY ordinal_position`,
  );
  const copied: Record<string, string> = {
    id: 'gen_random_uuid()',
    number: 'o.number + s.k * s.n',
    order_number: 'o.order_number + s.k * s.n',
    customer_email: "CASE WHEN o.customer_email IS NULL THEN NULL ELSE 'c' || s.k || '.' || o.customer_email END",
    tracking_number: "CASE WHEN o.tracking_number IS NULL THEN NULL ELSE o.tracking_number || '-' || s.k END",
    created_at: 'o.created_at - s.k * s.span',
    updated_at: 'o.updated_at - s.k * s.span',
  };
  const names = columns.map((c) => c.name);
  const { rows: extent } = await db.query<{ n: number; span: string }>(
    `SELECT max(number)::int AS n, (max(created_at) - min(created_at) + interval '1 day')::text AS span FROM orders WHERE account_id = $1`,
    [accountId],
  );
  for (let copy = 1; copy < factor; copy++) {
    const started = performance.now();
    await db.query(
      `INSERT INTO orders (${names.join(', ')})
       SELECT ${names.map((n) => copied[n] ?? `o.${n}`).join(', ')}
         FROM orders o, (SELECT $2::int AS k, $3::int AS n, $4::interval AS span) s
        WHERE o.account_id = $1 AND o.number <= $3`,
      [accountId, copy, extent[0].n, extent[0].span],
    );
    log(`copy ${copy}/${factor - 1} of the seeded orders in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}

/**
 * Bench only: a bulk load with the tables' triggers off for its transaction
 * (session_replication_role = replica), then every order document of the
 * account written once. With them on, each copied shipment rewrote its
 * order's document through the shipments trigger, and the copies carried
 * their originals' documents until then: 1M orders took over 25 minutes.
 * A tree without stored documents (before issue 29) just loads.
 */
export async function withDocumentsWrittenOnce(
  db: Db,
  accountId: string,
  log: (message: string) => void,
  load: (tx: Sql) => Promise<void>,
): Promise<void> {
  await db.tx(async (tx) => {
    await tx.exec('SET LOCAL session_replication_role = replica');
    await load(tx);
  });
  if (!(await hasColumn(db, 'orders', 'view_json'))) return;
  const started = performance.now();
  // The view's BEFORE UPDATE trigger writes the document and its ETag from the row as it now is.
  const { rowCount } = await db.query('UPDATE orders SET view_json = NULL WHERE account_id = $1', [accountId]);
  log(`${rowCount?.toLocaleString('en-US')} order documents written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Bench only: runs a bulk load on orders without its secondary indexes, then
 * builds them once; minutes faster at 1M rows than growing them row by row
 * (the GIN ones above all).
 */
export async function withoutOrderIndexes(db: Db, log: (message: string) => void, load: () => Promise<void>): Promise<void> {
  const { rows: indexes } = await db.query<{ name: string; definition: string }>(
    `SELECT i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
      WHERE i.tablename = 'orders' AND i.schemaname = current_schema()
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
  );
  for (const index of indexes) await db.exec(`DROP INDEX ${index.name}`);
  await load();
  const started = performance.now();
  for (const index of indexes) await db.exec(index.definition);
  log(`${indexes.length} indexes of orders built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** Bulk loads leave stale statistics until autovacuum wakes; plans are measured on settled ones. */
export async function settle(db: Db): Promise<void> {
  // One statement at a time: several in one script would form a transaction, where VACUUM cannot run.
  for (const table of ['orders', 'shipments', 'pages', 'products', 'api_keys']) await db.exec(`VACUUM (ANALYZE) ${table}`);
}

export async function tableSizeMb(db: Db, table: string): Promise<number> {
  const { rows } = await db.query<{ bytes: number }>('SELECT pg_total_relation_size($1::regclass)::bigint AS bytes', [table]);
  return rows[0].bytes / 1024 / 1024;
}

const PAGE_SIZE = 50;

export async function pickParams(db: Db, accountId: string): Promise<BenchParams> {
  const one = async <T>(text: string, params: unknown[] = []): Promise<T> => (await db.query<T>(text, [accountId, ...params])).rows[0];
  const q = 'petrov';
  const { n: qMatches } = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM orders o WHERE o.account_id = $1 AND o.status <> 'archived' AND ${SEARCH_TEXT} LIKE $2`,
    [`%${q}%`],
  );
  // The 50th most recently updated visible order: since= that instant returns about one page.
  const sinceRow = await one<{ updated_at: string }>(
    `SELECT updated_at FROM orders WHERE account_id = $1 AND status <> 'archived' ORDER BY updated_at DESC OFFSET 49 LIMIT 1`,
  );
  const { n: sinceMatches } = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND status <> 'archived' AND updated_at >= $2`,
    [sinceRow.updated_at],
  );
  // The last row of page 1,000 (or halfway, on a small seed) of the unfiltered list: its cursor asks for the next page.
  const { n: visible } = await one<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND status <> 'archived'`);
  const deepCursorPage = Math.max(1, Math.min(1000, Math.floor(visible / PAGE_SIZE / 2)));
  const deep = await one<{ created_at: string; id: string }>(
    `SELECT created_at, id FROM orders WHERE account_id = $1 AND status <> 'archived'
      ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
    [deepCursorPage * PAGE_SIZE - 1],
  );
  const page = await one<{ id: string }>(`SELECT id FROM pages WHERE account_id = $1 ORDER BY created_at, id LIMIT 1`);
  const product = await one<{ id: string }>(`SELECT id FROM products WHERE account_id = $1 ORDER BY created_at DESC, id LIMIT 1 OFFSET 17`);
  const narrow = await one<{ email: string }>(`SELECT customer_email AS email FROM orders WHERE account_id = $1 ORDER BY number LIMIT 1 OFFSET 1234`);
  const { rows: ids } = await db.query<{ id: string }>(`SELECT id FROM orders WHERE account_id = $1 ORDER BY md5(id::text) LIMIT 1000`, [accountId]);
  const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
  const cursors = await loadCursorSeal(db);
  return {
    status: 'new',
    payment: 'paid',
    q,
    qMatches,
    qNarrow: narrow.email,
    since: sinceRow.updated_at,
    sinceMatches,
    cursors,
    deepCursor: encodeCursor(cursors.scopedTo(accountId), { createdAt: deep.created_at, id: deep.id }),
    deepCursorPage: deepCursorPage + 1,
    from: day(120),
    to: day(90),
    pageId: page.id,
    productId: product.id,
    courier: 'courier_b',
    shipmentStatus: 'picked_up',
    orderIds: ids.map((r) => r.id),
  };
}
