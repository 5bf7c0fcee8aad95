// Issue 27: customer keys were lower-cased by JavaScript for notes and
// segment members and by PostgreSQL (whose lower() follows the database's
// locale) for orders, so "İvan@x.io" became two keys. One definition now,
// customer_key_of (migration 019), whichever path writes or reads: checkout,
// notes, segment members, the abandoned-cart filter; the same on PGlite and
// PostgreSQL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { shop } from './helpers/customers.ts';
import { isolatedDatabase } from './helpers/webhooks.ts';
import { openDb } from '../src/platform/db/open-db.ts';
import { migrateDatabase } from '../src/views.ts';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.close();
});

/** Spellings of one customer's e-mail, and the key they all share. */
const ONE_CUSTOMER: Array<{ key: string; spellings: string[] }> = [
  // The Turkish dotted capital İ, upper case, toLowerCase's i + combining dot above, plain ASCII, and spaces around.
  { key: 'ivan@x.io', spellings: ['İvan@x.io', 'İVAN@X.IO', 'i\u0307van@x.io', 'ivan@x.io', 'IVAN@x.io', '  İvan@x.io\t'] },
  { key: 'élodie@x.io', spellings: ['Élodie@x.io', 'ÉLODIE@X.IO', 'élodie@x.io'] },
  { key: 'иван@пример.бг', spellings: ['Иван@пример.бг', 'ИВАН@ПРИМЕР.БГ'] },
  { key: 'σοφια@x.gr', spellings: ['ΣΟΦΙΑ@x.gr', 'σοφια@x.gr'] },
  { key: 'jürgen@x.de', spellings: ['JÜRGEN@x.de', 'Jürgen@X.DE'] },
];

test('the database function is the one definition: the same keys on this database (PGlite or PostgreSQL)', async () => {
  for (const { key, spellings } of ONE_CUSTOMER) {
    for (const email of spellings) {
      const { rows } = await svc.service.db.query<{ key: string }>('SELECT customer_key_of($1, NULL) AS key', [email]);
      assert.equal(rows[0].key, key, JSON.stringify(email));
    }
  }
  const { rows } = await svc.service.db.query<{ a: string; b: string; c: string | null; d: string }>(
    "SELECT customer_key_of(NULL, ' +359 888 ') AS a, customer_key_of('', '+359') AS b, customer_key_of(' ', NULL) AS c, customer_key_of('A@x.io', '+359') AS d",
  );
  assert.deepEqual(rows[0], { a: '+359 888', b: '+359', c: null, d: 'a@x.io' }, 'a phone is trimmed only; an e-mail wins; blank is no key');
});

test('an ASCII e-mail takes the 26-letter fold and gets the key the full Unicode fold gives (migration 028)', async () => {
  const ascii = Array.from({ length: 126 }, (_, i) => String.fromCharCode(i + 1)).join('');
  const samples = [ascii, ` ${ascii} `, 'MiXeD.Case+Tag@Example.COM', '\t A@B.C \n', '', ' ', 'İvan@x.io', 'ÉLODIE@X.IO', 'i\u0307van@x.io'];
  for (let i = 0; i < 200; i++)
    samples.push(Array.from({ length: 1 + (i % 40) }, (_, j) => String.fromCharCode(1 + ((i * 31 + j * 17) % 126))).join(''));
  const { rows } = await svc.service.db.query<{ email: string; key: string | null; full: string | null }>(
    'SELECT email, customer_key_of(email, $2) AS key, merx_customer_key_unicode(email, $2) AS full FROM unnest($1::text[]) AS email',
    [samples, '+359'],
  );
  assert.equal(rows.length, samples.length);
  for (const r of rows) assert.equal(r.key, r.full, JSON.stringify(r.email));
});

test('checkouts under every spelling are one customer, and a note or a segment member written under any spelling lands on that customer', async () => {
  const s = await shop(svc.url);
  for (const { spellings } of ONE_CUSTOMER) {
    for (const email of spellings) await s.order({ email });
  }
  const customers = await s.allCustomers();
  assert.deepEqual(
    customers.map((c) => [c.key, c.orders_count]).sort(),
    ONE_CUSTOMER.map(({ key, spellings }) => [key, spellings.length]).sort(),
    'one customer per person, every order counted',
  );
  for (const c of customers) assert.equal(c.email, c.key, "the customer's e-mail is its key");

  // Notes: the key in the URL under another spelling.
  for (const { key, spellings } of ONE_CUSTOMER) {
    const res = await s.api('POST', `/api/v1/customers/${encodeURIComponent(spellings[1])}/notes`, { body: { text: 'called' }, expect: 201 });
    assert.equal(res.body.data.customer_key, key, spellings[1]);
    const dry = await s.api('POST', `/api/v1/customers/${encodeURIComponent(spellings[0])}/notes`, {
      body: { text: 'x' },
      headers: { 'x-merx-dry-run': '1' },
      expect: 200,
    });
    assert.equal(dry.body.data.customer_key, key);
  }

  // Segment members: every spelling is one member, and it is the customer.
  const list = await s.createSegment({ name: 'Regulars' });
  const turkish = ONE_CUSTOMER[0];
  const added = await s.addMembers(
    list.id,
    turkish.spellings.map((email) => ({ email })),
  );
  assert.deepEqual(added, { added: 1, skipped: turkish.spellings.length - 1, total: 1 });
  const members = await s.api('POST', '/api/v1/segments', {
    body: { name: 'preview', filters: { inSegment: list.id } },
    headers: { 'x-merx-dry-run': '1' },
    expect: 200,
  });
  assert.equal(members.body.data.customer_count, 1, 'the member is the customer who ordered');
  const removed = await s.api('DELETE', `/api/v1/segments/${list.id}/members`, { body: { customers: [{ email: 'İVAN@x.io' }] }, expect: 200 });
  assert.equal(removed.body.data.removed, 1);
});

