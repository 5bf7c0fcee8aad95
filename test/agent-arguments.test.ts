// Issue 41 item 2: a model cannot set params._meta, so every MCP write tool
// also takes approval_id, idempotency_key and (on a versioned resource)
// if_match as arguments; _meta keeps working, both given and different is a
// 400. Asking again for the same write without an idempotency key gets the
// pending approval back, not a second identical one (EXTENSIONS 7).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, operator, freshTenant, type TestService } from './helpers/harness.ts';
import { assertRefusal, rpc } from './helpers/mcp.ts';
import { checkoutWith, shipTenant } from './helpers/shipments.ts';
import { eventually } from './helpers/webhooks.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService({ WORKERS: '0' });
});
after(async () => {
  await svc?.close();
});

async function agentTenant() {
  const t = await shipTenant(svc);
  const issued = await operator(svc.url).call('POST', `/accounts/${t.accountId}/keys`, { name: 'agent', preset: 'fulfilment', writes: 'approval' });
  const order = await checkoutWith(svc, t.accountId, 'courier_a');
  return { ...t, agent: issued.key as string, order };
}

async function call(key: string, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) {
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

const pendingOf = async (accountId: string) => (await operator(svc.url).call('GET', `/accounts/${accountId}/approvals?status=pending`)).data;

test('tools/list: every write tool takes approval_id and idempotency_key, the versioned updates if_match; none required; reads have none; the instructions explain them once', async () => {
  const { key } = await freshTenant(svc.url);
  // EXTENSIONS 10's token budget: 23 write tools carry them, so the server's instructions say once what they are.
  const instructions = (
    await rpc(svc.url, key, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    })
  ).body.result.instructions as string;
  for (const name of ['approval_id argument', 'idempotency_key argument', 'if_match argument'])
    assert.ok(instructions.includes(name.split(' ')[0]), name);
  assert.match(instructions, /idempotency_key argument \(or params\._meta\.idempotency_key/);
  assert.match(instructions, /if_match argument \(or params\._meta\.if_match\)/);
  assert.match(instructions, /approval_id set to that id \(an argument, or params\._meta\.approval_id\)/);
  const tools = (await rpc(svc.url, key, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).body.result.tools as any[];
  const writes = tools.filter((t) => t.inputSchema.properties.dry_run !== undefined || t.annotations?.readOnlyHint === false);
  assert.ok(writes.length >= 8, `write tools: ${writes.map((t) => t.name)}`);
  for (const tool of tools) {
    const props = tool.inputSchema.properties;
    const write = tool.annotations?.readOnlyHint === false;
    for (const name of ['approval_id', 'idempotency_key']) {
      assert.equal(props[name] !== undefined, write, `${tool.name}: ${name}`);
      if (write) {
        assert.equal(props[name].type, 'string');
      }
    }
    assert.equal(props.if_match !== undefined, ['update_order', 'update_product', 'update_webhook'].includes(tool.name), `${tool.name}: if_match`);
    for (const name of ['approval_id', 'idempotency_key', 'if_match']) assert.ok(!(tool.inputSchema.required ?? []).includes(name));
  }
});

test('an approval finished with arguments only: asked, approved, performed with approval_id as an argument, once', async () => {
  const t = await agentTenant();
  const args = { id: t.order.id, admin_notes: 'agent in a chat client' };
  const asked = await call(t.agent, 'update_order', args);
  const approval = asked.structuredContent.data;
  assert.equal(approval.status, 'pending');
  assert.deepEqual(approval.arguments, args, 'the control arguments are not part of the approved arguments');
  await operator(svc.url).call('POST', `/approvals/${approval.id}/approve`, {});
  const ran = await call(t.agent, 'update_order', { ...args, approval_id: approval.id });
  assert.equal(ran.isError, false, JSON.stringify(ran));
  assert.equal(ran.structuredContent.data.admin_notes, 'agent in a chat client');
  const again = await call(t.agent, 'update_order', { ...args, approval_id: approval.id });
  assertRefusal(again, 'CONFLICT');
  assert.match(again.structuredContent.reason, /^approval_used/);
  // Both ways at once: the same value is accepted, different values are a 400 and nothing runs.
  const other = (await call(t.agent, 'update_order', { ...args, admin_notes: 'second' })).structuredContent.data;
  assertRefusal(
    await call(t.agent, 'update_order', { ...args, admin_notes: 'second', approval_id: other.id }, { approval_id: crypto.randomUUID() }),
    'VALIDATION_FAILED',
  );
  const pending = await call(t.agent, 'update_order', { ...args, admin_notes: 'second', approval_id: other.id }, { approval_id: other.id });
  assert.match(pending.structuredContent.reason, /^approval_pending/);
  const notText = await rpc(svc.url, t.agent, {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'update_order', arguments: { ...args, approval_id: 42 } },
  });
  assert.equal(notText.body.error?.code, -32602, 'an approval_id that is not text is an invalid argument');
});

test('idempotency_key as an argument: a retry replays on a direct key and asks once on an approval key; different from _meta: 400', async () => {
  const t = await agentTenant();
  const key = `arg-${crypto.randomUUID()}`;
  const first = await call(t.key, 'update_order', { id: t.order.id, admin_notes: 'once', idempotency_key: key });
  assert.equal(first.isError, false, JSON.stringify(first));
  const retry = await call(t.key, 'update_order', { id: t.order.id, admin_notes: 'once' }, { idempotency_key: key });
  assert.equal(retry._meta.idempotent_replayed, true, 'the argument and _meta name the same key space');
  assert.deepEqual(retry.structuredContent, first.structuredContent);
  // The request log shows the key (entries are written in batches, a moment after the answer).
  await eventually(async () => {
    const logs = await http(svc.url, 'GET', '/api/v1/request-logs?operation=update_order', { token: t.key });
    return logs.body.data.some((e: any) => e.idempotency_key === key && e.replayed);
  }, 'the replayed entry with its idempotency key');
  assertRefusal(
    await call(t.key, 'update_order', { id: t.order.id, admin_notes: 'x', idempotency_key: key }, { idempotency_key: `${key}-other` }),
    'VALIDATION_FAILED',
  );
  assertRefusal(await call(t.key, 'update_order', { id: t.order.id, admin_notes: 'x', idempotency_key: 'has space' }), 'VALIDATION_FAILED');

  const agentKey = `agent-${crypto.randomUUID()}`;
  const a = await call(t.agent, 'update_order', { id: t.order.id, admin_notes: 'idem', idempotency_key: agentKey });
  const b = await call(t.agent, 'update_order', { id: t.order.id, admin_notes: 'idem', idempotency_key: agentKey });
  assert.equal(b._meta.approval_id, a._meta.approval_id);
  assert.equal(b._meta.idempotent_replayed, true);
});

test('if_match as an argument: a stale ETag is 412 and changes nothing; the current one writes; different from _meta: 400', async () => {
  const t = await agentTenant();
  const read = await call(t.key, 'get_order', { id: t.order.id });
  const etag = read._meta.etag as string;
  assert.ok(etag);
  assert.equal((await http(svc.url, 'PATCH', `/api/v1/orders/${t.order.id}`, { token: t.key, body: { admin_notes: 'moved on' } })).status, 200);
  const stale = await call(t.key, 'update_order', { id: t.order.id, admin_notes: 'mine', if_match: etag });
  assertRefusal(stale, 'PRECONDITION_FAILED');
  const current = (await call(t.key, 'get_order', { id: t.order.id }))._meta.etag as string;
  assert.notEqual(current, etag);
  assertRefusal(
    await call(t.key, 'update_order', { id: t.order.id, admin_notes: 'mine', if_match: current }, { if_match: etag }),
    'VALIDATION_FAILED',
  );
  const ok = await call(t.key, 'update_order', { id: t.order.id, admin_notes: 'mine', if_match: current }, { if_match: current });
  assert.equal(ok.isError, false, JSON.stringify(ok));
  assert.equal(ok.structuredContent.data.admin_notes, 'mine');
  // A tool whose resource has no ETag does not take if_match (an unknown argument).
  const refused = await rpc(svc.url, t.key, {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'create_shipment', arguments: { order_id: t.order.id, if_match: '*' } },
  });
  assert.equal(refused.body.error?.code, -32602, refused.text);
});

