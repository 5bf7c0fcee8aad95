// EXTENSIONS 7, the request log: one entry per REST request and per MCP tool
// call made with a valid key, whatever its answer after the key was checked,
// none for requests answered before; X-Request-Id and _meta.request_id name
// it; the events a request committed; the key's own entries over the API
// and MCP, every key's over the operator API, with filters and paging; 30
// days; and never a body, query value, header value or secret in it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, outboxEvents, operator, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { rpc, toolCall } from './helpers/mcp.ts';
import { checkoutWith, shipTenant } from './helpers/shipments.ts';
import { eventually } from './helpers/webhooks.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService({ WORKERS: '0' });
});
after(async () => {
  await svc?.close();
});

const logs = (key: string, query = '') => http(svc.url, 'GET', `/api/v1/request-logs${query}`, { token: key });

/** The key's entry with this id, once written (entries are written in batches, a moment after the answer). */
async function entry(key: string, id: string) {
  return eventually(async () => {
    const res = await logs(key, '?limit=200');
    assert.equal(res.status, 200, res.text);
    return res.body.data.find((e: any) => e.id === id);
  }, `request log entry ${id}`);
}

async function tenantWithOrder() {
  const t = await shipTenant(svc);
  const order = await checkoutWith(svc, t.accountId, 'courier_a');
  return { ...t, order };
}

test('REST: each request with a valid key is an entry named by X-Request-Id, whatever its answer; the events it committed are listed', async () => {
  const t = await tenantWithOrder();
  const eventsBefore = new Set((await outboxEvents(svc.service, t.accountId)).map((e: any) => e.id));
  const patch = await http(svc.url, 'PATCH', `/api/v1/orders/${t.order.id}`, {
    token: t.key,
    body: { status: 'confirmed' },
    headers: { 'Idempotency-Key': 'log-key-1' },
  });
  assert.equal(patch.status, 200, patch.text);
  const id = patch.headers.get('x-request-id')!;
  const e = await entry(t.key, id);
  const committed = (await outboxEvents(svc.service, t.accountId)).filter((x: any) => !eventsBefore.has(x.id)).map((x: any) => x.id);
  assert.ok(committed.length >= 1);
  assert.deepEqual(
    { ...e, at: undefined, duration_ms: undefined },
    {
      id,
      at: undefined,
      key_prefix: t.key.slice(0, 11),
      transport: 'rest',
      operation: 'update_order',
      method: 'PATCH',
      path: `/api/v1/orders/${t.order.id}`,
      status: 200,
      error_code: null,
      dry_run: false,
      idempotency_key: 'log-key-1',
      replayed: false,
      duration_ms: undefined,
      resource_ids: [t.order.id],
      event_ids: committed,
    },
  );
  assert.ok(Number.isInteger(e.duration_ms) && e.duration_ms >= 0);

  const replay = await http(svc.url, 'PATCH', `/api/v1/orders/${t.order.id}`, {
    token: t.key,
    body: { status: 'confirmed' },
    headers: { 'Idempotency-Key': 'log-key-1' },
  });
  const replayed = await entry(t.key, replay.headers.get('x-request-id')!);
  assert.equal(replayed.replayed, true);
  assert.deepEqual(replayed.event_ids, []);

  const dry = await http(svc.url, 'PATCH', `/api/v1/orders/${t.order.id}`, {
    token: t.key,
    body: { status: 'processing' },
    headers: { 'X-Merx-Dry-Run': '1' },
  });
  assert.equal((await entry(t.key, dry.headers.get('x-request-id')!)).dry_run, true);

  // Refusals after the key was checked: 404, 403 scope, 400, 412.
  const missing = await http(svc.url, 'GET', `/api/v1/orders/${crypto.randomUUID()}`, { token: t.key });
  const scoped = await http(svc.url, 'GET', '/api/v1/customers', { token: t.key });
  const invalid = await http(svc.url, 'GET', '/api/v1/orders?limit=0', { token: t.key });
  const stale = await http(svc.url, 'PATCH', `/api/v1/orders/${t.order.id}`, {
    token: t.key,
    body: { admin_notes: 'x' },
    headers: { 'If-Match': '"stale"' },
  });
  for (const [res, status, code, operation] of [
    [missing, 404, 'not_found', 'get_order'],
    [scoped, 403, 'scope_missing', 'list_customers'],
    [invalid, 400, 'validation_failed', 'list_orders'],
    [stale, 412, 'precondition_failed', 'update_order'],
  ] as const) {
    assert.equal(res.status, status, res.text);
    const logged = await entry(t.key, res.headers.get('x-request-id')!);
    assert.equal(logged.status, status);
    assert.equal(logged.error_code, code);
    assert.equal(logged.operation, operation);
  }
});

