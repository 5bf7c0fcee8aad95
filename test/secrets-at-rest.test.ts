// Issue 27, secrets at rest: webhook secrets (current, previous, retired),
// courier credentials and push tokens, and the bodies of stored idempotent
// answers are sealed (AES-256-GCM under a key id); the operator token is kept
// as its SHA-256. Read here with raw SQL, the way someone holding a copy of
// the database would, and used over HTTP, the way the features use them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, freshTenant, http, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { rpc } from './helpers/mcp.ts';
import { sinkCaptures } from './helpers/webhooks.ts';
import { verifyMerxSignature } from '../src/modules/webhooks/signing/signature.ts';
import { checkoutWith, push, pushTokenOf, putCourier, ship, shipmentNow } from './helpers/shipments.ts';
import { SIMULATED_COURIERS } from '../src/couriers/simulator/simulated-couriers.ts';
import { SEALED_COLUMNS } from '../src/platform/edge/sealed-columns.ts';
import { isSealed } from '../src/platform/edge/secret-box.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(() => svc.close());

/** Every text in every row of every table that has this account's rows, as PostgreSQL writes the row. */
async function accountRows(accountId: string): Promise<string[]> {
  const { rows: tables } = await svc.service.db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.columns WHERE column_name = 'account_id' AND table_schema = current_schema()`,
  );
  const texts: string[] = [];
  for (const { table_name: table } of tables) {
    const { rows } = await svc.service.db.query<{ row: string }>(`SELECT t::text AS row FROM ${table} t WHERE account_id = $1`, [accountId]);
    texts.push(...rows.map((r) => r.row));
  }
  return texts;
}

test('raw SQL finds no plaintext secret: webhook secrets, courier credentials and push token, idempotent answers (REST and MCP), settings', async () => {
  const { accountId, key } = await freshTenant(svc.url);
  // A subscription made with an Idempotency-Key: its answer, with the secret, is stored for replays.
  const idem = crypto.randomUUID();
  const create = () =>
    http(svc.url, 'POST', '/api/v1/webhooks', {
      token: key,
      body: { url: 'http://localhost/api/webhooks/sink', events: ['order.updated'] },
      headers: { 'Idempotency-Key': idem },
    });
  const created = await create();
  assert.equal(created.status, 201, created.text);
  const first: string = created.body.secret;
  const id: string = created.body.data.id;
  const replayed = await create();
  assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
  assert.equal(replayed.text, created.text, 'the replay opens the sealed answer byte for byte');

  // Two rotations: current, previous and one retired secret.
  const rotate = async () => {
    const res = await http(svc.url, 'POST', `/api/v1/webhooks/${id}/rotate-secret`, { token: key, body: {} });
    assert.equal(res.status, 200, res.text);
    return res.body.secret as string;
  };
  const second = await rotate();
  const third = await rotate();

  // The same through MCP, replayed.
  const mcpCall = () =>
    rpc(svc.url, key, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'create_webhook',
        arguments: { url: 'http://localhost/api/webhooks/sink', events: ['order.created'] },
        _meta: { idempotency_key: `mcp-${idem}` },
      },
    });
  const viaMcp = await mcpCall();
  const mcpSecret: string = viaMcp.body.result.structuredContent.secret;
  assert.match(mcpSecret, /^[0-9a-f]{64}$/, viaMcp.text);
  const mcpAgain = await mcpCall();
  assert.deepEqual(mcpAgain.body.result._meta, { idempotent_replayed: true, request_id: mcpAgain.body.result._meta.request_id });
  assert.equal(mcpAgain.body.result.structuredContent.secret, mcpSecret);

  // Courier credentials that the courier checks, and the push token it is given.
  const credentials = SIMULATED_COURIERS.get('courier_c')!.demoCredentials;
  await putCourier(svc, accountId, 'courier_c', { enabled: true, credentials });
  const shipment = await ship(svc, key, { order_id: (await checkoutWith(svc, accountId, 'courier_c')).id });
  const pushToken = await pushTokenOf(svc, shipment.tracking_number);
  const pushed = await push(svc, pushToken, {
    barcode: shipment.tracking_number,
    events: [{ occurred_at: new Date().toISOString(), state: 'on_the_way', note: 'x' }],
  });
  assert.equal(pushed.status, 200, `the push token is found by its hash: ${pushed.text}`);
  assert.equal((await shipmentNow(svc, key, shipment.id)).status, 'in_transit');

  const secrets = { first, second, third, mcpSecret, pushToken, ...credentials };
  for (const [name, value] of Object.entries(secrets)) assert.ok(value.length >= 8, `${name} is a real secret`);

  // Each sealed column holds sealed values for this account, and none holds a secret.
  for (const { table, column } of SEALED_COLUMNS) {
    const { rows } = await svc.service.db.query<{ value: string | null }>(`SELECT ${column}::text AS value FROM ${table} WHERE account_id = $1`, [
      accountId,
    ]);
    const values = rows.map((r) => r.value).filter((v): v is string => v !== null);
    assert.ok(values.length > 0, `${table}.${column} has values for the account`);
    for (const value of values) assert.ok(isSealed(value), `${table}.${column} is sealed: ${value.slice(0, 40)}`);
  }
  const { rows: stored } = await svc.service.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM idempotency_keys WHERE account_id = $1 AND key = ANY($2) AND response_body IS NOT NULL`,
    [accountId, [idem, `mcp-${idem}`]],
  );
  assert.equal(stored[0].n, 2, 'both idempotent answers are stored');

  // Nowhere in any row of the account, nor in settings.
  const everything = [
    ...(await accountRows(accountId)),
    ...(await svc.service.db.query<{ row: string }>('SELECT s::text AS row FROM settings s')).rows.map((r) => r.row),
  ];
  for (const [name, value] of Object.entries(secrets)) {
    const found = everything.find((row) => row.includes(value));
    assert.equal(found, undefined, `${name} in plain text: ${found?.slice(0, 200)}`);
  }
  assert.ok(!everything.some((row) => row.includes(ADMIN_TOKEN)), 'the operator token is stored nowhere');

  // The features still read them: a test delivery is signed with the two live secrets.
  const tested = await http(svc.url, 'POST', `/api/v1/webhooks/${id}/test`, { token: key });
  assert.equal(tested.body.data.status, 'delivered', tested.text);
  const [capture] = await sinkCaptures(svc.url, id);
  for (const live of [third, second])
    assert.ok(verifyMerxSignature(capture.body, capture.headers['x-merx-signature'], live), 'signed with each live secret');
  assert.ok(!verifyMerxSignature(capture.body, capture.headers['x-merx-signature'], first), 'not with the retired one');
  const verdict = await http(svc.url, 'POST', `/api/v1/webhooks/${id}/verify-signature`, {
    token: key,
    body: { headers: capture.headers, body: capture.body },
  });
  assert.equal(verdict.body.data.diagnosis, 'ok', verdict.text);
});