test('asking again for the same write without an idempotency key gets the pending approval; not after it was decided, nor for other arguments or a changed target', async () => {
  const t = await agentTenant();
  const args = { id: t.order.id, admin_notes: 'asked twice' };
  const first = (await call(t.agent, 'update_order', args)).structuredContent.data;
  const second = await call(t.agent, 'update_order', { admin_notes: 'asked twice', id: t.order.id });
  assert.equal(second.structuredContent.data.id, first.id, 'same approval (arguments compared by meaning)');
  assert.equal(second.structuredContent.data.requested_at, first.requested_at);
  // REST asks the same question: the same approval again.
  const rest = await http(svc.url, 'PATCH', `/api/v1/orders/${t.order.id}`, { token: t.agent, body: { admin_notes: 'asked twice' } });
  assert.equal(rest.status, 202, rest.text);
  assert.equal(rest.body.data.id, first.id);
  // Asked at once, twice: one approval.
  const together = await Promise.all([1, 2].map(() => call(t.agent, 'update_order', { id: t.order.id, admin_notes: 'together' })));
  assert.equal(together[0].structuredContent.data.id, together[1].structuredContent.data.id);
  assert.equal((await pendingOf(t.accountId)).length, 2, 'two questions, two approvals');

  // Other arguments: another approval.
  const other = (await call(t.agent, 'update_order', { id: t.order.id, admin_notes: 'something else' })).structuredContent.data;
  assert.notEqual(other.id, first.id);
  // Rejected: asking again asks anew.
  await operator(svc.url).call('POST', `/approvals/${other.id}/reject`, { reason: 'no' });
  const afterReject = (await call(t.agent, 'update_order', { id: t.order.id, admin_notes: 'something else' })).structuredContent.data;
  assert.notEqual(afterReject.id, other.id);
  assert.equal(afterReject.status, 'pending');
  // The target changed since: the earlier approval would fail at execution, so a new one is asked.
  const edit = await http(svc.url, 'PATCH', `/api/v1/orders/${t.order.id}`, { token: t.key, body: { admin_notes: 'merchant edit' } });
  assert.equal(edit.status, 200, edit.text);
  const afterChange = (await call(t.agent, 'update_order', args)).structuredContent.data;
  assert.notEqual(afterChange.id, first.id);
  assert.notEqual(afterChange.resource_etag, first.resource_etag);
  // Expired: asked anew.
  await svc.service.db.query(`UPDATE approvals SET expires_at = now() - interval '1 minute' WHERE id = $1`, [afterChange.id]);
  assert.notEqual((await call(t.agent, 'update_order', args)).structuredContent.data.id, afterChange.id);
  // Another key of the account asking the same: its own approval.
  const other2 = await operator(svc.url).call('POST', `/accounts/${t.accountId}/keys`, { name: 'agent 2', preset: 'fulfilment', writes: 'approval' });
  const theirs = (await call(other2.key, 'update_order', { id: t.order.id, admin_notes: 'together' })).structuredContent.data;
  assert.notEqual(theirs.id, together[0].structuredContent.data.id);
});
