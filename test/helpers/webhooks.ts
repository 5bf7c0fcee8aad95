// Shared pieces of the webhook tests: a database of their own (job runs with
// a `now` hours ahead must not touch deliveries of test files running beside
// them), the webhook REST calls, the operator's delivery job, and polling.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestContext } from 'node:test';
import { http, ADMIN_TOKEN, freshTenant, startTestService, type TestService } from './harness.ts';
import { startHttpsReceiver, type HttpsReceiver, type ReceiverEndpoint, type ReceivedRequest } from './https-receiver.ts';
import { openDb } from '../../src/platform/db/open-db.ts';
import type { Db } from '../../src/platform/db/db.ts';
import { migrateDatabase } from '../../src/views.ts';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const SUBSCRIPTION_FIELDS = [
  'active',
  'created_at',
  'dead_notified_at',
  'description',
  'events',
  'id',
  'last_status_code',
  'last_triggered_at',
  'secret_prefix',
  'updated_at',
  'url',
];
export const DELIVERY_FIELDS = [
  'attempt',
  'created_at',
  'delivered_at',
  'event',
  'event_id',
  'id',
  'last_error',
  'last_status_code',
  'next_attempt_at',
  'response_body',
  'status',
  'webhook_id',
];
export const SUBSCRIBABLE_EVENTS = [
  'order.created',
  'order.updated',
  'order.status_changed',
  'order.paid',
  'shipment.created',
  'shipment.status_changed',
  'shipment.cancelled',
  'inventory.low_stock',
];
/** SPEC Receiver rules 4: delay before attempts 2..6. */
export const BACKOFF_SEC = [60, 300, 1800, 7200, 43200];

