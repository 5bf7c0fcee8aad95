// SPEC "What the service does" 6-7, Errors (405, 400 rules), Limits (page size);
// GAPS General (X-Deploy-SHA everywhere, 404/405/OPTIONS before any key check,
// no clamping, unknown query parameters, cursors).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import { startTestService, http, freshTenant, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError, DEPLOY_SHA, listOrders, qs } from './helpers/contract.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const allowOf = (res: { headers: Headers }) =>
  new Set(
    (res.headers.get('allow') ?? '')
      .split(',')
      .map((m) => m.trim().toUpperCase())
      .filter(Boolean),
  );

test('X-Deploy-SHA (10 characters) is on successes, errors, 404, 405 and OPTIONS', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const responses = {
    'GET list 200': await http(svc.url, 'GET', '/api/v1/orders', { token: key }),
    'GET one 200': await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key }),
    'PATCH 200': await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { admin_notes: 'sha' } }),
    'dry run 200': await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, {
      token: key,
      body: { admin_notes: 'x' },
      headers: { 'x-merx-dry-run': '1' },
    }),
    'shipment 200': await http(svc.url, 'GET', `/api/v1/orders/${order.id}/shipment`, { token: key }),
    '401': await http(svc.url, 'GET', '/api/v1/orders'),
    '400': await http(svc.url, 'GET', '/api/v1/orders?limit=0', { token: key }),
    '404 row': await http(svc.url, 'GET', `/api/v1/orders/${crypto.randomUUID()}`, { token: key }),
    '404 route': await http(svc.url, 'GET', '/api/v1/no-such-thing'),
    '404 route outside the API': await http(svc.url, 'GET', '/no-such-thing'),
    '405': await http(svc.url, 'DELETE', '/api/v1/orders'),
    OPTIONS: await http(svc.url, 'OPTIONS', '/api/v1/orders'),
    'OPTIONS one': await http(svc.url, 'OPTIONS', `/api/v1/orders/${order.id}`),
    healthz: await http(svc.url, 'GET', '/healthz'),
    'public OpenAPI': await http(svc.url, 'GET', '/api/v1/openapi.json'),
    'operator 200': await http(svc.url, 'GET', `/admin/api/accounts/${accountId}`, { token: ADMIN_TOKEN }),
    'operator 401': await http(svc.url, 'GET', `/admin/api/accounts/${accountId}`),
  };
  for (const [name, res] of Object.entries(responses)) {
    assert.equal(res.headers.get('x-deploy-sha'), DEPLOY_SHA, `${name} (${res.status})`);
  }
  assert.equal(DEPLOY_SHA.length, 10);
  assert.equal(responses['GET list 200'].status, 200);
  assert.equal(responses['405'].status, 405);
  assert.equal(responses.OPTIONS.status, 204);
});