test('requests answered before the key was checked are not logged: no key, a bad key, an unknown route, a wrong method', async () => {
  const t = await tenantWithOrder();
  // The polls that wait for an entry are entries themselves (list_request_logs): not counted.
  const count = async () =>
    (
      await svc.service.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM request_logs WHERE account_id = $1 AND operation <> 'list_request_logs'`,
        [t.accountId],
      )
    ).rows[0].n;
  const marker = await http(svc.url, 'GET', '/api/v1/orders', { token: t.key });
  await entry(t.key, marker.headers.get('x-request-id')!);
  const before = await count();
  await http(svc.url, 'GET', '/api/v1/orders');
  await http(svc.url, 'GET', '/api/v1/orders', { token: `merx_${'x'.repeat(40)}` });
  await http(svc.url, 'GET', '/api/v1/nothing-here', { token: t.key });
  await http(svc.url, 'DELETE', '/api/v1/orders', { token: t.key });
  await rpc(svc.url, t.key, '{not json');
  await rpc(svc.url, t.key, toolCall('no_such_tool', {}));
  await rpc(svc.url, t.key, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const last = await http(svc.url, 'GET', '/api/v1/orders', { token: t.key });
  await entry(t.key, last.headers.get('x-request-id')!);
  assert.equal(await count(), before + 1, 'only the last request');
});

test("request ids are time-ordered UUIDs (version 7) on both transports, so each entry is appended to the log's index", async () => {
  const t = await tenantWithOrder();
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await http(svc.url, 'GET', `/api/v1/orders/${t.order.id}`, { token: t.key })).headers.get('x-request-id')!);
    ids.push((await rpc(svc.url, t.key, toolCall('get_order', { id: t.order.id }))).body.result._meta.request_id);
  }
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual([...ids].sort(), ids, 'each id sorts after the one issued before it');
  const stamped = parseInt(ids[0].replace(/-/g, '').slice(0, 12), 16);
  assert.ok(Math.abs(stamped - Date.now()) < 60_000, 'the id carries the time it was issued');
});

test("MCP: one entry per tool call (a batch gives one per call) with _meta.request_id; refusals carry the REST twin's status and code", async () => {
  const t = await tenantWithOrder();
  const batch = await rpc(svc.url, t.key, [
    toolCall('get_order', { id: t.order.id }, 1),
    toolCall('get_order', { id: crypto.randomUUID() }, 2),
    toolCall('update_order', { id: t.order.id, admin_notes: 'from mcp' }, 3),
    toolCall('list_orders', { limit: 0 }, 4),
  ]);
  assert.equal(batch.status, 200, batch.text);
  const [found, missing, updated, invalid] = batch.body;
  const ids = [found, missing, updated].map((r: any) => r.result._meta.request_id);
  assert.equal(new Set(ids).size, 3);
  const [a, b, c] = await Promise.all(ids.map((id: string) => entry(t.key, id)));
  assert.deepEqual([a.transport, a.method, a.path, a.status, a.error_code, a.operation], ['mcp', 'POST', '/api/mcp', 200, null, 'get_order']);
  assert.deepEqual([b.status, b.error_code], [404, 'not_found']);
  assert.deepEqual([c.status, c.operation, c.resource_ids], [200, 'update_order', [t.order.id]]);
  assert.equal(c.event_ids.length, 1);
  assert.equal(invalid.error.code, -32602);
  const all = (await eventually(async () => {
    const res = await logs(t.key, '?operation=list_orders');
    return res.body.data.length ? res.body.data : null;
  }, 'the invalid call')) as any[];
  assert.deepEqual([all[0].status, all[0].error_code, all[0].transport], [400, 'validation_failed', 'mcp']);

  const own = await rpc(svc.url, t.key, toolCall('list_request_logs', { operation: 'get_order' }));
  const listed = own.body.result.structuredContent.data.map((e: any) => e.id);
  assert.ok(listed.includes(a.id) && listed.includes(b.id));
});

test('the log never holds a body, a query value, a header value or a secret', async () => {
  const t = await tenantWithOrder();
  const secret = `S3CRET-${crypto.randomUUID()}`;
  const sent = [
    await http(svc.url, 'PATCH', `/api/v1/orders/${t.order.id}`, {
      token: t.key,
      body: { admin_notes: `${secret}-body` },
      headers: { 'X-Custom': `${secret}-header` },
    }),
    await http(svc.url, 'GET', `/api/v1/orders?q=${secret}-query`, { token: t.key, headers: { 'User-Agent': `${secret}-agent` } }),
    await http(svc.url, 'POST', '/api/v1/webhooks', {
      token: t.key,
      body: { url: `https://93.184.216.34/${secret}-url`, events: ['order.created'], description: `${secret}-desc` },
    }),
  ];
  await rpc(svc.url, t.key, toolCall('update_order', { id: t.order.id, admin_notes: `${secret}-mcp` }));
  for (const res of sent) await entry(t.key, res.headers.get('x-request-id')!);
  const webhookSecret = sent[2].body?.data?.secret;
  // The MCP call's entry is written in its own batch, maybe a moment after the REST ones: wait for all four.
  const rows = (await eventually(async () => {
    const { rows: written } = await svc.service.db.query<{ row: string }>(
      'SELECT row_to_json(r)::text AS row FROM request_logs r WHERE account_id = $1',
      [t.accountId],
    );
    return written.length >= 4 ? written : null;
  }, 'the four entries')) as Array<{ row: string }>;
  for (const { row } of rows) {
    assert.ok(!row.includes(secret), `an entry holds a value sent: ${row}`);
    assert.ok(!row.includes(t.key), 'an entry holds the API key');
    if (webhookSecret) assert.ok(!row.includes(webhookSecret), 'an entry holds the webhook secret');
  }
});

