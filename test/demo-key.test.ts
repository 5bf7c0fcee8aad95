// Issue 41 item 1: the demo key survives restarts of the same data (kept in
// DATA_DIR like the generated operator token), and the banner says what it is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLikeNpmStart } from './helpers/npm-start.ts';
import { isolatedDatabase } from './helpers/webhooks.ts';

test('a restart of the same data prints the same demo key, which keeps working; once revoked, the next start issues a new one', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-demo-key-'));
  const database = process.env.DATABASE_URL ? await isolatedDatabase() : null;
  const databaseUrl = database?.env.DATABASE_URL;
  try {
    const first = await startLikeNpmStart({}, { dataDir, databaseUrl });
    await first.stop();
    assert.match(first.output(), /Demo API key\s+merx_\S+\s+\(the demo account's API key, fulfilment scopes; new, kept in .*demo-key for the next starts\)/);
    const file = path.join(dataDir, 'demo-key');
    assert.equal(fs.readFileSync(file, 'utf8').trim(), first.key);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'readable by its owner only');

    const second = await startLikeNpmStart({}, { dataDir, databaseUrl });
    try {
      assert.equal(second.key, first.key);
      assert.equal(second.accountId, first.accountId);
      assert.match(second.output(), /the same as at the last start/);
      const res = await fetch(`${second.base}/api/v1/orders?limit=1`, { headers: { authorization: `Bearer ${first.key}` } });
      assert.equal(res.status, 200, await res.text());
      // The operator revokes it: the next start issues a new one (and says so).
      const keys = await (await fetch(`${second.base}/admin/api/accounts/${second.accountId}/keys`, { headers: { authorization: `Bearer ${second.token}` } })).json();
      const live = keys.data.filter((k: any) => k.revoked_at === null && k.prefix === first.key.slice(0, 11));
      assert.equal(live.length, 1);
      const revoked = await fetch(`${second.base}/admin/api/keys/${live[0].id}`, { method: 'DELETE', headers: { authorization: `Bearer ${second.token}` } });
      assert.equal(revoked.status, 200);
    } finally {
      await second.stop();
    }
    const third = await startLikeNpmStart({}, { dataDir, databaseUrl });
    await third.stop();
    assert.notEqual(third.key, first.key);
    assert.match(third.output(), /; new, kept in/);
    assert.equal(fs.readFileSync(file, 'utf8').trim(), third.key);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
    await database?.drop();
  }
});
