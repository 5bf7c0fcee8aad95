// Issue 43: the stored views' upkeep is checked in as migrations a reviewer
// reads, and must be what the declarations generate now. A changed view's
// rows are rewritten after the instance listens, and every answer meanwhile
// is the current view (built from the row where the stored document is an
// older declaration's), its ETag included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { views } from '../src/views.ts';
import { orderView } from '../src/modules/orders/view.ts';
import { productView } from '../src/modules/products/view.ts';
import { etagOfText } from '../src/platform/contract/etag.ts';
import type { Db, Sql } from '../src/platform/db/db.ts';
import type { View } from '../src/platform/read-path/stored-view.ts';
import { VIEW_MIGRATION_COMMAND, outdatedViews, writeViewMigration } from '../src/platform/read-path/view-migrations.ts';
import { MIGRATIONS_DIR } from '../src/platform/db/migrate.ts';
import { freshTenant, http, startTestService, type TestService } from './helpers/harness.ts';
import { staleDocuments } from './helpers/stored-views.ts';

test('the migrations hold the upkeep every stored view declaration generates now', () => {
  const outdated = outdatedViews(views).map((v) => v.name);
  assert.deepEqual(
    outdated,
    [],
    `stored views ${outdated.join(', ')} changed without their migration: run \`${VIEW_MIGRATION_COMMAND}\` and commit the file it writes`,
  );
});

test('a changed declaration is outdated until the next numbered migration holds its upkeep', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-view-migrations-'));
  for (const file of fs.readdirSync(MIGRATIONS_DIR)) fs.copyFileSync(path.join(MIGRATIONS_DIR, file), path.join(dir, file));
  const changed: View = { ...productView, upkeepSql: `${productView.upkeepSql}\nCOMMENT ON COLUMN products.view_json IS 'changed';` };
  assert.deepEqual(outdatedViews([changed, orderView], dir), [changed]);
  const last = Number(fs.readdirSync(dir).sort().at(-1)!.slice(0, 3));
  const file = writeViewMigration([changed], dir);
  assert.equal(file, `${String(last + 1).padStart(3, '0')}_stored_views_product.sql`);
  assert.deepEqual(outdatedViews([changed, orderView], dir), []);
  fs.rmSync(dir, { recursive: true });
});

/** Makes the account's rows look written by an older declaration of each view: another document, its tag, another version. */
async function asAnOlderDeclarationWroteThem(db: Db, accountId: string, changed: View[]) {
  await db.tx(async (tx) => {
    for (const view of changed) {
      await tx.query(`ALTER TABLE ${view.table} DISABLE TRIGGER merx_view_${view.name}`);
      await tx.query(
        `UPDATE ${view.table} SET view_json = '{"id":"' || id || '","older":true}', view_etag = merx_view_etag('{"id":"' || id || '","older":true}'), view_version = 'older'
          WHERE account_id = $1`,
        [accountId],
      );
      await tx.query(`ALTER TABLE ${view.table} ENABLE TRIGGER merx_view_${view.name}`);
      // What the migration of a changed declaration does (stored-view.ts upkeepSql).
      await tx.query('UPDATE stored_views SET backfilled = false, backfilled_through = NULL WHERE name = $1', [view.name]);
    }
  });
}

async function builtText(sql: Sql, view: View, id: string): Promise<string> {
  const { alias: a, from, joins, json } = view.built;
  return (await sql.query<{ v: string }>(`SELECT ${json}::text AS v FROM ${from} ${joins ?? ''} WHERE ${a}.id = $1`, [id])).rows[0].v;
}

/** Every answer is the view as declared now, whatever the row's stored document. */
async function assertAnswersCurrent(svc: TestService, key: string, order: { id: string }, product: { id: string }) {
  const db = svc.service.db;
  for (const [view, path, id] of [
    [orderView, `/api/v1/orders/${order.id}`, order.id],
    [productView, `/api/v1/products/${product.id}`, product.id],
  ] as const) {
    const expected = await builtText(db, view, id);
    const res = await http(svc.url, 'GET', path, { token: key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, `{"data":${expected}}`, `${path} answers the current view`);
    assert.equal(res.headers.get('etag'), etagOfText(expected));
    const listed = await http(svc.url, 'GET', `/api/v1/${view.table}?limit=50`, { token: key });
    assert.ok(listed.text.includes(expected), `the ${view.table} list answers the current view`);
  }
  // If-Match takes the tag a read answered with, also from a row not rewritten yet.
  const { headers } = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  const patched = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, {
    token: key,
    body: { admin_notes: 'during the backfill' },
    headers: { 'If-Match': headers.get('etag')! },
  });
  assert.equal(patched.status, 200, patched.text);
}

test('an instance starting after a view changed listens first, answers every read with the current view, and rewrites the rows behind', async () => {
  const postgres = Boolean(process.env.DATABASE_URL);
  const dataDir = postgres ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'merx-view-backfill-'));
  const env: Record<string, string> = dataDir ? { DATA_DIR: dataDir } : {};
  const first = await startTestService(env);
  const t = await freshTenant(first.url, { scopes: ['orders:read', 'orders:write', 'products:read', 'products:write'] });
  const product = await t.op.createProduct(t.accountId, { name: 'Lamp', price: 19.9 });
  const order = await t.op.checkout(t.accountId);
  await asAnOlderDeclarationWroteThem(first.service.db, t.accountId, [orderView, productView]);
  assert.deepEqual(await staleDocuments(first.service.db, productView, t.accountId), [product.id]);
  await first.close();

  // On PostgreSQL, a transaction holds the order view's progress row: the backfill cannot start a batch, the instance serves anyway.
  const holder = postgres ? new pg.Client({ connectionString: process.env.DATABASE_URL }) : null;
  await holder?.connect();
  await holder?.query(`BEGIN; SELECT 1 FROM stored_views WHERE name = 'order' FOR UPDATE`);
  const second = await startTestService(env);
  try {
    await assertAnswersCurrent(second, t.key, order, product);
    if (holder) {
      assert.deepEqual(
        await staleDocuments(second.service.db, productView, t.accountId),
        [product.id],
        'answered while the row still held an older document',
      );
      assert.equal((await http(second.url, 'GET', '/healthz')).body.stored_views, 'backfilling');
      await holder.query('ROLLBACK');
    }
    await second.service.services.viewBackfill!.done;
    for (const view of [orderView, productView])
      assert.deepEqual(await staleDocuments(second.service.db, view, t.accountId), [], `${view.name} rewritten`);
    assert.equal((await http(second.url, 'GET', '/healthz')).body.stored_views, undefined);
    await assertAnswersCurrent(second, t.key, order, product);
  } finally {
    await holder?.end();
    await second.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
