// How list pages are sent to PostgreSQL (issue 12): a prepared page has its
// LIMIT written into the text, so PostgreSQL can settle on the statement's
// generic plan (a bound LIMIT is costed at a tenth of the rows and made every
// request plan anew); a filter whose best plan depends on its value (product,
// search, since) is planned per request, not prepared. On PostgreSQL a
// prepared statement runs on its generic plan (db.ts preparedPool).
import { CursorSeal } from '../src/platform/contract/cursor-seal.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb } from '../src/platform/db/open-db.ts';
import type { QueryOptions, Sql } from '../src/platform/db/db.ts';
import { listOrders } from '../src/modules/orders/queries.ts';
import { EventReactions } from '../src/platform/db/outbox.ts';
import { DocumentCache } from '../src/platform/read-path/document-cache.ts';
import { Keyring } from '../src/platform/edge/secret-box.ts';

const ACCOUNT = '00000000-0000-4000-8000-000000000001';

/** The page statement listOrders sends (the last one), with its options; answers no rows. */
async function pageStatement(input: Parameters<typeof listOrders>[2]) {
  const sent: Array<{ text: string; params: unknown[]; options?: QueryOptions }> = [];
  const sql: Sql = {
    query: async (text: string, params: unknown[] = [], options?: QueryOptions) => {
      sent.push({ text, params, options });
      return { rows: [], rowCount: 0 };
    },
    exec: async () => {},
    afterCommit: (task) => task(),
    reactions: new EventReactions(),
    documentCache: new DocumentCache(),
    keyring: new Keyring(),
  } as Sql;
  await listOrders(sql, ACCOUNT, input, new CursorSeal(Buffer.alloc(32)));
  return sent[sent.length - 1];
}

test('a prepared page has its LIMIT (limit + 1) written into the text, not bound', async () => {
  for (const [input, limit] of [
    [{}, 51],
    [{ limit: 1 }, 2],
    [{ limit: 200, status: 'new' as const }, 201],
  ] as const) {
    const statement = await pageStatement(input);
    assert.equal(statement.options?.prepared, true, JSON.stringify(input));
    assert.match(statement.text, new RegExp(`LIMIT ${limit}\\)`), JSON.stringify(input));
    assert.doesNotMatch(statement.text, /LIMIT \$\d+/);
    assert.ok(!statement.params.includes(limit), 'the limit is not among the parameters');
  }
});

test('since, q and product_id pages are planned for their values, not prepared', async () => {
  for (const input of [{ since: '2026-01-01' }, { q: 'petrov' }, { product_id: '00000000-0000-4000-8000-000000000002' }]) {
    const statement = await pageStatement(input);
    assert.equal(statement.options?.prepared, false, JSON.stringify(input));
  }
  assert.equal((await pageStatement({ from: '2026-01-01', courier: 'none' })).options?.prepared, true, 'other filters stay prepared');
});

const needsPostgres = !process.env.DATABASE_URL
  ? 'plan_cache_mode is a PostgreSQL session setting (set DATABASE_URL)'
  : process.env.DATABASE_DIRECT_URL && process.env.DATABASE_DIRECT_URL !== process.env.DATABASE_URL
    ? 'through a transaction pooler there are no prepared statements and no session settings (issue 32)'
    : false;

test(
  'prepared statements outside a transaction run on their generic plans; the rest, and all in a transaction, are planned per request',
  { skip: needsPostgres },
  async () => {
    const db = await openDb({ databaseUrl: process.env.DATABASE_URL!, dataDir: '' });
    try {
      const mode = async (sql: Sql, prepared: boolean) =>
        (await sql.query<{ mode: string }>("SELECT current_setting('plan_cache_mode') AS mode", [], { prepared })).rows[0].mode;
      assert.equal(await mode(db, true), 'force_generic_plan');
      assert.equal(await mode(db, false), 'auto');
      assert.deepEqual(await db.tx(async (tx) => [await mode(tx, true), await mode(tx, false)]), ['auto', 'auto']);
    } finally {
      await db.close();
    }
  },
);
