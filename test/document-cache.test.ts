// Issue 29: a service caches the stored documents it answered a read with,
// and the read sends their tags, so PostgreSQL sends the text only of the
// documents that changed. The rows' tags are compared in the statement, so
// a change by any writer (raw SQL here, behind the service's back) is in the
// very next answer, and what is cached is used only for unchanged rows.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Sql } from '../src/platform/db/db.ts';
import crypto from 'node:crypto';
import { CursorSeal, loadCursorSeal } from '../src/platform/contract/cursor-seal.ts';
import { findOrderText, listOrders } from '../src/modules/orders/queries.ts';
import { freshTenant, http, startTestService, type TestService } from './helpers/harness.ts';
import { callTool } from './helpers/mcp.ts';
import { AnswerBufferPool } from '../src/platform/read-path/answer-bytes.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => svc?.close());

/** The database as the reads see it, counting the texts PostgreSQL sent and the cached ones it did not (v null). */
function counting(db: Sql) {
  const seen = { sent: 0, cached: 0 };
  const sql: Sql = Object.create(db);
  sql.query = async (text, params, options) => {
    const result = await db.query(text, params, options);
    for (const row of result.rows as Array<{ v?: unknown }>) {
      if (row.v === null) seen.cached++;
      else if (row.v !== undefined) seen.sent++;
    }
    return result;
  };
  return { sql, seen };
}

/** What the account's newest page and one order are in the database now: the stored texts. */
async function storedPage(sql: Sql, accountId: string): Promise<string[]> {
  const { rows } = await sql.query<{ v: string }>(
    `SELECT view_json AS v FROM orders WHERE account_id = $1 AND status <> 'archived' ORDER BY created_at DESC, id DESC LIMIT 50`,
    [accountId],
  );
  return rows.map((r) => r.v);
}

test('a page and an order are sent in full once, then only what changed, and a change by raw SQL is in the next answer', async () => {
  const t = await freshTenant(svc.url);
  await t.op.call('POST', `/accounts/${t.accountId}/seed`, { orders: 12, products: 3, customers: 5 });
  const db = svc.service.db;
  const seal = await loadCursorSeal(db);
  const { sql, seen } = counting(db);

  const first = await listOrders(sql, t.accountId, { limit: 50 }, seal);
  const n = JSON.parse(first.text).data.length as number;
  assert.ok(n >= 5, `${n} orders listed`);
  assert.deepEqual(seen, { sent: n, cached: 0 }, 'the first read of the page is answered in full');
  const again = await listOrders(sql, t.accountId, { limit: 50 }, seal);
  assert.deepEqual(seen, { sent: n, cached: n }, 'the same read again: every document cached');
  assert.equal(again.text, first.text);
  assert.equal(again.bytes(new AnswerBufferPool()).toString('utf8'), first.text, 'cached documents are sent as the same bytes');
  assert.equal(again.etag, first.etag);

  // A console's UPDATE, as no service code would write it: the trigger rewrites the document and its tag.
  const changed = JSON.parse(first.text).data[3].id as string;
  await db.query(`UPDATE orders SET admin_notes = 'changed at the console' WHERE id = $1`, [changed]);
  const afterChange = await listOrders(sql, t.accountId, { limit: 50 }, seal);
  assert.deepEqual(seen, { sent: n + 1, cached: 2 * n - 1 }, 'only the changed document is sent');
  assert.deepEqual(
    JSON.parse(afterChange.text).data.map((o: unknown) => JSON.stringify(o)),
    (await storedPage(db, t.accountId)).map((v) => JSON.stringify(JSON.parse(v))),
  );
  assert.equal(JSON.parse(afterChange.text).data[3].admin_notes, 'changed at the console');
  assert.notEqual(afterChange.etag, first.etag);

  // One order: the same, by id.
  const one = await findOrderText(sql, t.accountId, changed);
  const oneAgain = await findOrderText(sql, t.accountId, changed);
  assert.equal(seen.cached, 2 * n, 'the order read again is cached');
  assert.equal(oneAgain!.text, one!.text);
  await db.query(`UPDATE orders SET admin_notes = 'changed again' WHERE id = $1`, [changed]);
  const oneChanged = await findOrderText(sql, t.accountId, changed);
  assert.equal(JSON.parse(oneChanged!.text).admin_notes, 'changed again');
  assert.notEqual(oneChanged!.etag, one!.etag);
  const gone = await findOrderText(sql, t.accountId, '00000000-0000-4000-8000-000000000000');
  assert.equal(gone, null);
});

