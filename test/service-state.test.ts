// Issue 43: what a service keeps in memory (its document cache, its keyring,
// its answer buffers) is its own, made when it starts, so two services in one
// process (tests start several; so could an embedding program) are
// independent: one's cached documents never answer the other's reads, and
// each seals under its own keys.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { Sql } from '../src/platform/db/db.ts';
import { loadCursorSeal } from '../src/platform/contract/cursor-seal.ts';
import { listOrders } from '../src/modules/orders/queries.ts';
import { ENCRYPTION_KEYS, freshTenant, startTestService, type TestService } from './helpers/harness.ts';

const keyA = `a:${crypto.randomBytes(32).toString('base64')}`;
const keyB = `b:${crypto.randomBytes(32).toString('base64')}`;
let one: TestService;
let other: TestService;
before(async () => {
  // On PostgreSQL both use the file's database: the second holds the first's key too, as a rotation would.
  one = await startTestService({ ENCRYPTION_KEYS: `${keyA},${ENCRYPTION_KEYS}` });
  other = await startTestService({ ENCRYPTION_KEYS: `${keyB},${keyA},${ENCRYPTION_KEYS}` });
});
after(async () => {
  await one?.close();
  await other?.close();
});

test('two services in one process each seal with their own keyring', () => {
  const a = one.service.db.keyring;
  const b = other.service.db.keyring;
  assert.notEqual(a, b);
  const sealedByA = a.seal('whsec_one');
  const sealedByB = b.seal('whsec_other');
  assert.match(sealedByA, /^v1\.a\./);
  assert.match(sealedByB, /^v1\.b\./, 'the second service starting did not replace the first one keys');
  assert.equal(b.open(sealedByA), 'whsec_one');
  assert.throws(() => a.open(sealedByB), /sealed with key "b"/, 'the first service does not hold the second one key');
});

test('two services in one process cache the documents their own reads were answered with', async () => {
  const t = await freshTenant(one.url);
  await t.op.call('POST', `/accounts/${t.accountId}/seed`, { orders: 6, products: 2, customers: 3 });
  const db = one.service.db;
  const reads: Array<{ text: string; params: unknown[] }> = [];
  const sql: Sql = Object.create(db);
  sql.query = async (text, params = [], options) => {
    if (text.includes('view_etag')) reads.push({ text, params: params.slice(0, -1) });
    return db.query(text, params, options);
  };
  await listOrders(sql, t.accountId, { limit: 50 }, await loadCursorSeal(db));
  const { text, params } = reads[reads.length - 1];
  assert.ok(one.service.db.documentCache.lookup(text, params).documents.size >= 6, 'the first service cached its page');
  assert.notEqual(one.service.db.documentCache, other.service.db.documentCache);
  assert.equal(other.service.db.documentCache.lookup(text, params).documents.size, 0, 'the second service cached nothing of it');
  assert.notEqual(one.service.services.answerBuffers, other.service.services.answerBuffers);
});
