// EXTENSIONS 8, exports: one snapshot handed over to the events feed while
// other connections write (nothing missed, nothing doubled across the rows and
// the feed from Merx-Events-Cursor), a stream cut short never looks complete,
// and at most two exports stream per key.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, operator, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { checkoutWith, shipTenant } from './helpers/shipments.ts';
import { drainFeed } from './helpers/events-feed.ts';
import { eventually } from './helpers/webhooks.ts';
import { exportPath } from './helpers/exports.ts';
import { changePaymentStatus } from '../src/modules/orders/commands.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.close();
});

const SCOPES = ['orders:read', 'orders:write', 'shipments:read', 'customers:read', 'products:read'];
const onPostgres = () => svc.service.db.kind === 'postgres';

/** An export opened with fetch: its headers, and a reader of its body. */
async function openStream(key: string, resource: string, query: Record<string, string> = {}) {
  const res = await fetch(svc.url + exportPath(resource, query), { headers: { authorization: `Bearer ${key}` } });
  return res;
}

async function readAll(reader: ReadableStreamDefaultReader<Uint8Array>, first = ''): Promise<string> {
  const decoder = new TextDecoder();
  let text = first;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}

/** A tenant with `seeded` orders (no events) plus three checked-out ones (A, B, C, with events). */
async function busyTenant(seeded: number) {
  const t = await shipTenant(svc, { scopes: SCOPES });
  if (seeded) await operator(svc.url).call('POST', `/accounts/${t.accountId}/seed`, { orders: seeded, products: 2 });
  const [a, b, c] = [
    await checkoutWith(svc, t.accountId, 'courier_a'),
    await checkoutWith(svc, t.accountId, 'courier_a'),
    await checkoutWith(svc, t.accountId, 'courier_a'),
  ];
  return { ...t, a, b, c };
}

const patch = (key: string, id: string, note: string) => http(svc.url, 'PATCH', `/api/v1/orders/${id}`, { token: key, body: { admin_notes: note } });

test('an export while others write: the rows are the snapshot, the feed from its cursor has exactly the later events', async () => {
  const t = await busyTenant(4000);
  // On PostgreSQL a transaction that wrote before the snapshot and commits after it (its xid is below ones the rows show).
  let release = () => {};
  let held: Promise<unknown> = Promise.resolve();
  if (onPostgres()) {
    let wrote = () => {};
    const written = new Promise<void>((r) => (wrote = r));
    const gate = new Promise<void>((r) => (release = r));
    held = svc.service.db.tx(async (tx) => {
      await changePaymentStatus(tx, t.accountId, t.a.id, 'paid', 'payment');
      wrote();
      await gate;
    });
    await written;
  }
  // B changes and commits before the export: in the rows, not in the feed after the cursor.
  assert.equal((await patch(t.key, t.b.id, 'before the export')).status, 200);

  const res = await openStream(t.key, 'orders');
  assert.equal(res.status, 200);
  const cursor = res.headers.get('merx-events-cursor')!;
  const reader = res.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  // After the snapshot: T1 commits, C changes, D is created. On PGlite (one transaction at a time) these wait for the export's end.
  release();
  const later = Promise.all([held, patch(t.key, t.c.id, 'after the export'), checkoutWith(svc, t.accountId, 'courier_a')]);
  let d: any = null;
  if (onPostgres()) d = (await later)[2];
  const rows = (await readAll(reader, first))
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  if (!onPostgres()) d = (await later)[2];
  const row = (id: string) => rows.find((r) => r.id === id);
  const { rows: listed } = await svc.service.db.query("SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND status <> 'archived'", [
    t.accountId,
  ]);
  assert.equal(rows.length, listed[0].n - 1, 'every order of the snapshot (all but D), once');
  assert.equal(new Set(rows.map((r) => r.id)).size, rows.length);
  assert.equal(row(t.b.id).admin_notes, 'before the export');
  assert.notEqual(row(t.c.id).admin_notes, 'after the export');
  assert.equal(row(d.id), undefined, 'an order created after the snapshot is not in the rows');
  if (onPostgres()) assert.notEqual(row(t.a.id).payment_status, 'paid', 'a transaction still running at the snapshot is not in the rows');

  // The feed: every event exactly once, either before the snapshot (in the rows) or after the cursor.
  const expectedAfter = [`order.updated:${t.c.id}`, `order.created:${d.id}`, ...(onPostgres() ? [`order.paid:${t.a.id}`] : [])];
  const keyOf = (e: any) => `${e.event}:${e.data.order?.id}`;
  const { events: afterCursor } = await eventually(async () => {
    const read = await drainFeed(svc.url, t.key, cursor);
    return expectedAfter.every((k) => read.events.some((e) => keyOf(e) === k)) ? read : null;
  }, 'the later events after the cursor');
  const { events: everything } = await drainFeed(svc.url, t.key, null);
  const beforeSnapshot = new Set([`order.created:${t.a.id}`, `order.created:${t.b.id}`, `order.created:${t.c.id}`, `order.updated:${t.b.id}`]);
  const afterIds = new Set(afterCursor.map((e) => e.id));
  assert.equal(afterIds.size, afterCursor.length, 'no event twice after the cursor');
  for (const event of everything) {
    const key = keyOf(event);
    assert.ok(beforeSnapshot.has(key) !== afterIds.has(event.id), `${key}: in the rows or after the cursor, exactly one`);
  }
  assert.deepEqual(afterCursor.map(keyOf).sort(), expectedAfter.sort());
  // The feed's order is kept: the events after the cursor are the tail of a fresh read in the same order.
  assert.deepEqual(
    afterCursor.map((e) => e.id),
    everything.filter((e) => afterIds.has(e.id)).map((e) => e.id),
  );
});