test('unknown routes answer a JSON 404 not_found, before any key check', async () => {
  const { key } = await freshTenant(svc.url);
  const paths = [
    '/api/v1/nope',
    '/api/v1/orders/x/y/z',
    '/api/v2/orders',
    '/nope',
    '/api/v1/Orders',
    `/api/v1/orders/${crypto.randomUUID()}/shipments`,
  ];
  for (const path of paths) {
    for (const token of [undefined, key, 'merx_not_a_real_key']) {
      const res = await http(svc.url, 'GET', path, { token });
      assertError(res, 404, 'not_found', `GET ${path} token=${token ? 'some' : 'none'}`);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    }
  }
  assertError(await http(svc.url, 'POST', '/api/v1/nope', { body: { a: 1 } }), 404, 'not_found', 'POST unknown route');
  // Whatever the body holds: an unknown route is not read, so malformed JSON there is still a 404 (found by the fuzz test).
  for (const raw of ['{bad', '{"text":"\u0000"}']) {
    const res = await fetch(`${svc.url}/api/v1/customers/notes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: raw,
    });
    assert.equal(res.status, 404, `POST unknown route with body ${JSON.stringify(raw)}`);
    assert.equal((await res.json()).error.code, 'not_found');
  }
});

test('a wrong method on a known path answers 405 method_not_allowed with Allow, before any key check', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const cases: Array<[string, string, string[]]> = [
    ['POST', '/api/v1/orders', ['GET']],
    ['PUT', '/api/v1/orders', ['GET']],
    ['PATCH', '/api/v1/orders', ['GET']],
    ['DELETE', '/api/v1/orders', ['GET']],
    ['POST', `/api/v1/orders/${order.id}`, ['GET', 'PATCH']],
    ['PUT', `/api/v1/orders/${order.id}`, ['GET', 'PATCH']],
    ['DELETE', `/api/v1/orders/${order.id}`, ['GET', 'PATCH']],
    ['DELETE', '/api/v1/orders/not-a-uuid', ['GET', 'PATCH']],
    ['POST', `/api/v1/orders/${order.id}/shipment`, ['GET']],
  ];
  for (const [method, path, allowed] of cases) {
    for (const token of [undefined, 'merx_malformed', key]) {
      const res = await http(svc.url, method, path, { token, body: { a: 1 } });
      assertError(res, 405, 'method_not_allowed', `${method} ${path} token=${token ?? 'none'}`);
      const allow = allowOf(res);
      for (const m of allowed) assert.ok(allow.has(m), `${method} ${path}: Allow "${res.headers.get('allow')}" lists ${m}`);
      assert.ok(!allow.has(method), `${method} ${path}: Allow does not list ${method}`);
      assert.equal(res.headers.get('www-authenticate'), null, 'no auth challenge on 405');
    }
  }
  // Nothing happened to the order.
  const read = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  assert.equal(read.status, 200);
  assert.equal(read.body.data.status, 'new');
});

test('OPTIONS answers 204 without a key, with an empty body', async () => {
  const id = crypto.randomUUID();
  for (const path of ['/api/v1/orders', `/api/v1/orders/${id}`, `/api/v1/orders/${id}/shipment`]) {
    const res = await http(svc.url, 'OPTIONS', path);
    assert.equal(res.status, 204, `OPTIONS ${path}: ${res.text}`);
    assert.equal(res.text, '');
    assert.equal(res.headers.get('x-deploy-sha'), DEPLOY_SHA);
    const withBadKey = await http(svc.url, 'OPTIONS', path, { token: 'merx_bad' });
    assert.equal(withBadKey.status, 204, `OPTIONS ${path} with a bad key`);
  }
  const allow = allowOf(await http(svc.url, 'OPTIONS', `/api/v1/orders/${id}`));
  assert.ok(allow.has('GET') && allow.has('PATCH'));
});

test('there is no CORS: no Access-Control-* headers, even with an Origin header or a preflight', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const origin = { origin: 'https://evil.example.com' };
  const responses = [
    await http(svc.url, 'GET', '/api/v1/orders', { token: key, headers: origin }),
    await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key, headers: origin }),
    await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, headers: origin, body: { admin_notes: 'x' } }),
    await http(svc.url, 'GET', '/api/v1/orders', { headers: origin }),
    await http(svc.url, 'OPTIONS', '/api/v1/orders', {
      headers: { ...origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    }),
    await http(svc.url, 'OPTIONS', `/api/v1/orders/${order.id}`, {
      headers: { ...origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, content-type' },
    }),
    await http(svc.url, 'GET', '/api/v1/nope', { headers: origin }),
  ];
  for (const res of responses) {
    assert.equal(res.headers.get('access-control-allow-origin'), null, `status ${res.status}`);
    for (const [name] of res.headers) assert.ok(!name.toLowerCase().startsWith('access-control-'), `unexpected ${name}`);
  }
});

test('a malformed JSON body is 400 validation_failed and writes nothing', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const bodies = ['{"admin_notes": ', '{admin_notes: "x"}', "{'admin_notes': 'x'}", '{"admin_notes": "x"} trailing', 'nul'];
  for (const rawBody of bodies) {
    const res = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, rawBody, headers: { 'content-type': 'application/json' } });
    assertError(res, 400, 'validation_failed', `body ${rawBody}`);
  }
  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
    const res = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, {
      token: key,
      rawBody: contentType === 'text/plain' ? '{"admin_notes":"x"}' : 'admin_notes=x',
      headers: { 'content-type': contentType },
    });
    assertError(res, 400, 'validation_failed', `content-type ${contentType}`);
  }
  for (const body of [[{ admin_notes: 'x' }], 'a string', 42]) {
    const res = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body });
    assertError(res, 400, 'validation_failed', `non-object body ${JSON.stringify(body)}`);
  }
  const read = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  assert.equal(read.body.data.admin_notes, null);
  assert.equal(read.body.data.updated_at, order.updated_at);
});

test('a body over 1 MiB is refused with 413 and writes nothing', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const huge = JSON.stringify({ admin_notes: 'x'.repeat(1024 * 1024 + 10) });
  const res = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, {
    token: key,
    rawBody: huge,
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(res.status, 413, res.text.slice(0, 200));
  assert.deepEqual(Object.keys(res.body), ['error']);
  assert.equal(typeof res.body.error.code, 'string');
  assert.equal(typeof res.body.error.message, 'string');
  assert.equal(res.headers.get('x-deploy-sha'), DEPLOY_SHA);
  const read = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  assert.equal(read.body.data.admin_notes, null);
});

/**
 * Issue 38: a client that sends its whole body before reading the answer (as simple clients do) must still read the
 * 413. Closing the connection while it is still sending resets it and throws the answer away (EPIPE instead).
 */
async function sendWholeBodyThenRead(url: string, path: string, key: string, body: Buffer, chunked: boolean): Promise<string> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  // Nothing is read until the body is sent.
  socket.pause();
  let answer = '';
  const closed = new Promise((resolve) => socket.once('close', resolve));
  let failure = '';
  socket.on('error', (err) => (failure ||= (err as NodeJS.ErrnoException).code ?? err.message));
  const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`;
  socket.write(`PATCH ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`);
  for (let at = 0; at < body.length && !failure && !socket.destroyed; at += 256 * 1024) {
    const piece = body.subarray(at, at + 256 * 1024);
    const frame = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
    if (!socket.write(frame)) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
  }
  if (chunked && !failure && !socket.destroyed) socket.write('0\r\n\r\n');
  socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
  socket.resume();
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  socket.destroy();
  assert.ok(answer.startsWith('HTTP/1.1 413'), `the client read its 413 (socket: ${failure || 'ok'}; got ${JSON.stringify(answer.slice(0, 120))})`);
  return answer;
}

test('a 12 MB body is answered a readable 413, with or without Content-Length, and writes nothing', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const huge = Buffer.from(JSON.stringify({ admin_notes: 'x'.repeat(12 * 1024 * 1024) }));
  for (const chunked of [false, true]) {
    const answer = await sendWholeBodyThenRead(svc.url, `/api/v1/orders/${order.id}`, key, huge, chunked);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    assert.equal(body.error.code, 'payload_too_large');
  }
  const read = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  assert.equal(read.body.data.admin_notes, null);
});

test('unknown query parameters are 400 validation_failed', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const cases = [
    '/api/v1/orders?bogus=1',
    '/api/v1/orders?limit=5&sort=asc',
    '/api/v1/orders?offset=10',
    '/api/v1/orders?Status=new',
    `/api/v1/orders/${order.id}?expand=shipment`,
    `/api/v1/orders/${order.id}/shipment?x=1`,
  ];
  for (const path of cases) {
    assertError(await http(svc.url, 'GET', path, { token: key }), 400, 'validation_failed', path);
  }
  assertError(
    await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}?notify=1`, { token: key, body: { admin_notes: 'q' } }),
    400,
    'validation_failed',
    'unknown query parameter on PATCH',
  );
  const unchanged = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  assert.equal(unchanged.body.data.admin_notes, null);
  const res = await http(svc.url, 'GET', '/api/v1/orders?bogus=1', { token: key });
  const allowed = res.body.error.details?.allowed;
  assert.ok(Array.isArray(allowed), 'details.allowed lists the accepted parameters');
  for (const p of ['limit', 'cursor', 'status', 'payment', 'from', 'to', 'since', 'page_id', 'product_id', 'courier', 'shipment_status', 'q']) {
    assert.ok(allowed.includes(p), `allowed includes ${p}`);
  }
});

test('limit must be an integer in 1..200: no clamping', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  for (let i = 0; i < 3; i++) await op.checkout(accountId);
  for (const limit of ['0', '201', 'abc', '-1', '1.5', '10000', '2x']) {
    assertError(await http(svc.url, 'GET', `/api/v1/orders?limit=${limit}`, { token: key }), 400, 'validation_failed', `limit=${limit}`);
  }
  const one = await listOrders(svc.url, key, { limit: 1 });
  assert.equal(one.data.length, 1);
  assert.equal(one.has_more, true);
  const max = await listOrders(svc.url, key, { limit: 200 });
  assert.equal(max.data.length, 3);
  assert.equal(max.has_more, false);
  const dflt = await listOrders(svc.url, key);
  assert.equal(dflt.data.length, 3);
});

test('a non-UUID id (or filter id) is 400 validation_failed, never 404 (order numbers are not ids)', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  assert.equal(typeof order.number, 'number');
  const badIds = [String(order.number), String(order.order_number), 'not-a-uuid', `${order.id}x`, order.id.replace(/-/g, ''), 'null'];
  for (const id of badIds) {
    assertError(await http(svc.url, 'GET', `/api/v1/orders/${id}`, { token: key }), 400, 'validation_failed', `GET ${id}`);
    assertError(
      await http(svc.url, 'PATCH', `/api/v1/orders/${id}`, { token: key, body: { admin_notes: 'x' } }),
      400,
      'validation_failed',
      `PATCH ${id}`,
    );
    assertError(await http(svc.url, 'GET', `/api/v1/orders/${id}/shipment`, { token: key }), 400, 'validation_failed', `shipment ${id}`);
  }
  for (const param of ['page_id', 'product_id']) {
    for (const value of ['abc', '123', `${order.id}0`]) {
      assertError(
        await http(svc.url, 'GET', `/api/v1/orders${qs({ [param]: value })}`, { token: key }),
        400,
        'validation_failed',
        `${param}=${value}`,
      );
    }
  }
  const read = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  assert.equal(read.body.data.admin_notes, null, 'the refused PATCHes wrote nothing');
});

test('a bad cursor is 400 validation_failed: garbage, tampered, or a created_at that is not strict ISO', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  for (let i = 0; i < 3; i++) await op.checkout(accountId, { created_at: `2026-03-0${i + 1}T10:00:00Z` });
  const first = await listOrders(svc.url, key, { limit: 1 });
  const cursor = first.next_cursor!;
  assert.equal(typeof cursor, 'string');
  assert.match(cursor, /^[A-Za-z0-9_-]+$/, 'the cursor is base64url');
  const second = await listOrders(svc.url, key, { limit: 1, cursor });
  assert.equal(second.data.length, 1);
  assert.notEqual(second.data[0].id, first.data[0].id);

  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  const stamp = decoded.match(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/)?.[0];
  assert.ok(stamp, `the cursor holds created_at (decoded: ${decoded})`);
  const withStamp = (s: string) => Buffer.from(decoded.replace(stamp, s), 'utf8').toString('base64url');
  const idInCursor = decoded.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i)?.[0];
  assert.ok(idInCursor, 'the cursor holds the id');

  const bad: Record<string, string> = {
    garbage: '!!!not-a-cursor!!!',
    'plain words': 'hello',
    'random base64url': Buffer.from(crypto.randomBytes(24)).toString('base64url'),
    'first character changed': (cursor[0] === 'A' ? 'B' : 'A') + cursor.slice(1),
    truncated: cursor.slice(0, Math.floor(cursor.length / 2)),
    'character appended': `${cursor}A`,
    'padded base64': Buffer.from(decoded, 'utf8').toString('base64') + (decoded.length % 3 ? '' : '=='),
    'created_at lenient (no zero padding)': withStamp('2026-3-2T10:00:00Z'),
    'created_at with a space': withStamp('2026-03-02 10:00:00'),
    'created_at without zone': withStamp('2026-03-02T10:00:00'),
    'created_at impossible day': withStamp('2026-02-30T10:00:00Z'),
    'created_at words': withStamp('yesterday'),
    'created_at epoch': withStamp('1772445600000'),
    'id not a uuid': Buffer.from(decoded.replace(idInCursor, 'not-a-uuid'), 'utf8').toString('base64url'),
    'too long': 'A'.repeat(300),
  };
  for (const [name, value] of Object.entries(bad)) {
    if (value === cursor) continue;
    const res = await http(svc.url, 'GET', `/api/v1/orders${qs({ limit: 1, cursor: value })}`, { token: key });
    assertError(res, 400, 'validation_failed', `cursor ${name}`);
  }
  assertError(await http(svc.url, 'GET', '/api/v1/orders?cursor=', { token: key }), 400, 'validation_failed', 'empty cursor');
});

test('every authenticated response carries X-RateLimit-Limit and X-RateLimit-Remaining', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const responses = [
    await http(svc.url, 'GET', '/api/v1/orders', { token: key }),
    await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key }),
    await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { admin_notes: 'x' } }),
    await http(svc.url, 'GET', '/api/v1/orders?limit=0', { token: key }),
    await http(svc.url, 'GET', `/api/v1/orders/${crypto.randomUUID()}`, { token: key }),
  ];
  for (const res of responses) {
    assert.equal(res.headers.get('x-ratelimit-limit'), '300', `status ${res.status}`);
    assert.match(res.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/, `status ${res.status}`);
  }
});

/** Sends raw bytes and reads the whole answer (for requests fetch refuses to send). */
function rawRequest(text: string): Promise<string> {
  const { hostname, port } = new URL(svc.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) }, () => socket.end(text));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

test('requests refused before any route runs get the contract error shape and X-Deploy-SHA: oversized headers, bad URL encoding, an overlong path parameter, malformed HTTP', async () => {
  const { key } = await freshTenant(svc.url);
  const long = await http(svc.url, 'GET', `/api/v1/orders?q=${'x'.repeat(20_000)}`, { token: key });
  assertError(long, 431, 'headers_too_large', 'URL over 16 KB');
  const header = await http(svc.url, 'GET', '/api/v1/orders', { token: key, headers: { 'x-padding': 'y'.repeat(20_000) } });
  assertError(header, 431, 'headers_too_large', 'a header over 16 KB');

  assertError(await http(svc.url, 'GET', '/api/v1/orders/%ED%A0%80', { token: key }), 400, 'validation_failed', 'invalid UTF-8 in the path');
  assertError(await http(svc.url, 'GET', '/api/v1/orders/%E0%A4%A', { token: key }), 400, 'validation_failed', 'broken percent-encoding');
  assertError(
    await http(svc.url, 'POST', `/api/v1/customers/${'k'.repeat(3000)}/notes`, { token: key, body: { text: 'x' } }),
    400,
    'validation_failed',
    'path parameter too long',
  );

  const malformed = await rawRequest('GET /api/v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n');
  assert.match(malformed, /^HTTP\/1\.1 400 /, malformed);
  assert.match(malformed, new RegExp(`X-Deploy-SHA: ${DEPLOY_SHA}`, 'i'));
  const body = JSON.parse(malformed.slice(malformed.indexOf('\r\n\r\n') + 4));
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message']);
  assert.equal(body.error.code, 'validation_failed');
});
