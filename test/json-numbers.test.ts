// The JSON documents PostgreSQL shows in the views (merx_compact_json,
// migrations 014 and 018) are spelled exactly as JSON.stringify spells the
// same value, numbers included, on both databases: MCP's text content must be
// JSON.stringify(structuredContent) to the byte, and a client comparing an
// answer with what it sent must see its own numbers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { openDb } from '../src/platform/db/open-db.ts';
import type { Db } from '../src/platform/db/db.ts';
import { migrateDatabase } from '../src/views.ts';
import { isolatedDatabase, type IsolatedDatabase } from './helpers/webhooks.ts';

let database: IsolatedDatabase;
let db: Db;
before(async () => {
  database = await isolatedDatabase();
  db = await openDb({ databaseUrl: database.env.DATABASE_URL ?? null, databaseDirectUrl: database.env.DATABASE_DIRECT_URL, dataDir: 'memory://' });
  await migrateDatabase(db);
});
after(async () => {
  await db?.close();
  await database?.drop();
});

/** What the views print for a document written as `json` (the service writes JSON.stringify of the value). */
async function compact(json: string): Promise<string> {
  const { rows } = await db.query<{ text: string }>('SELECT merx_compact_json($1::jsonb)::text AS text', [json]);
  return rows[0].text;
}

async function assertSpelledAsJavaScript(json: string): Promise<void> {
  const printed = await compact(json);
  assert.deepEqual(JSON.parse(printed), JSON.parse(json), `${json}: the same value`);
  assert.equal(printed, JSON.stringify(JSON.parse(printed)), `${json}: printed as JSON.stringify prints it`);
}

test("numbers JavaScript prints with an exponent, past a double's precision, or with a trailing zero are printed as JavaScript prints them", async () => {
  const numbers = [
    '3e-323',
    '5e-324',
    '1e-7',
    '1.5e-7',
    '-1e-7',
    '0.000001',
    '0.00001',
    '0.0001',
    '1e21',
    '1.2345e25',
    '-1e300',
    '1e300',
    '12345678901234567',
    '123456789012345678901',
    '53321762210960780',
    '9007199254740993',
    '1234567890123456.7',
    '1.7976931348623157e308',
    '0.30000000000000004',
    '1.50',
    '10.0',
    '100',
    '0',
    '-5',
    '123.456',
    '1e15',
    '1e16',
    '2.5e-5',
  ];
  for (const n of numbers) {
    await assertSpelledAsJavaScript(n);
    await assertSpelledAsJavaScript(`{"l":${n},"w":[${n},{"h":${n}}],"label":"${n} cm"}`);
  }
  assert.equal(await compact('{"h":3e-323,"l":6.920607094106351e-74}'), '{"h":3e-323,"l":6.920607094106351e-74}');
  assert.equal(await compact('[1e-7,1e21,0.000001,1.50]'), '[1e-7,1e+21,0.000001,1.5]');
});

test('numbers past a double (only another writer than the service stores them) print as JavaScript prints what it parses: Infinity as null, an underflow as 0', async () => {
  assert.equal(await compact('[1e400,-1e400,1.7976931348623159e308,1e-400,-1e-400]'), '[null,null,null,0,0]');
});

test("the writer's session settings do not change the spelling: extra_float_digits 0 still gives the shortest round trip", async () => {
  const printed = await db.tx(async (tx) => {
    await tx.query('SET LOCAL extra_float_digits = 0');
    const { rows } = await tx.query<{ text: string }>('SELECT merx_compact_json($1::jsonb)::text AS text', [
      '[0.30000000000000004,1.2345678901234567,1.5e-7]',
    ]);
    return rows[0].text;
  });
  assert.equal(printed, '[0.30000000000000004,1.2345678901234567,1.5e-7]');
});

test('strings, keys and nesting are unchanged by the number path: escapes as JSON.stringify writes them', async () => {
  const doc = { 'a"b': 'x\\y\n\t\u0001 é €', nested: [[], {}, [1e-7, 'ok', null, true, false]], empty: '' };
  await assertSpelledAsJavaScript(JSON.stringify(doc));
});

/**
 * Keys made non-numeric: JavaScript lists integer-like keys ("0") first, jsonb by length; no document a view shows
 * has such keys (dimensions, line items, status events, addresses, filters have named fields).
 */
function namedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(namedKeys);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [`k${k}`, namedKeys(v)]));
  return value;
}

test('any JSON value with any doubles: printed as JSON.stringify prints it', async () => {
  const values = fc
    .jsonValue({ maxDepth: 3 })
    .map(namedKeys)
    .chain((v) => fc.tuple(fc.constant(v), fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 4 })));
  await fc.assert(
    fc.asyncProperty(values, async ([value, doubles]) => {
      await assertSpelledAsJavaScript(JSON.stringify({ value, doubles }));
    }),
    { numRuns: 150 },
  );
});

test('20,000 doubles of every magnitude (random bit patterns and short decimals): each printed as JavaScript prints it', async () => {
  const random = fc.sample(
    fc.tuple(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer({ min: -20, max: 20 }),
      fc.integer({ min: 1, max: 17 }),
      fc.double({ min: 0, max: 10, noNaN: true }),
    ),
    10_000,
  );
  const values = random.flatMap(([any, exponent, digits, fraction]) => [any, Number((fraction * 10 ** exponent).toPrecision(digits))]);
  const { rows } = await db.query<{ printed: string; i: number }>(
    'SELECT merx_js_number(x::numeric) AS printed, i::int FROM json_array_elements_text($1::json) WITH ORDINALITY AS a(x, i)',
    [JSON.stringify(values)],
  );
  const wrong = rows
    .filter((r) => r.printed !== JSON.stringify(values[r.i - 1]))
    .map((r) => `${JSON.stringify(values[r.i - 1])} printed ${r.printed}`);
  assert.equal(rows.length, values.length);
  assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} of ${values.length} numbers printed otherwise`);
});