test('filters, paging, another key, the operator API with key_prefix, and 30 days of retention', async () => {
  const t = await tenantWithOrder();
  const other = await operator(svc.url).issueKey(t.accountId, { preset: 'read_only' });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await http(svc.url, 'GET', '/api/v1/orders', { token: t.key })).headers.get('x-request-id')!);
  const missing = (await http(svc.url, 'GET', `/api/v1/orders/${crypto.randomUUID()}`, { token: t.key })).headers.get('x-request-id')!;
  const otherId = (await http(svc.url, 'GET', '/api/v1/orders', { token: other })).headers.get('x-request-id')!;
  await entry(t.key, missing);
  await entry(other, otherId);

  const mine = (await logs(t.key, '?limit=200')).body.data.map((e: any) => e.id);
  assert.ok(!mine.includes(otherId), "another key's entries are not listed");
  const fours = (await logs(t.key, '?status=4xx')).body.data;
  assert.deepEqual(
    fours.map((e: any) => e.id),
    [missing],
    JSON.stringify(fours),
  );
  assert.deepEqual(
    (await logs(t.key, '?status=404')).body.data.map((e: any) => e.id),
    [missing],
  );
  assert.deepEqual(
    (await logs(t.key, '?operation=list_orders')).body.data.map((e: any) => e.id),
    [...ids].reverse(),
  );
  assertError(await logs(t.key, '?status=4x'), 400, 'validation_failed');
  assertError(await logs(t.key, '?since=yesterday'), 400, 'validation_failed');
  const future = new Date(Date.now() + 3600_000).toISOString();
  assert.deepEqual((await logs(t.key, `?since=${future}`)).body.data, []);
  assert.ok((await logs(t.key, `?until=${future}`)).body.data.length >= 4);

  // Paging: newest first, one at a time, each entry once.
  const paged: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await logs(t.key, `?operation=list_orders&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(res.status, 200, res.text);
    paged.push(...res.body.data.map((e: any) => e.id));
    cursor = res.body.next_cursor;
  } while (cursor);
  assert.deepEqual(paged, [...ids].reverse());
  assertError(await logs(other, `?cursor=${(await logs(t.key, '?limit=1')).body.next_cursor}`), 400, 'validation_failed');

  const admin = (query: string) => http(svc.url, 'GET', `/admin/api/accounts/${t.accountId}/request-logs${query}`, { token: ADMIN_TOKEN });
  const everyKey = (await admin('?limit=200')).body.data.map((e: any) => e.id);
  assert.ok(everyKey.includes(otherId) && everyKey.includes(missing));
  assert.deepEqual(
    (await admin(`?key_prefix=${other.slice(0, 11)}&operation=list_orders`)).body.data.map((e: any) => e.id),
    [otherId],
  );
  assertError(await http(svc.url, 'GET', `/admin/api/accounts/${crypto.randomUUID()}/request-logs`, { token: ADMIN_TOKEN }), 404, 'not_found');

  // Retention: the job, as if 31 days had passed, removes them.
  await operator(svc.url).call('POST', '/jobs/retention/run', { now: new Date(Date.now() + 31 * 86_400_000).toISOString() });
  assert.deepEqual(
    (await logs(t.key)).body.data.filter((e: any) => ids.includes(e.id)),
    [],
  );
});

test('a request refused by the rate limit (429) is logged, on REST and per MCP tool call', async () => {
  const limited = await startTestService({ WORKERS: '0', RATE_LIMIT_REST_PER_MINUTE: '2', RATE_LIMIT_MCP_PER_MINUTE: '2' });
  try {
    const t = await shipTenant(limited);
    const statuses: number[] = [];
    let lastId = '';
    for (let i = 0; i < 3; i++) {
      const res = await http(limited.url, 'GET', '/api/v1/orders', { token: t.key });
      statuses.push(res.status);
      lastId = res.headers.get('x-request-id')!;
    }
    assert.deepEqual(statuses, [200, 200, 429]);
    const batch = await rpc(limited.url, t.key, [
      toolCall('list_orders', {}, 1),
      toolCall('list_orders', {}, 2),
      toolCall('get_order', { id: crypto.randomUUID() }, 3),
    ]);
    assert.equal(batch.body[2].error.code, -32000);
    const rows = await eventually(async () => {
      const { rows } = await limited.service.db.query<any>(
        `SELECT id, transport, operation, status, error_code FROM request_logs WHERE account_id = $1 AND status = 429 ORDER BY transport`,
        [t.accountId],
      );
      return rows.length === 2 ? rows : null;
    }, 'the two 429 entries');
    assert.deepEqual(
      rows.map((r: any) => [r.transport, r.operation, r.error_code]),
      [
        ['mcp', 'get_order', 'rate_limited'],
        ['rest', 'list_orders', 'rate_limited'],
      ],
    );
    assert.equal(rows[1].id, lastId);
  } finally {
    await limited.close();
  }
});