test('REST and MCP answer with the document a raw UPDATE wrote, after polling the same page and order', async () => {
  const t = await freshTenant(svc.url);
  await t.op.call('POST', `/accounts/${t.accountId}/seed`, { orders: 8, products: 3, customers: 5 });
  const db = svc.service.db;
  const page = async () => (await http(svc.url, 'GET', '/api/v1/orders?limit=50', { token: t.key })).text;
  const before1 = await page();
  assert.equal(await page(), before1);
  const id = JSON.parse(before1).data[0].id as string;
  const byId = async () => http(svc.url, 'GET', `/api/v1/orders/${id}`, { token: t.key });
  const etagBefore = (await byId()).headers.get('etag');
  await callTool(svc.url, t.key, 'list_orders', { limit: 50 });

  await db.query(`UPDATE orders SET admin_notes = 'behind the service' WHERE id = $1`, [id]);
  const { rows } = await db.query<{ v: string; e: string }>('SELECT view_json AS v, view_etag AS e FROM orders WHERE id = $1', [id]);
  const now = await page();
  assert.equal(JSON.stringify(JSON.parse(now).data[0]), JSON.stringify(JSON.parse(rows[0].v)));
  assert.ok(now.includes(rows[0].v), 'the stored text as it is, byte for byte');
  const res = await byId();
  assert.equal(res.text, `{"data":${rows[0].v}}`);
  assert.equal(res.headers.get('etag'), rows[0].e);
  assert.notEqual(rows[0].e, etagBefore);
  // Twice: the second answer is written from the cached page's bytes.
  for (const call of ['first', 'cached']) {
    const tool = await callTool(svc.url, t.key, 'list_orders', { limit: 50 });
    const structured = tool.structuredContent as { data: Array<{ id: string; admin_notes: string }> };
    assert.equal(structured.data[0].admin_notes, 'behind the service', call);
    assert.equal(tool.content[0].text, JSON.stringify(tool.structuredContent), call);
    assert.equal(JSON.stringify(tool.structuredContent), now, call);
  }
});

test('a cached page is answered again only under the cursor key that sealed its next_cursor', async () => {
  const t = await freshTenant(svc.url);
  await t.op.call('POST', `/accounts/${t.accountId}/seed`, { orders: 12, products: 3, customers: 5 });
  const db = svc.service.db;
  const ours = await loadCursorSeal(db);
  // Another service in this process (tests start several) has a key of its own.
  const theirs = new CursorSeal(crypto.randomBytes(32));
  const cursorOf = (page: { text: string }) => JSON.parse(page.text).next_cursor as string;
  const first = await listOrders(db, t.accountId, { limit: 3 }, ours);
  const cached = await listOrders(db, t.accountId, { limit: 3 }, ours);
  assert.equal(cached, first, 'the same rows, the same key: the cached page itself');
  const other = await listOrders(db, t.accountId, { limit: 3 }, theirs);
  assert.notEqual(theirs.scopedTo(t.accountId).open(cursorOf(other)), null, 'sealed under the key it was read with');
  assert.equal(theirs.scopedTo(t.accountId).open(cursorOf(first)), null);
  assert.equal(JSON.stringify(JSON.parse(other.text).data), JSON.stringify(JSON.parse(first.text).data));
});
