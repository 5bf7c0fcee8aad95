// EXTENSIONS 7, approvals: a key issued with writes "approval" asks instead
// of writing (202 + Approval; MCP result with _meta.approval_id); the
// operator approves or rejects; the repeated request with Merx-Approval
// (MCP _meta.approval_id) runs exactly once, only for the same operation
// and arguments, only while the target's ETag is unchanged; every refusal in
// its stated order, on REST and MCP; Idempotency-Key finds the same approval.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, outboxEvents, operator, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { assertRefusal, rpc } from './helpers/mcp.ts';
import { checkoutWith, shipTenant } from './helpers/shipments.ts';
import { createWebhook } from './helpers/webhooks.ts';

let svc: TestService;
before(async () => {
  // 127.0.0.1 takes a subscription whose test run is refused before anything is sent.
  svc = await startTestService({ WORKERS: '0', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
});
after(async () => {
  await svc?.close();
});

const op = () => operator(svc.url);

/** The contract's error shape, with details.reason when given. */
function assertErr(res: Awaited<ReturnType<typeof http>>, status: number, code: string, reason?: string) {
  const error = assertError(res, status, code);
  if (reason !== undefined) assert.equal(error.details?.reason, reason, res.text);
  return error;
}

/** A tenant with a direct key and an approval key (same scopes), and an order. */
async function agentTenant() {
  const t = await shipTenant(svc);
  const issued = await op().call('POST', `/accounts/${t.accountId}/keys`, { name: 'agent', preset: 'fulfilment', writes: 'approval' });
  assert.equal(issued.data.writes, 'approval');
  const order = await checkoutWith(svc, t.accountId, 'courier_a');
  return { ...t, agent: issued.key as string, order };
}

const patchOrder = (key: string, id: string, body: unknown, headers: Record<string, string> = {}) =>
  http(svc.url, 'PATCH', `/api/v1/orders/${id}`, { token: key, body, headers });
const getOrder = (key: string, id: string) => http(svc.url, 'GET', `/api/v1/orders/${id}`, { token: key });
const approve = (id: string, body: Record<string, unknown> = {}) => op().call('POST', `/approvals/${id}/approve`, body);
const reject = (id: string, body: Record<string, unknown> = {}) => op().call('POST', `/approvals/${id}/reject`, body);

async function asked(agent: string, orderId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await patchOrder(agent, orderId, body, headers);
  assert.equal(res.status, 202, res.text);
  return res;
}

async function mcpCall(key: string, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) {
  const res = await rpc(svc.url, key, {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.error, undefined, res.text);
  return res.body.result;
}

test('keys are issued direct by default and with writes "approval" on request; the list shows it', async () => {
  const t = await agentTenant();
  const keys = (await op().call('GET', `/accounts/${t.accountId}/keys`)).data;
  assert.deepEqual(keys.map((k: any) => k.writes).sort(), ['approval', 'direct']);
  const bad = await http(svc.url, 'POST', `/admin/api/accounts/${t.accountId}/keys`, {
    token: 'test-operator-token-0123456789',
    body: { name: 'x', preset: 'fulfilment', writes: 'maybe' },
  });
  assertErr(bad, 400, 'validation_failed');
});

test('REST: a write by an approval key answers 202 with the approval (preview, effects, resource_etag) and performs nothing; reads and dry runs work as usual', async () => {
  const t = await agentTenant();
  const before = await getOrder(t.agent, t.order.id);
  assert.equal(before.status, 200, 'reads work');
  const eventsBefore = await outboxEvents(svc.service, t.accountId);
  const dry = await patchOrder(t.agent, t.order.id, { status: 'confirmed' }, { 'X-Merx-Dry-Run': '1' });
  assert.equal(dry.status, 200, dry.text);
  assert.equal(dry.body.dry_run, true);

  const res = await asked(t.agent, t.order.id, { status: 'confirmed', admin_notes: 'agent was here' });
  const approval = res.body.data;
  assert.equal(res.headers.get('location'), `/api/v1/approvals/${approval.id}`);
  assert.deepEqual(Object.keys(res.body), ['data']);
  assert.equal(approval.status, 'pending');
  assert.equal(approval.operation, 'update_order');
  assert.deepEqual(approval.arguments, { id: t.order.id, status: 'confirmed', admin_notes: 'agent was here' });
  assert.equal(approval.preview.dry_run, true);
  assert.equal(approval.preview.changes.status, 'confirmed');
  assert.ok(approval.effects.includes('order.status_changed to 0 subscriptions'), approval.effects.join('; '));
  assert.ok(approval.effects.includes('order.updated to 0 subscriptions'), approval.effects.join('; '));
  assert.equal(approval.resource_etag, before.headers.get('etag'));
  assert.equal(Date.parse(approval.expires_at) - Date.parse(approval.requested_at), 24 * 3600 * 1000);
  for (const field of ['decided_at', 'decided_by', 'reason', 'executed_at', 'result_status']) assert.equal(approval[field], null, field);

  assert.deepEqual((await getOrder(t.key, t.order.id)).body, before.body, 'nothing changed');
  assert.deepEqual(await outboxEvents(svc.service, t.accountId), eventsBefore, 'no event');

  const read = await http(svc.url, 'GET', `/api/v1/approvals/${approval.id}`, { token: t.agent });
  assert.equal(read.status, 200, read.text);
  assert.deepEqual(read.body.data, approval);
  assertErr(await http(svc.url, 'GET', `/api/v1/approvals/${approval.id}`, { token: t.key }), 404, 'not_found');
  assertErr(await http(svc.url, 'GET', `/api/v1/approvals/not-an-id`, { token: t.agent }), 404, 'not_found');

  const pending = (await op().call('GET', `/accounts/${t.accountId}/approvals?status=pending`)).data;
  assert.deepEqual(
    pending.map((a: any) => a.id),
    [approval.id],
  );
  assert.equal(pending[0].key_prefix, t.agent.slice(0, 11));
  assert.equal(pending[0].key_name, 'agent', 'the key by the name it was issued under (issue 41)');
  assert.equal((await op().call('GET', `/approvals/${approval.id}`)).data.key_name, 'agent');
});

test("REST: the approved request runs exactly once, for the same arguments only, with the operation's own answer", async () => {
  const t = await agentTenant();
  const approval = (await asked(t.agent, t.order.id, { admin_notes: 'approved note' })).body.data;
  const withApproval = { 'Merx-Approval': approval.id };

  assertErr(await patchOrder(t.agent, t.order.id, { admin_notes: 'approved note' }, withApproval), 409, 'conflict', 'approval_pending');
  const decided = await approve(approval.id, { decided_by: 'ana@shop.example', reason: 'fine' });
  assert.equal(decided.data.status, 'approved');
  assert.equal(decided.data.decided_by, 'ana@shop.example');
  assertErr(
    await http(svc.url, 'POST', `/admin/api/approvals/${approval.id}/reject`, { token: 'test-operator-token-0123456789', body: {} }),
    409,
    'conflict',
  );

  // Other arguments, another operation: refused, nothing runs.
  assertErr(await patchOrder(t.agent, t.order.id, { admin_notes: 'something else' }, withApproval), 409, 'conflict', 'approval_mismatch');
  const otherOp = await http(svc.url, 'POST', '/api/v1/shipments', { token: t.agent, body: { order_id: t.order.id }, headers: withApproval });
  assertErr(otherOp, 409, 'conflict', 'approval_mismatch');
  // A direct key cannot use another key's approval.
  assertErr(await patchOrder(t.key, t.order.id, { admin_notes: 'approved note' }, withApproval), 404, 'not_found');

  // The same order of keys in the body, or spelled differently, is the same request (compared by meaning).
  const eventsBefore = (await outboxEvents(svc.service, t.accountId)).length;
  const results = await Promise.all([0, 1, 2, 3].map(() => patchOrder(t.agent, t.order.id, { admin_notes: 'approved note' }, withApproval)));
  const ok = results.filter((r) => r.status === 200);
  assert.equal(ok.length, 1, results.map((r) => r.status).join(','));
  for (const r of results.filter((x) => x.status !== 200)) assertErr(r, 409, 'conflict', 'approval_used');
  assert.equal(ok[0].body.data.admin_notes, 'approved note');
  assert.equal(ok[0].headers.get('etag'), (await getOrder(t.key, t.order.id)).headers.get('etag'));
  assert.equal((await outboxEvents(svc.service, t.accountId)).length, eventsBefore + 1, 'one order.updated');

  const done = (await http(svc.url, 'GET', `/api/v1/approvals/${approval.id}`, { token: t.agent })).body.data;
  assert.equal(done.status, 'executed');
  assert.equal(done.result_status, 200);
  assert.ok(done.executed_at);
  assertErr(await patchOrder(t.agent, t.order.id, { admin_notes: 'approved note' }, withApproval), 409, 'conflict', 'approval_used');
});

test('REST: refusals in their stated order: 404, rejected 403, used, expired, pending, mismatch, then 412 when the target changed', async () => {
  const t = await agentTenant();
  const body = { admin_notes: 'order of refusals' };
  assertErr(await patchOrder(t.agent, t.order.id, body, { 'Merx-Approval': crypto.randomUUID() }), 404, 'not_found');
  assertErr(await patchOrder(t.agent, t.order.id, body, { 'Merx-Approval': 'nonsense' }), 404, 'not_found');

  // Rejected comes first, even when it is also expired and the arguments differ.
  const rejected = (await asked(t.agent, t.order.id, body)).body.data;
  const decision = await reject(rejected.id, { reason: 'not today' });
  assert.equal(decision.data.reason, 'not today');
  await svc.service.db.query(`UPDATE approvals SET expires_at = now() - interval '1 minute' WHERE id = $1`, [rejected.id]);
  const refusedRejected = await patchOrder(t.agent, t.order.id, { admin_notes: 'other' }, { 'Merx-Approval': rejected.id });
  assertErr(refusedRejected, 403, 'approval_rejected');

  // Used before expired.
  const used = (await asked(t.agent, t.order.id, { admin_notes: 'used' })).body.data;
  await approve(used.id);
  assert.equal((await patchOrder(t.agent, t.order.id, { admin_notes: 'used' }, { 'Merx-Approval': used.id })).status, 200);
  await svc.service.db.query(`UPDATE approvals SET expires_at = now() - interval '1 minute' WHERE id = $1`, [used.id]);
  assertErr(await patchOrder(t.agent, t.order.id, { admin_notes: 'x' }, { 'Merx-Approval': used.id }), 409, 'conflict', 'approval_used');

  // Expired before pending and mismatch.
  const expired = (await asked(t.agent, t.order.id, { admin_notes: 'expired' })).body.data;
  await svc.service.db.query(`UPDATE approvals SET expires_at = now() - interval '1 minute' WHERE id = $1`, [expired.id]);
  assertErr(await patchOrder(t.agent, t.order.id, { admin_notes: 'x' }, { 'Merx-Approval': expired.id }), 409, 'conflict', 'approval_expired');
  assert.equal((await http(svc.url, 'GET', `/api/v1/approvals/${expired.id}`, { token: t.agent })).body.data.status, 'expired');
  assertErr(
    await http(svc.url, 'POST', `/admin/api/approvals/${expired.id}/approve`, { token: 'test-operator-token-0123456789', body: {} }),
    409,
    'conflict',
  );

  // Pending before mismatch.
  const pending = (await asked(t.agent, t.order.id, { admin_notes: 'pending' })).body.data;
  assertErr(await patchOrder(t.agent, t.order.id, { admin_notes: 'x' }, { 'Merx-Approval': pending.id }), 409, 'conflict', 'approval_pending');

  // Mismatch before the target's change; then 412 with the current ETag, and nothing ran.
  await approve(pending.id);
  await t.op.call('PATCH', `/orders/${t.order.id}`, { admin_notes: 'the merchant changed it' });
  assertErr(await patchOrder(t.agent, t.order.id, { admin_notes: 'x' }, { 'Merx-Approval': pending.id }), 409, 'conflict', 'approval_mismatch');
  const current = await getOrder(t.key, t.order.id);
  assert.equal(current.body.data.admin_notes, 'the merchant changed it');
  const stale = await patchOrder(t.agent, t.order.id, { admin_notes: 'pending' }, { 'Merx-Approval': pending.id });
  assertErr(stale, 412, 'precondition_failed');
  assert.equal(stale.body.error.details.current_etag, current.headers.get('etag'));
  assert.equal((await getOrder(t.key, t.order.id)).body.data.admin_notes, 'the merchant changed it');
  assert.equal((await http(svc.url, 'GET', `/api/v1/approvals/${pending.id}`, { token: t.agent })).body.data.status, 'approved', 'still unused');
});

test('REST: with an Idempotency-Key, asking again returns the same approval; the approved request with the key replays its answer', async () => {
  const t = await agentTenant();
  const key = `agent-${crypto.randomUUID()}`;
  const first = await asked(t.agent, t.order.id, { admin_notes: 'idem' }, { 'Idempotency-Key': key });
  const second = await asked(t.agent, t.order.id, { admin_notes: 'idem' }, { 'Idempotency-Key': key });
  assert.equal(second.body.data.id, first.body.data.id);
  assert.equal(second.headers.get('idempotent-replayed'), 'true');
  assertErr(await patchOrder(t.agent, t.order.id, { admin_notes: 'other' }, { 'Idempotency-Key': key }), 409, 'conflict', 'idempotency_key_reused');
  const pending = (await op().call('GET', `/accounts/${t.accountId}/approvals?status=pending`)).data;
  assert.equal(pending.length, 1, 'asked once');

  await approve(first.body.data.id);
  const headers = { 'Idempotency-Key': key, 'Merx-Approval': first.body.data.id };
  const ran = await patchOrder(t.agent, t.order.id, { admin_notes: 'idem' }, headers);
  assert.equal(ran.status, 200, ran.text);
  const again = await patchOrder(t.agent, t.order.id, { admin_notes: 'idem' }, headers);
  assert.equal(again.status, 200, again.text);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.equal(again.text, ran.text);
});

test('REST: an operation that calls a courier (create_shipment) runs once when approved; its effects name the courier', async () => {
  const t = await agentTenant();
  const res = await http(svc.url, 'POST', '/api/v1/shipments', { token: t.agent, body: { order_id: t.order.id } });
  assert.equal(res.status, 202, res.text);
  const approval = res.body.data;
  assert.equal(approval.resource_etag, null);
  assert.ok(
    approval.effects.some((e: string) => /^courier_a creates a waybill/.test(e)),
    approval.effects.join('; '),
  );
  assert.ok(approval.effects.includes('shipment.created to 0 subscriptions'));
  await approve(approval.id);
  const ran = await http(svc.url, 'POST', '/api/v1/shipments', {
    token: t.agent,
    body: { order_id: t.order.id },
    headers: { 'Merx-Approval': approval.id },
  });
  assert.equal(ran.status, 201, ran.text);
  const again = await http(svc.url, 'POST', '/api/v1/shipments', {
    token: t.agent,
    body: { order_id: t.order.id },
    headers: { 'Merx-Approval': approval.id },
  });
  assertErr(again, 409, 'conflict', 'approval_used');
  const done = (await http(svc.url, 'GET', `/api/v1/approvals/${approval.id}`, { token: t.agent })).body.data;
  assert.equal(done.status, 'executed');
  assert.equal(done.result_status, 201);
});

test('MCP: the write answers a result with the approval and _meta.approval_id; get_approval; every refusal; the approved call runs once', async () => {
  const t = await agentTenant();
  const tools = await rpc(svc.url, t.agent, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const names = tools.body.result.tools.map((x: any) => x.name);
  assert.ok(names.includes('get_approval') && names.includes('list_request_logs'));

  const args = { id: t.order.id, admin_notes: 'via mcp' };
  const asked = await mcpCall(t.agent, 'update_order', args);
  assert.equal(asked.isError, false);
  const approval = asked.structuredContent.data;
  assert.equal(asked._meta.approval_id, approval.id);
  assert.equal(approval.status, 'pending');
  assert.equal(asked.content[0].text, JSON.stringify(asked.structuredContent));
  const read = await mcpCall(t.agent, 'get_approval', { id: approval.id });
  assert.deepEqual(read.structuredContent.data, approval);
  assertRefusal(await mcpCall(t.key, 'get_approval', { id: approval.id }), 'NOT_FOUND');

  const withApproval = (id: string) => ({ approval_id: id });
  assertRefusal(await mcpCall(t.agent, 'update_order', args, withApproval(crypto.randomUUID())), 'NOT_FOUND');
  const pendingRefusal = await mcpCall(t.agent, 'update_order', args, withApproval(approval.id));
  assertRefusal(pendingRefusal, 'CONFLICT');
  assert.match(pendingRefusal.structuredContent.reason, /^approval_pending/);
  await approve(approval.id);
  const mismatch = await mcpCall(t.agent, 'update_order', { ...args, admin_notes: 'other' }, withApproval(approval.id));
  assertRefusal(mismatch, 'CONFLICT');
  assert.match(mismatch.structuredContent.reason, /^approval_mismatch/);
  const ran = await mcpCall(t.agent, 'update_order', args, withApproval(approval.id));
  assert.equal(ran.isError, false, JSON.stringify(ran));
  assert.equal(ran.structuredContent.data.admin_notes, 'via mcp');
  const used = await mcpCall(t.agent, 'update_order', args, withApproval(approval.id));
  assertRefusal(used, 'CONFLICT');
  assert.match(used.structuredContent.reason, /^approval_used/);

  const second = (await mcpCall(t.agent, 'update_order', { ...args, admin_notes: 'rejected one' })).structuredContent.data;
  await reject(second.id, { reason: 'no' });
  assertRefusal(await mcpCall(t.agent, 'update_order', { ...args, admin_notes: 'rejected one' }, withApproval(second.id)), 'APPROVAL_REJECTED');

  const third = (await mcpCall(t.agent, 'update_order', { ...args, admin_notes: 'expired one' })).structuredContent.data;
  await svc.service.db.query(`UPDATE approvals SET expires_at = now() - interval '1 minute' WHERE id = $1`, [third.id]);
  const expired = await mcpCall(t.agent, 'update_order', { ...args, admin_notes: 'expired one' }, withApproval(third.id));
  assertRefusal(expired, 'CONFLICT');
  assert.match(expired.structuredContent.reason, /^approval_expired/);

  const fourth = (await mcpCall(t.agent, 'update_order', { ...args, admin_notes: 'stale one' })).structuredContent.data;
  await approve(fourth.id);
  await op().call('PATCH', `/orders/${t.order.id}`, { admin_notes: 'changed meanwhile' });
  const stale = await mcpCall(t.agent, 'update_order', { ...args, admin_notes: 'stale one' }, withApproval(fourth.id));
  assertRefusal(stale, 'PRECONDITION_FAILED');

  // A dry run with an approval key is a dry run; the same idempotency key asks once.
  const dry = await mcpCall(t.agent, 'update_order', { ...args, dry_run: true });
  assert.equal(dry.structuredContent.dry_run, true);
  const key = `mcp-${crypto.randomUUID()}`;
  const a = await mcpCall(t.agent, 'update_order', { ...args, admin_notes: 'idem' }, { idempotency_key: key });
  const b = await mcpCall(t.agent, 'update_order', { ...args, admin_notes: 'idem' }, { idempotency_key: key });
  assert.equal(b._meta.approval_id, a._meta.approval_id);
  assert.equal(b._meta.idempotent_replayed, true);
});

test("REST and MCP: an approved run counts against the operation's per-account limit, as a direct run does (test_webhook, 30 a minute)", async () => {
  const t = await agentTenant();
  const { data: sub } = await createWebhook(svc.url, t.key, { url: 'https://127.0.0.1:9/merx', events: ['order.updated'] });
  const path = `/api/v1/webhooks/${sub.id}/test`;
  const asked = await http(svc.url, 'POST', path, { token: t.agent });
  assert.equal(asked.status, 202, asked.text);
  const approval = asked.body.data;
  await approve(approval.id);
  // Another caller of the account used up the minute's allowance.
  const limit = svc.service.services.rateLimits.named('webhook_test', 30);
  for (let i = 0; i < 30; i++) assert.equal((await limit.consume(t.accountId)).allowed, true);

  assertErr(await http(svc.url, 'POST', path, { token: t.key }), 429, 'rate_limited');
  const approved = await http(svc.url, 'POST', path, { token: t.agent, headers: { 'Merx-Approval': approval.id } });
  assertErr(approved, 429, 'rate_limited');
  assert.ok(Number(approved.headers.get('retry-after')) > 0, approved.text);
  assertRefusal(await mcpCall(t.agent, 'test_webhook', { id: sub.id }, { approval_id: approval.id }), 'RATE_LIMITED');
  // Refused before it ran: the approval is still there to be used.
  const still = (await http(svc.url, 'GET', `/api/v1/approvals/${approval.id}`, { token: t.agent })).body.data;
  assert.equal(still.status, 'approved');
});
