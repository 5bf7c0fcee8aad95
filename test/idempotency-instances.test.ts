// EXTENSIONS 2 across instances (BRIEF: stateless instances on one
// PostgreSQL): two real service instances share one database; a key held by a
// request on one is in use on the other, its answer is replayed by the other,
// and a race for one key across both runs the operation once. PGlite is one
// process's database, so this file needs PostgreSQL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, freshTenant, operator, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { rpc } from './helpers/mcp.ts';
import { isolatedDatabase, type IsolatedDatabase } from './helpers/webhooks.ts';
import { startHttpsReceiver, type HttpsReceiver } from './helpers/https-receiver.ts';
import { SLUGS } from './helpers/shipments.ts';

const skip = process.env.DATABASE_URL ? false : 'two instances share a database only on PostgreSQL (set DATABASE_URL)';

let a: TestService;
let b: TestService;
let receiver: HttpsReceiver;
let data: IsolatedDatabase;
before(async () => {
  if (skip) return;
  receiver = await startHttpsReceiver();
  process.env.NODE_EXTRA_CA_CERTS = receiver.caFile;
  data = await isolatedDatabase();
  const env = { ...data.env, WEBHOOK_ALLOW_HOSTS: '127.0.0.1' };
  a = await startTestService(env);
  b = await startTestService(env);
});
after(async () => {
  await a?.close();
  await b?.close();
  await receiver?.close();
  await data?.drop();
});

const post = (svc: TestService, key: string, path: string, body: unknown, idempotencyKey: string) =>
  http(svc.url, 'POST', path, { token: key, body, headers: { 'Idempotency-Key': idempotencyKey } });

test('a key held on one instance is in use on the other, whose replay is the first answer byte for byte', { skip }, async () => {
  const { key } = await freshTenant(a.url);
  const endpoint = receiver.endpoint('two-instances');
  endpoint.script([{ status: 200, body: 'slowly', delayMs: 1500 }]);
  const subscribed = await http(a.url, 'POST', '/api/v1/webhooks', { token: key, body: { url: endpoint.url, events: ['order.created'] } });
  assert.equal(subscribed.status, 201, subscribed.text);
  const path = `/api/v1/webhooks/${subscribed.body.data.id}/test`;
  const k = `two-instances-${crypto.randomUUID()}`;

  const slow = post(a, key, path, undefined, k);
  await endpoint.waitFor(1);
  const busy = assertError(await post(b, key, path, undefined, k), 409, 'conflict', 'instance B while A runs');
  assert.equal(busy.details.reason, 'idempotency_key_in_use');
  const busyTool = await rpc(b.url, key, {
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'test_webhook', arguments: { id: subscribed.body.data.id }, _meta: { idempotency_key: k } },
  });
  assert.equal(busyTool.body.result.structuredContent.error, 'CONFLICT');

  const first = await slow;
  assert.equal(first.status, 200, first.text);
  const replay = await post(b, key, path, undefined, k);
  assert.equal(replay.status, 200);
  assert.equal(replay.text, first.text, 'instance B replays what A answered, byte for byte');
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(endpoint.requests.length, 1, 'one delivery was sent');
});

test('requests racing for one key on two instances create one waybill, one shipment and one set of events', { skip }, async () => {
  const tenant = await freshTenant(a.url);
  for (const slug of SLUGS) await tenant.op.call('PUT', `/accounts/${tenant.accountId}/couriers/${slug}`, { enabled: true });
  const order = await operator(a.url).checkout(tenant.accountId);
  // The two instances share the simulator's parcels (they are in the database they share).
  const parcels = async () => (await a.service.services.courierSimulator!.trackingNumbers()).length;
  const before = await parcels();
  const k = `race-${crypto.randomUUID()}`;
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) => post(i % 2 ? b : a, tenant.key, '/api/v1/shipments', { order_id: order.id }, k)),
  );
  const outcomes = answers.map((r) =>
    r.status === 201 ? (r.headers.get('idempotent-replayed') ? 'replay' : 'created') : `${r.status}:${r.body?.error?.details?.reason}`,
  );
  assert.equal(outcomes.filter((o) => o === 'created').length, 1, JSON.stringify(outcomes));
  assert.ok(
    outcomes.every((o) => ['created', 'replay', '409:idempotency_key_in_use'].includes(o)),
    JSON.stringify(outcomes),
  );
  const created = answers.find((r) => r.status === 201 && !r.headers.get('idempotent-replayed'))!;
  for (const r of answers.filter((x) => x.status === 201)) assert.equal(r.text, created.text, 'every replay is the first answer');

  assert.equal((await parcels()) - before, 1, 'one waybill across both instances');
  const { rows } = await a.service.db.query('SELECT count(*)::int AS n FROM shipments WHERE account_id = $1', [tenant.accountId]);
  assert.equal(rows[0].n, 1);
  const { rows: events } = await a.service.db.query(`SELECT count(*)::int AS n FROM events WHERE account_id = $1 AND event = 'shipment.created'`, [
    tenant.accountId,
  ]);
  assert.equal(events[0].n, 1);
});