test('a stream cut in the middle never ends like a complete one', async (t) => {
  if (!onPostgres()) return t.skip('the server-side cut is a terminated PostgreSQL backend; the client-side cut is in merx-client.test.ts');
  const tenant = await busyTenant(4000);
  const res = await openStream(tenant.key, 'orders');
  const reader = res.body!.getReader();
  const first = await reader.read();
  // A backend still running the export's statement (its query text stays in pg_stat_activity once it is done).
  const { rows } = await svc.service.db.query(
    "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%merx_export%' AND state = 'active' AND pid <> pg_backend_pid()",
  );
  // Cut while it sent, the body ends in an error; had it sent every row (COPY's bytes wait in buffers on the way),
  // it ends holding every record. Never a clean end short of some.
  const rest = await readAll(reader, new TextDecoder().decode(first.value)).then(
    (text) => ({ text }),
    (err: Error) => ({ err }),
  );
  if ('text' in rest) {
    assert.equal(rows.length, 0, 'a backend still exporting was terminated, yet the body ended cleanly');
    const whole = await readAll((await openStream(tenant.key, 'orders')).body!.getReader());
    assert.equal(rest.text, whole, 'a clean end holds every record');
  }
});

test('at most two exports stream per key at once; a third is 429 rate_limited, and a slot frees when a stream ends', async () => {
  const t = await busyTenant(4000);
  const first = await openStream(t.key, 'orders');
  assert.equal(first.status, 200);
  // On PGlite the second waits for the first's transaction; its slot is taken already.
  const second = openStream(t.key, 'customers');
  const third = await eventually(async () => {
    const res = await http(svc.url, 'GET', exportPath('products'), { token: t.key });
    return res.status === 429 ? res : null;
  }, 'a third export refused');
  assertError(third, 429, 'rate_limited');
  // Another key of the account has its own two.
  const otherKey = await operator(svc.url).issueKey(t.accountId, { scopes: SCOPES });
  const elsewhere = http(svc.url, 'GET', exportPath('products'), { token: otherKey });
  await first.body!.cancel();
  await (await second).body!.cancel();
  assert.equal((await elsewhere).status, 200);
  await eventually(async () => (await http(svc.url, 'GET', exportPath('products'), { token: t.key })).status === 200, 'a slot free again');
});
