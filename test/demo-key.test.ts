// Issue 41 item 1: the demo key survives restarts of the same data (kept in
// DATA_DIR like the generated operator token), and the banner says what it is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLikeNpmStart } from './helpers/npm-start.ts';
import { isolatedDatabase } from './helpers/webhooks.ts';

const get = async (base: string, key: string, path: string) => {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return res.json();
};

/** Issue 41 item 7: shipped and delivered demo orders have real waybills; some products track stock, one is low; natural order. */
async function demoDataTellsTheTruth(base: string, key: string) {
  const shipped = (await get(base, key, '/api/v1/orders?status=shipped&limit=200')).data;
  const delivered = (await get(base, key, '/api/v1/orders?status=delivered&limit=200')).data;
  assert.ok(shipped.length >= 1 && delivered.length >= 1, `shipped ${shipped.length}, delivered ${delivered.length}`);
  for (const order of [...shipped, ...delivered]) {
    assert.ok(order.shipment, `order ${order.number} (${order.status}) has its shipment`);
    assert.equal(order.tracking_number, order.shipment.tracking_number, `order ${order.number}: the tracking number is the waybill's`);
    const shipment = (await get(base, key, `/api/v1/shipments/${order.shipment.id}`)).data;
    assert.equal(shipment.status, order.status === 'delivered' ? 'delivered' : 'in_transit');
    assert.ok(shipment.status_events.length >= 1, 'the courier reported what happened');
  }
  for (const status of ['returned']) {
    assert.equal((await get(base, key, `/api/v1/orders?status=${status}&limit=200`)).data.filter((o: any) => !o.shipment).length, 0);
  }
  const stock = await get(base, key, '/api/v1/inventory/stock');
  const tracked = stock.data.filter((p: any) => p.tracked);
  assert.ok(tracked.length >= 5, `${tracked.length} tracked products`);
  assert.equal(tracked.filter((p: any) => p.low).length, 1, 'one product below its threshold');
  for (const product of tracked) {
    const movements = (await get(base, key, `/api/v1/inventory/movements?product_id=${product.product_id}&limit=100`)).data;
    assert.ok(movements.some((m: any) => m.type === 'delivery'));
    assert.equal(
      movements.reduce((sum: number, m: any) => sum + m.qty, 0),
      product.stock_quantity,
      `${product.name}: the ledger sums to the stock`,
    );
  }
  // Natural order: "Product 2" before "Product 10".
  const numbers = stock.data.map((p: any) => Number(/\d+$/.exec(p.name)?.[0]));
  assert.deepEqual(
    numbers,
    [...numbers].sort((a, b) => a - b),
    stock.data.map((p: any) => p.name).join(', '),
  );
}

test('the demo account tells the truth (real waybills, tracked stock, natural order); a restart of the same data prints the same demo key, which keeps working; once revoked, the next start issues a new one', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-demo-key-'));
  const database = process.env.DATABASE_URL ? await isolatedDatabase() : null;
  const databaseEnv = database?.env;
  try {
    const first = await startLikeNpmStart({}, { dataDir, databaseEnv });
    try {
      await demoDataTellsTheTruth(first.base, first.key);
    } finally {
      await first.stop();
    }
    assert.match(
      first.output(),
      /Demo API key\s+merx_\S+\s+\(the demo account's API key, fulfilment scopes; new, kept in .*demo-key for the next starts\)/,
    );
    const file = path.join(dataDir, 'demo-key');
    assert.equal(fs.readFileSync(file, 'utf8').trim(), first.key);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'readable by its owner only');

    const second = await startLikeNpmStart({}, { dataDir, databaseEnv });
    try {
      assert.equal(second.key, first.key);
      assert.equal(second.accountId, first.accountId);
      assert.match(second.output(), /the same as at the last start/);
      const res = await fetch(`${second.base}/api/v1/orders?limit=1`, { headers: { authorization: `Bearer ${first.key}` } });
      assert.equal(res.status, 200, await res.text());
      // The operator revokes it: the next start issues a new one (and says so).
      const keys = await (
        await fetch(`${second.base}/admin/api/accounts/${second.accountId}/keys`, { headers: { authorization: `Bearer ${second.token}` } })
      ).json();
      const live = keys.data.filter((k: any) => k.revoked_at === null && k.prefix === first.key.slice(0, 11));
      assert.equal(live.length, 1);
      const revoked = await fetch(`${second.base}/admin/api/keys/${live[0].id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${second.token}` },
      });
      assert.equal(revoked.status, 200);
    } finally {
      await second.stop();
    }
    const third = await startLikeNpmStart({}, { dataDir, databaseEnv });
    await third.stop();
    assert.notEqual(third.key, first.key);
    assert.match(third.output(), /; new, kept in/);
    assert.equal(fs.readFileSync(file, 'utf8').trim(), third.key);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
    await database?.drop();
  }
});
