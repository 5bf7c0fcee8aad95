import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

test('healthz answers and every response carries X-Deploy-SHA', async () => {
  const res = await http(svc.url, 'GET', '/healthz');
  assert.equal(res.status, 200);
  // With read replicas (issue 32) /healthz lists them too (test/read-replicas.test.ts).
  const { replicas: _replicas, ...body } = res.body;
  assert.deepEqual(body, process.env.REDIS_URL ? { ok: true, redis: 'connected' } : { ok: true });
  assert.equal(res.headers.get('x-deploy-sha'), 'abcdef0123');
});

test('a checkout order is listed with the fulfilment key', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const res = await http(svc.url, 'GET', '/api/v1/orders', { token: key });
  assert.equal(res.status, 200);
  assert.deepEqual(
    res.body.data.map((o: any) => o.id),
    [order.id],
  );
  assert.equal(res.body.has_more, false);
  assert.equal(res.body.next_cursor, null);
});
