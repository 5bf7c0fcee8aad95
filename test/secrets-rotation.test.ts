// Issue 27: the key that seals secrets at rest survives restarts, rotates
// (ENCRYPTION_KEYS=new,old then `npx merx secrets reseal`), and its absence
// stops the service at start with a sentence naming the variable; without
// ENCRYPTION_KEYS a key is generated into DATA_DIR (0600) and shared by every
// start from that directory. The operator token: only its hash is stored, a
// generated one is kept in DATA_DIR for the next banner, and a plaintext row
// from before is replaced by its hash. Each test has a database of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestService, freshTenant, http, type TestService } from './helpers/harness.ts';
import { isolatedDatabase, sinkCaptures, sinkSubscription, type IsolatedDatabase } from './helpers/webhooks.ts';
import { checkoutWith, putCourier, ship } from './helpers/shipments.ts';
import { SIMULATED_COURIERS } from '../src/couriers/simulator/simulated-couriers.ts';
import { verifyMerxSignature } from '../src/modules/webhooks/signing/signature.ts';
import { SEALED_COLUMNS } from '../src/platform/edge/sealed-columns.ts';
import { KEY_FILE, keyIdOf } from '../src/platform/edge/secret-box.ts';
import { TOKEN_FILE } from '../src/operator/admin-token.ts';

const BIN = path.join(import.meta.dirname, '../bin/merx.js');
const keyOf = (id: string) => `${id}:${crypto.randomBytes(32).toString('base64')}`;

/** A test delivery to the subscription's sink, verified with its secret. */
async function assertDeliveryVerifies(svc: TestService, key: string, webhookId: string, secret: string) {
  const before = (await sinkCaptures(svc.url, webhookId)).length;
  const tested = await http(svc.url, 'POST', `/api/v1/webhooks/${webhookId}/test`, { token: key });
  assert.equal(tested.body?.data?.status, 'delivered', tested.text);
  const captures = await sinkCaptures(svc.url, webhookId);
  assert.equal(captures.length, before + 1);
  assert.ok(verifyMerxSignature(captures[0].body, captures[0].headers['x-merx-signature'], secret), 'the delivery verifies with the secret');
}

/** The key ids of every sealed value in the database. */
async function keyIdsInUse(svc: TestService): Promise<Set<string | null>> {
  const ids = new Set<string | null>();
  for (const { table, column } of SEALED_COLUMNS) {
    const { rows } = await svc.service.db.query<{ v: string }>(`SELECT ${column}::text AS v FROM ${table} WHERE ${column} IS NOT NULL`);
    for (const r of rows) ids.add(keyIdOf(r.v));
  }
  return ids;
}