test('the abandoned-cart filter matches a cart under another spelling of the e-mail', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'İvan@x.io' });
  await s.order({ email: 'someone@x.io' });
  const cart = await http(svc.url, 'POST', `/admin/api/accounts/${s.accountId}/abandoned-carts`, {
    token: ADMIN_TOKEN,
    body: { email: 'İVAN@X.IO' },
  });
  assert.equal(cart.status, 201, cart.text);
  assert.equal(await s.previewCount({ hasAbandonedCart: true }), 1);
  assert.equal(await s.previewCount({ hasAbandonedCart: false }), 1);
});

test('upgrading a database: migration 019 re-keys orders, customers, notes and segment members written under the old keys', async () => {
  const data = await isolatedDatabase();
  const db = await openDb({ databaseUrl: data.env.DATABASE_URL ?? null, databaseDirectUrl: data.env.DATABASE_DIRECT_URL, dataDir: 'memory://' });
  try {
    // The schema as it was before 019, recorded as applied.
    const dir = path.join(import.meta.dirname, '../src/platform/db/migrations');
    await db.exec('CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    for (const file of fs
      .readdirSync(dir)
      .filter((f) => /^\d{3}_.+\.sql$/.test(f) && f < '019')
      .sort()) {
      await db.exec(fs.readFileSync(path.join(dir, file), 'utf8'));
      await db.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
    }
    const account = crypto.randomUUID();
    await db.query("INSERT INTO accounts (id, name, email) VALUES ($1, 'Old shop', 'old@example.com')", [account]);
    for (const email of ['İvan@x.io', 'ivan@x.io', 'ÉLODIE@x.io']) {
      await db.query('INSERT INTO orders (id, account_id, customer_email, total) VALUES ($1, $2, $3, 10)', [crypto.randomUUID(), account, email]);
    }
    // What the old JavaScript wrote: toLowerCase() keys.
    await db.query("INSERT INTO customer_notes (id, account_id, customer_key, text) VALUES ($1, $2, $3, 'old note')", [
      crypto.randomUUID(),
      account,
      'İvan@x.io'.toLowerCase(),
    ]);
    const segment = crypto.randomUUID();
    await db.query("INSERT INTO segments (id, account_id, name, filters) VALUES ($1, $2, 'Old list', '{}')", [segment, account]);
    for (const key of ['İvan@x.io'.toLowerCase(), 'ivan@x.io']) {
      await db.query('INSERT INTO segment_members (account_id, segment_id, customer_key) VALUES ($1, $2, $3)', [account, segment, key]);
    }

    // 019 first; later migrations (020 secrets at rest) run after it.
    assert.equal((await migrateDatabase(db))[0], '019_customer_key.sql');
    const { rows: orders } = await db.query<{ k: string }>('SELECT DISTINCT customer_key AS k FROM orders WHERE account_id = $1 ORDER BY 1', [
      account,
    ]);
    assert.deepEqual(
      orders.map((r) => r.k),
      ['ivan@x.io', 'élodie@x.io'],
    );
    const { rows: customers } = await db.query<{ key: string; orders_count: number }>(
      'SELECT key, orders_count FROM customer_aggregates WHERE account_id = $1 ORDER BY key',
      [account],
    );
    assert.deepEqual(
      customers.map((c) => [c.key, Number(c.orders_count)]),
      [
        ['ivan@x.io', 2],
        ['élodie@x.io', 1],
      ],
    );
    const { rows: counts } = await db.query<{ n: string }>('SELECT sum(customers)::text AS n FROM customer_counts WHERE account_id = $1', [account]);
    assert.equal(counts[0].n, '2');
    const { rows: notes } = await db.query<{ k: string }>('SELECT customer_key AS k FROM customer_notes WHERE account_id = $1', [account]);
    assert.deepEqual(
      notes.map((r) => r.k),
      ['ivan@x.io'],
    );
    const { rows: members } = await db.query<{ k: string }>('SELECT customer_key AS k FROM segment_members WHERE segment_id = $1', [segment]);
    assert.deepEqual(
      members.map((r) => r.k),
      ['ivan@x.io'],
      'two old spellings are one member',
    );
  } finally {
    await db.close();
    await data.drop();
  }
});