export interface IsolatedDatabase {
  /** Env for startTestService / the child process: DATABASE_URL, or DATA_DIR when `onDisk`. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * The suite's database variables (DATABASE_URL, and the pooler run's
 * DATABASE_DIRECT_URL and DATABASE_READ_URLS: issue 32) naming database `name`.
 */
export function suiteDatabaseEnv(name: string): Record<string, string> {
  const rename = (raw: string) => {
    const url = new URL(raw);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const env: Record<string, string> = { DATABASE_URL: rename(process.env.DATABASE_URL!) };
  if (process.env.DATABASE_DIRECT_URL) env.DATABASE_DIRECT_URL = rename(process.env.DATABASE_DIRECT_URL);
  if (process.env.DATABASE_READ_URLS) env.DATABASE_READ_URLS = process.env.DATABASE_READ_URLS.split(',').map(rename).join(',');
  return env;
}

/**
 * With DATABASE_URL: a fresh PostgreSQL database on the same server, dropped
 * afterwards. Without: PGlite in memory, or in a temp DATA_DIR when the test
 * restarts the service on the same data (`onDisk`).
 */
export async function isolatedDatabase(options: { onDisk?: boolean } = {}): Promise<IsolatedDatabase> {
  const base = process.env.DATABASE_URL;
  if (base) {
    const name = `merx_wh_${crypto.randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    return {
      env: suiteDatabaseEnv(name),
      async drop() {
        const client = new pg.Client({ connectionString: base });
        await client.connect();
        try {
          await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        } finally {
          await client.end();
        }
      },
    };
  }
  if (!options.onDisk) return { env: { DATA_DIR: 'memory://' }, async drop() {} };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-wh-data-'));
  return {
    env: { DATA_DIR: dir },
    async drop() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * For tests of the delivery engine's statements: a migrated database of its
 * own (isolatedDatabase) holding one account and its subscription to
 * order.updated; close() closes and drops it.
 */
export async function subscriptionDatabase(name: string) {
  const database = await isolatedDatabase();
  const db = await openDb({
    databaseUrl: database.env.DATABASE_URL ?? null,
    databaseDirectUrl: database.env.DATABASE_DIRECT_URL,
    dataDir: 'memory://',
  });
  const close = async () => {
    await db.close();
    await database.drop();
  };
  const accountId = crypto.randomUUID();
  const webhookId = crypto.randomUUID();
  try {
    await migrateDatabase(db);
    await db.query(`INSERT INTO accounts (id, name, email) VALUES ($1, $2, 'engine@example.com')`, [accountId, name]);
    await db.query(
      `INSERT INTO webhook_subscriptions (id, account_id, url, events, secret, secret_prefix) VALUES ($1, $2, 'https://example.com/hook', '{order.updated}', 'whsec_x', 'whsec_x')`,
      [webhookId, accountId],
    );
  } catch (err) {
    await close();
    throw err;
  }
  return { db, accountId, webhookId, close };
}

/** `count` order.updated events of the subscription's account and a pending delivery of each on `attempt`, due in a minute; their ids. */
export async function pendingDeliveries(db: Db, accountId: string, webhookId: string, count: number, attempt = 0): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `WITH e AS (
       INSERT INTO events (id, account_id, event, api_version, data)
       SELECT gen_random_uuid(), $1, 'order.updated', '2026-09-01', '{}' FROM generate_series(1, $3::int) RETURNING id
     )
     INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, event, attempt, next_attempt_at)
     SELECT gen_random_uuid(), $1, $2, e.id, 'order.updated', $4, now() + interval '1 minute' FROM e RETURNING id`,
    [accountId, webhookId, count, attempt],
  );
  return rows.map((r) => r.id);
}

export async function createWebhook(base: string, key: string, body: Record<string, unknown>) {
  const res = await http(base, 'POST', '/api/v1/webhooks', { token: key, body });
  assert.equal(res.status, 201, `create webhook: ${res.status} ${res.text}`);
  return res.body as { data: any; secret: string };
}

export async function patchWebhook(base: string, key: string, id: string, body: Record<string, unknown>) {
  const res = await http(base, 'PATCH', `/api/v1/webhooks/${id}`, { token: key, body });
  assert.equal(res.status, 200, `patch webhook: ${res.status} ${res.text}`);
  return res.body.data;
}

export async function listWebhooks(base: string, key: string) {
  const res = await http(base, 'GET', '/api/v1/webhooks', { token: key });
  assert.equal(res.status, 200, res.text);
  return res.body as { data: any[]; events: string[] };
}

export async function getWebhook(base: string, key: string, id: string) {
  const found = (await listWebhooks(base, key)).data.find((s) => s.id === id);
  assert.ok(found, `subscription ${id} is listed`);
  return found;
}

export async function deliveriesOf(base: string, key: string, webhookId: string, limit?: number) {
  const res = await http(base, 'GET', `/api/v1/webhooks/${webhookId}/deliveries${limit === undefined ? '' : `?limit=${limit}`}`, { token: key });
  assert.equal(res.status, 200, `deliveries: ${res.status} ${res.text}`);
  return res.body.data as any[];
}

/** POST /admin/api/jobs/webhook-deliveries/run as if the clock read `now`. */
export async function runDeliveryJob(base: string, now?: Date): Promise<number> {
  const res = await http(base, 'POST', '/admin/api/jobs/webhook-deliveries/run', {
    token: ADMIN_TOKEN,
    body: now ? { now: now.toISOString() } : {},
  });
  assert.equal(res.status, 200, `job run: ${res.status} ${res.text}`);
  assert.equal(res.body.data.job, 'webhook-deliveries');
  return res.body.data.processed as number;
}

export async function sinkCaptures(base: string, webhookId: string) {
  const res = await http(base, 'GET', `/admin/api/webhooks/${webhookId}/sink`, { token: ADMIN_TOKEN });
  assert.equal(res.status, 200, `sink captures: ${res.status} ${res.text}`);
  return res.body.data as Array<{ id: string; headers: Record<string, string>; body: string; received_at: string }>;
}

/** Polls `probe` until it returns a truthy value (no timing assertion: only a generous upper bound). */
export async function eventually<T>(probe: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The single delivery of a subscription once it satisfies `ready`. */
export async function deliveryWhen(
  base: string,
  key: string,
  webhookId: string,
  ready: (d: any) => boolean,
  what = 'the delivery',
  timeoutMs?: number,
) {
  return eventually(async () => (await deliveriesOf(base, key, webhookId)).find(ready), what, timeoutMs);
}

/** PATCH an order's admin notes through the public API: emits order.updated (source api). */
export async function touchOrder(base: string, key: string, orderId: string, note = `note ${crypto.randomUUID()}`) {
  const res = await http(base, 'PATCH', `/api/v1/orders/${orderId}`, { token: key, body: { admin_notes: note } });
  assert.equal(res.status, 200, `order PATCH: ${res.status} ${res.text}`);
  return res.body;
}

/**
 * Runs the delivery job at each due time of `deliveryId` until it leaves
 * `pending`; returns the delivery then. Asserts each run makes one attempt.
 */
export async function driveUntilSettled(base: string, key: string, webhookId: string, deliveryId: string) {
  for (let i = 0; i < 10; i++) {
    const delivery = (await deliveriesOf(base, key, webhookId)).find((d) => d.id === deliveryId);
    assert.ok(delivery, 'the delivery is listed');
    if (delivery.status !== 'pending') return delivery;
    await runDeliveryJob(base, new Date(delivery.next_attempt_at));
  }
  throw new Error('delivery still pending after 10 job runs');
}

/**
 * SPEC Delivery headers and Envelope, with GAPS' Merx names: checks one
 * received delivery (from the HTTPS receiver or the debug sink) and returns
 * its parsed envelope. The signature is recomputed here from the contract,
 * independently of the service's code.
 */
export function assertSignedDelivery(received: { headers: Record<string, unknown>; body: string }, secret: string, event: string) {
  const h = received.headers as Record<string, string>;
  assert.equal(h['content-type'], 'application/json');
  assert.equal(h['user-agent'], 'merx-webhooks/1');
  // EXTENSIONS 6: order.* and shipment.* deliveries carry X-Merx-Resource-Version, the others none.
  const versioned = /^(order|shipment)\./.test(event);
  assert.deepEqual(
    Object.keys(h)
      .filter((k) => k.startsWith('x-merx-'))
      .sort(),
    ['x-merx-delivery', 'x-merx-event', 'x-merx-event-id', ...(versioned ? ['x-merx-resource-version'] : []), 'x-merx-signature', 'x-merx-timestamp'],
  );
  if (versioned) assert.match(h['x-merx-resource-version'], /^[1-9]\d*$/);
  assert.equal(h['x-merx-event'], event);
  assert.match(h['x-merx-delivery'], UUID_RE);
  assert.match(h['x-merx-event-id'], UUID_RE);
  assert.match(h['x-merx-timestamp'], /^\d{10}$/);
  const signature = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(h['x-merx-signature']);
  assert.ok(signature, `X-Merx-Signature has the form t=<ts>,v1=<hex>: ${h['x-merx-signature']}`);
  assert.equal(signature[1], h['x-merx-timestamp'], 'the signed t is X-Merx-Timestamp');
  const expected = crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${signature[1]}.${received.body}`).digest('hex');
  assert.equal(signature[2], expected, 'v1 = HMAC-SHA256(secret, "<t>.<raw body>")');
  // GAPS: signatures always use the real clock, also on attempts made by a job run with a `now` hours ahead.
  assert.ok(Math.abs(Date.now() / 1000 - Number(signature[1])) <= 300, `t=${signature[1]} is within the 300 s replay window`);
  const envelope = JSON.parse(received.body);
  assert.deepEqual(Object.keys(envelope).sort(), ['account_id', 'api_version', 'created_at', 'data', 'event', 'id']);
  assert.equal(envelope.id, h['x-merx-event-id']);
  assert.equal(envelope.event, event);
  assert.equal(envelope.api_version, '2026-09-01');
  assert.match(envelope.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  assert.match(envelope.account_id, UUID_RE);
  return envelope;
}

/** A subscription delivering to the service's own debug sink under its own id (its deliveries succeed); returns it and its secret. */
export async function sinkSubscription(
  svc: { url: string; service: { services: { config: { publicBaseUrl: string } } } },
  key: string,
  events: string[],
) {
  const own = new URL(svc.service.services.config.publicBaseUrl);
  // Issue 28: a sink url without an id is stored with the subscription's own.
  const created = await createWebhook(svc.url, key, { url: `${own.protocol}//${own.hostname}/api/webhooks/sink`, events });
  const data = created.data;
  assert.equal(data.url, `${own.protocol}//${own.hostname}/api/webhooks/sink?id=${data.id}`);
  return { id: data.id as string, secret: created.secret, subscription: data };
}

export interface ReceiverWorld {
  svc: TestService;
  receiver: HttpsReceiver;
  close(): Promise<void>;
}

/**
 * A service on a database of its own that delivers to a loopback HTTPS
 * receiver it trusts (WEBHOOK_ALLOW_HOSTS=127.0.0.1, the receiver's CA), with
 * WORKERS=0: only the operator's delivery job moves retries along.
 */
export async function startReceiverWorld(env: Record<string, string> = {}): Promise<ReceiverWorld> {
  const receiver = await startHttpsReceiver();
  process.env.NODE_EXTRA_CA_CERTS = receiver.caFile;
  const database = await isolatedDatabase();
  const svc = await startTestService({ ...database.env, WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WORKERS: '0', ...env });
  return {
    svc,
    receiver,
    async close() {
      await svc.close();
      await receiver.close();
      await database.drop();
    },
  };
}

/**
 * A fresh tenant whose subscription to order.updated delivers to `endpoint`,
 * and an order: each deliver() touches the order and returns the delivery as
 * received. The subscription is deleted after the test.
 */
export async function subscribedTenant(t: TestContext, svc: TestService, endpoint: ReceiverEndpoint) {
  const tenant = await freshTenant(svc.url);
  const { data: sub, secret } = await createWebhook(svc.url, tenant.key, { url: endpoint.url, events: ['order.updated'] });
  const order = await tenant.op.checkout(tenant.accountId);
  t.after(async () => {
    await http(svc.url, 'DELETE', `/api/v1/webhooks/${sub.id}`, { token: tenant.key });
  });
  const deliver = async (): Promise<ReceivedRequest> => {
    const count = endpoint.requests.length;
    await touchOrder(svc.url, tenant.key, order.id);
    return (await endpoint.waitFor(count + 1))[count];
  };
  return { ...tenant, sub, secret, order, deliver };
}