function merx(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const { DATABASE_URL: _url, DATA_DIR: _dir, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...inherited, LOG_LEVEL: 'silent', ...env }, timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function withDatabase(t: {
  after(fn: () => Promise<void>): void;
}): Promise<{ data: IsolatedDatabase; dir: string; env: Record<string, string> }> {
  const data = await isolatedDatabase({ onDisk: true });
  // DATA_DIR keeps the generated key and token; with PostgreSQL it is a directory of its own too.
  const dir = data.env.DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'merx-keys-'));
  t.after(async () => {
    await data.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { data, dir, env: { ...data.env, DATA_DIR: dir } };
}

test('rotation: new,old opens both; reseal moves every value to the new key; then the old key may go, and a start without the new one fails naming ENCRYPTION_KEYS', async (t) => {
  const { env } = await withDatabase(t);
  const [k1, k2] = [keyOf('k1'), keyOf('k2')];
  let svc = await startTestService({ ...env, ENCRYPTION_KEYS: k1 });
  const { accountId, key } = await freshTenant(svc.url);
  const sub = await sinkSubscription(svc, key, ['order.updated']);
  // The simulator refuses any other credentials: a shipment made proves they were opened.
  await putCourier(svc, accountId, 'courier_a', { enabled: true, credentials: SIMULATED_COURIERS.get('courier_a')!.demoCredentials });
  const idem = crypto.randomUUID();
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const shipped = await http(svc.url, 'POST', '/api/v1/shipments', {
    token: key,
    body: { order_id: order.id },
    headers: { 'Idempotency-Key': idem },
  });
  assert.equal(shipped.status, 201, shipped.text);
  assert.deepEqual(await keyIdsInUse(svc), new Set(['k1']));
  await svc.close();

  // The new key first, the old one still there: everything sealed under k1 opens, new values are sealed under k2.
  svc = await startTestService({ ...env, ENCRYPTION_KEYS: `${k2},${k1}` });
  await assertDeliveryVerifies(svc, key, sub.id, sub.secret);
  const replay = await http(svc.url, 'POST', '/api/v1/shipments', { token: key, body: { order_id: order.id }, headers: { 'Idempotency-Key': idem } });
  assert.equal(replay.text, shipped.text, 'the stored answer opens under the old key');
  const second = await ship(svc, key, { order_id: (await checkoutWith(svc, accountId, 'courier_a')).id });
  assert.ok(second.tracking_number, 'the courier accepted the credentials sealed under k1');
  const other = await sinkSubscription(svc, key, ['order.updated']);
  assert.deepEqual(await keyIdsInUse(svc), new Set(['k1', 'k2']));
  await svc.close();

  const resealed = await merx(['secrets', 'reseal'], { ...env, ENCRYPTION_KEYS: `${k2},${k1}` });
  assert.equal(resealed.code, 0, resealed.stderr);
  const report = JSON.parse(resealed.stdout);
  assert.equal(report.key_id, 'k2');
  assert.ok(report.resealed['webhook_subscriptions.secret'] >= 1 && report.resealed['courier_integrations.credentials'] >= 1, resealed.stdout);

  // The old key gone: everything still works.
  svc = await startTestService({ ...env, ENCRYPTION_KEYS: k2 });
  assert.deepEqual(await keyIdsInUse(svc), new Set(['k2']));
  await assertDeliveryVerifies(svc, key, sub.id, sub.secret);
  await assertDeliveryVerifies(svc, key, other.id, other.secret);
  const again = await http(svc.url, 'POST', '/api/v1/shipments', { token: key, body: { order_id: order.id }, headers: { 'Idempotency-Key': idem } });
  assert.equal(again.text, shipped.text);
  await ship(svc, key, { order_id: (await checkoutWith(svc, accountId, 'courier_a')).id });
  await svc.close();

  await assert.rejects(startTestService({ ...env, ENCRYPTION_KEYS: k1 }), (err: Error) => {
    assert.match(err.message, /sealed with key "k2"/);
    assert.match(err.message, /ENCRYPTION_KEYS/);
    return true;
  });
});

test('without ENCRYPTION_KEYS: a generated key (PGlite: in DATA_DIR, 0600; PostgreSQL: in the database, for every instance) serves every start; plaintext rows from before are sealed at start', async (t) => {
  const { env, dir } = await withDatabase(t);
  const unset = { ...env, ENCRYPTION_KEYS: '' };
  let svc = await startTestService(unset);
  const file = path.join(dir, KEY_FILE);
  let generatedKeyId: string;
  if (env.DATABASE_URL) {
    assert.ok(!fs.existsSync(file), 'PostgreSQL: no key file, whatever the directory');
    const { rows } = await svc.service.db.query<{ value: string }>(`SELECT value FROM settings WHERE key = 'encryption_key'`);
    generatedKeyId = rows[0].value.split(':')[0];
  } else {
    assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'the key file is readable by its owner only');
    generatedKeyId = fs.readFileSync(file, 'utf8').split(':')[0];
  }
  const { key } = await freshTenant(svc.url);
  const sub = await sinkSubscription(svc, key, ['order.updated']);
  assert.deepEqual(await keyIdsInUse(svc), new Set([generatedKeyId]));
  if (env.DATABASE_URL) {
    // A second instance, started from another directory, opens what the first sealed.
    const twin = await startTestService({ ...unset, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'merx-twin-')) });
    await assertDeliveryVerifies(twin, key, sub.id, sub.secret);
    await twin.close();
  }
  // A row as it was before migration 020: plaintext, and the start step not yet run.
  await svc.service.db.query('UPDATE webhook_subscriptions SET secret = $2 WHERE id = $1', [sub.id, sub.secret]);
  await svc.service.db.query(`DELETE FROM settings WHERE key = 'plaintext_secrets_sealed'`);
  await svc.close();

  svc = await startTestService(unset);
  const { rows } = await svc.service.db.query<{ secret: string }>('SELECT secret FROM webhook_subscriptions WHERE id = $1', [sub.id]);
  assert.equal(keyIdOf(rows[0].secret), generatedKeyId, 'sealed at start under the generated key');
  await assertDeliveryVerifies(svc, key, sub.id, sub.secret);
  await svc.close();

  // Another key, and not the generated one: stopped at start, not at the first delivery.
  await assert.rejects(startTestService({ ...env, ENCRYPTION_KEYS: keyOf('other') }), /ENCRYPTION_KEYS does not hold/);
});

