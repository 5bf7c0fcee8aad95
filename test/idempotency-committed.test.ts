// Issue 27, item 3: committed means replayable. An Idempotency-Key's answer is
// stored in the transaction that commits the request's effect, so a request
// whose connection drops right after its commit still has an answer for its
// retry. Here the database refuses (a trigger on this account's keys) every
// write of an answer that comes after its effect was committed, which is
// what a dropped connection does to a request that stores it later: the
// retry must be a replay, not a key locked for 24 hours.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';
import { rpc } from './helpers/mcp.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.close();
});

/** Refuses, for one account, storing an answer on a key whose effect already committed; returns the way to remove it. */
async function refuseLateAnswers(accountId: string): Promise<() => Promise<void>> {
  const name = `merx_test_late_answer_${crypto.randomBytes(4).toString('hex')}`;
  await svc.service.db.exec(`
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'the answer was lost after the commit'; END $$;
    CREATE TRIGGER ${name} BEFORE UPDATE ON idempotency_keys FOR EACH ROW
      WHEN (OLD.account_id = '${accountId}' AND OLD.effect_committed AND OLD.response_status IS NULL AND NEW.response_status IS NOT NULL)
      EXECUTE FUNCTION ${name}();`);
  return () => svc.service.db.exec(`DROP TRIGGER ${name} ON idempotency_keys; DROP FUNCTION ${name}();`);
}

test('a committed write is replayable even when nothing could be stored after its commit (REST and MCP)', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const remove = await refuseLateAnswers(accountId);
  try {
    const idempotencyKey = `late-${crypto.randomUUID()}`;
    const patch = () =>
      http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, {
        token: key,
        body: { admin_notes: 'packed' },
        headers: { 'Idempotency-Key': idempotencyKey },
      });
    const first = await patch();
    assert.equal(first.status, 200, first.text);
    const again = await patch();
    assert.equal(again.status, 200, `the retry is a replay, not a locked key: ${again.text}`);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.text, first.text, 'the same bytes');
    assert.equal(again.headers.get('etag'), first.headers.get('etag'));

    const toolKey = `late-mcp-${crypto.randomUUID()}`;
    const call = () =>
      rpc(svc.url, key, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'update_order', arguments: { id: order.id, admin_notes: 'shipped soon' }, _meta: { idempotency_key: toolKey } },
      });
    const tool = await call();
    assert.equal(tool.body.result.isError, false, tool.text);
    const toolAgain = await call();
    assert.equal(toolAgain.body.result.isError, false, toolAgain.text);
    assert.equal(toolAgain.body.result._meta?.idempotent_replayed, true);
    assert.deepEqual(toolAgain.body.result.structuredContent, tool.body.result.structuredContent);

    // Exactly one order.updated per write: nothing ran twice.
    const { rows } = await svc.service.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM events WHERE account_id = $1 AND event = 'order.updated'",
      [accountId],
    );
    assert.equal(rows[0].n, 2);
  } finally {
    await remove();
  }
});