test('a value sealed under one key cannot be moved under another id, and a changed byte is refused', async () => {
  const { SecretBox } = await import('../src/platform/edge/secret-box.ts');
  const a = new SecretBox([{ id: 'a', key: crypto.randomBytes(32) }]);
  const sealed = a.seal('whsec');
  assert.notEqual(a.seal('whsec'), sealed, 'a fresh IV each time');
  assert.equal(a.open(sealed), 'whsec');
  const parts = sealed.split('.');
  const b = new SecretBox([{ id: 'b', key: a.keys[0].key }]);
  assert.throws(() => b.open(['v1', 'b', ...parts.slice(2)].join('.')), 'the key id is authenticated');
  const flipped = Buffer.from(parts[4], 'base64url');
  flipped[0] ^= 1;
  assert.throws(() => a.open([...parts.slice(0, 4), flipped.toString('base64url')].join('.')), 'tampering is detected');
  assert.throws(() => b.open(sealed), /key "a"/, 'an unknown key id says which key');
});

test('ENCRYPTION_KEYS is checked at start: a bad entry stops it with a message naming the variable', async () => {
  const { loadConfig, ConfigError } = await import('../src/config.ts');
  const good = crypto.randomBytes(32).toString('base64');
  const refused = (value: string, why: RegExp) =>
    assert.throws(
      () => loadConfig({ ENCRYPTION_KEYS: value }),
      (err: Error) => err instanceof ConfigError && /^ENCRYPTION_KEYS /.test(err.message) && why.test(err.message),
    );
  refused('k1', /<key id>:<base64 of 32 bytes>/);
  refused(`k.1:${good}`, /<key id>/);
  refused(`k1:${crypto.randomBytes(16).toString('base64')}`, /key "k1" must be 32 bytes/);
  refused(`k1:${good},k1:${good}`, /appears twice/);
  assert.equal(
    loadConfig({ DATABASE_URL: 'postgres://x@h/db', DATA_DIR: 'memory://' }).encryptionKeys,
    null,
    'PostgreSQL keeps a generated key in the database',
  );
  const config = loadConfig({ ENCRYPTION_KEYS: ` k2:${good}, k1:${crypto.randomBytes(32).toString('base64url')} ` });
  assert.deepEqual(
    config.encryptionKeys?.map((k) => k.id),
    ['k2', 'k1'],
  );
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://x@h/db' }).encryptionKeys, null, 'only DATABASE_URL set: the DATA_DIR key, no error');
});