test('operator token: a generated one is stored as its hash, kept in DATA_DIR (0600) for the next start, and a plaintext row from before becomes its hash', async (t) => {
  const { env, dir } = await withDatabase(t);
  const generated = { ...env, ADMIN_TOKEN: '' };
  let svc = await startTestService(generated);
  const token = svc.service.adminToken;
  assert.equal(token.source, 'generated');
  assert.match(token.shown ?? '', /^merx_admin_[A-Za-z0-9_-]{43}$/);
  const file = path.join(dir, TOKEN_FILE);
  assert.equal(fs.readFileSync(file, 'utf8').trim(), token.shown);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  const settings = async () => (await svc.service.db.query<{ key: string; value: string }>('SELECT key, value FROM settings')).rows;
  const stored = (await settings()).find((r) => r.key === 'admin_token_sha256');
  assert.equal(stored?.value, crypto.createHash('sha256').update(token.shown!).digest('hex'));
  assert.ok(!(await settings()).some((r) => r.value.includes(token.shown!)), 'no plaintext token in settings');
  const accounts = (t: string) => http(svc.url, 'GET', '/admin/api/accounts', { token: t });
  assert.equal((await accounts(token.shown!)).status, 200);
  assert.equal((await accounts(`${token.shown!.slice(0, -1)}x`)).status, 401);
  await svc.close();

  svc = await startTestService(generated);
  assert.equal(svc.service.adminToken.shown, token.shown, 'the next start shows the same token again');
  // As a database from before issue 27 holds it: in plain text, and no file yet.
  const legacy = `merx_admin_${crypto.randomBytes(24).toString('base64url')}`;
  await svc.service.db.query(`DELETE FROM settings WHERE key = 'admin_token_sha256'`);
  await svc.service.db.query(`INSERT INTO settings (key, value) VALUES ('admin_token', $1)`, [legacy]);
  fs.rmSync(file);
  await svc.close();

  svc = await startTestService(generated);
  assert.equal(svc.service.adminToken.shown, legacy, 'the old token still works and is shown');
  assert.equal(fs.readFileSync(file, 'utf8').trim(), legacy);
  const rows = await settings();
  assert.ok(!rows.some((r) => r.key === 'admin_token' || r.value.includes(legacy)), JSON.stringify(rows));
  assert.equal((await accounts(legacy)).status, 200);
  await svc.close();

  // ADMIN_TOKEN set: nothing shown, and the generated token's hash is not what checks it.
  svc = await startTestService({ ...env, ADMIN_TOKEN: 'configured-operator-token-123' });
  assert.deepEqual({ source: svc.service.adminToken.source, shown: svc.service.adminToken.shown }, { source: 'ADMIN_TOKEN', shown: null });
  assert.equal((await accounts('configured-operator-token-123')).status, 200);
  assert.equal((await accounts(legacy)).status, 401);
  await svc.close();
});
