// OPERATOR_API "The outside world": the built-in courier simulator's modes
// (ok, refuse, down, throttle: 429 with Retry-After: 1, error: 500), `times`
// (only the next that many calls get the mode, then ok), and the call log
// (GET /courier-sim/{slug}/calls: the last 1,000 calls, oldest first, with
// at, operation, status and duration_ms). Driven from outside: the service's
// own single route calls the courier, the operator API sets and reads.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError, ISO_RE } from './helpers/contract.ts';
import { checkoutWith, createShipment, shipTenant, simulator } from './helpers/shipments.ts';
import { simCalls, simMode } from './helpers/batches.ts';
import { standaloneSimulator } from '../src/couriers/simulator/standalone.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService({ COURIER_TIMEOUT_MS: '300' });
});
after(async () => {
  await svc.close();
});

const admin = (method: string, path: string, body?: unknown) => http(svc.url, method, `/admin/api${path}`, { token: ADMIN_TOKEN, body });

async function shipOne(t: { accountId: string; key: string }, slug: 'courier_a' | 'courier_b' | 'courier_c') {
  const order = await checkoutWith(svc, t.accountId, slug);
  return createShipment(svc, t.key, { order_id: order.id });
}

test('throttle answers 429 with Retry-After: 1 and error answers 500, every call until the mode changes; the single route says courier_error', async () => {
  const t = await shipTenant(svc);
  try {
    for (const slug of ['courier_a', 'courier_b', 'courier_c'] as const) {
      const set = await admin('POST', `/courier-sim/${slug}/mode`, { mode: 'throttle' });
      assert.deepEqual(set.body, { data: { slug, mode: 'throttle' } });
      for (let i = 0; i < 2; i++) assert.equal(assertError(await shipOne(t, slug), 502, 'courier_error').details.reason, 'throttled', slug);
      await simMode(svc.url, slug, 'error');
      for (let i = 0; i < 2; i++) assert.equal(assertError(await shipOne(t, slug), 502, 'courier_error').details.reason, 'unavailable', slug);
      await simMode(svc.url, slug, 'ok');
      assert.equal((await shipOne(t, slug)).status, 201, slug);
      const last = (await simCalls(svc.url, slug)).slice(-5).map((c) => c.status);
      // courier_b answers a created waybill with 200 (its protocol), the others with 201.
      assert.deepEqual(last, [429, 429, 500, 500, slug === 'courier_b' ? 200 : 201], slug);
    }
    // The courier's own answer, as a client of the simulator sees it.
    await simMode(svc.url, 'courier_c', 'throttle');
    const raw = await fetch(`${svc.url}/courier-sim/courier_c/parcels`, { method: 'POST' });
    assert.equal(raw.status, 429);
    assert.equal(raw.headers.get('retry-after'), '1');
  } finally {
    for (const slug of ['courier_a', 'courier_b', 'courier_c'] as const) await simMode(svc.url, slug, 'ok');
  }
});

test('times: only the next that many calls get the mode, then the courier returns to ok (and says so)', async () => {
  const t = await shipTenant(svc);
  for (const mode of ['throttle', 'error', 'refuse', 'down'] as const) {
    await simMode(svc.url, 'courier_b', mode, 2);
    assert.equal(await simulator(svc).modeOf('courier_b'), mode);
    const first = await shipOne(t, 'courier_b');
    const second = await shipOne(t, 'courier_b');
    for (const res of [first, second]) assertError(res, 502, 'courier_error', mode);
    const info = await admin('GET', '/info');
    assert.equal(info.body.data.couriers.find((c: any) => c.slug === 'courier_b').mode, 'ok', `${mode}: back to ok after 2 calls`);
    assert.equal((await shipOne(t, 'courier_b')).status, 201, `${mode}: the third call is accepted`);
  }
  // A mode without times stays; ok clears a count left over.
  await simMode(svc.url, 'courier_b', 'error', 5);
  await simMode(svc.url, 'courier_b', 'ok');
  assert.equal((await shipOne(t, 'courier_b')).status, 201);
  assert.equal(await simulator(svc).modeOf('courier_b'), 'ok');
});

test('bad mode requests: an unknown mode, times below 1 or not an integer, an unknown courier', async () => {
  assertError(await admin('POST', '/courier-sim/courier_a/mode', { mode: 'slow' }), 400, 'validation_failed');
  for (const times of [0, -1, 1.5, '2'])
    assertError(await admin('POST', '/courier-sim/courier_a/mode', { mode: 'error', times }), 400, 'validation_failed', String(times));
  assertError(await admin('POST', '/courier-sim/courier_z/mode', { mode: 'ok' }), 400, 'validation_failed');
  assertError(await admin('GET', '/courier-sim/courier_z/calls'), 400, 'validation_failed');
  assertError(await http(svc.url, 'GET', '/admin/api/courier-sim/courier_a/calls'), 401, 'unauthorized');
});

test('the call log: each call with at, operation, status and duration_ms, oldest first; a call held by down has no status; the last 1,000 only', async () => {
  const t = await shipTenant(svc);
  const before = (await simCalls(svc.url, 'courier_a')).length;
  const started = Date.now();
  const created = await shipOne(t, 'courier_a');
  assert.equal(created.status, 201);
  const label = await http(svc.url, 'GET', `/api/v1/shipments/${created.body.data.id}/label`, { token: t.key });
  assert.equal(label.status, 200);
  await simMode(svc.url, 'courier_a', 'down', 1);
  assertError(await shipOne(t, 'courier_a'), 502, 'courier_error');
  // The held call closes when the service gives up on it.
  let calls = await simCalls(svc.url, 'courier_a');
  for (let i = 0; i < 50 && calls[calls.length - 1].duration_ms === null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    calls = await simCalls(svc.url, 'courier_a');
  }
  const mine = calls.slice(before);
  assert.deepEqual(
    mine.map((c) => [c.operation, c.status]),
    [
      ['create', 201],
      ['label', 200],
      ['create', null],
    ],
  );
  for (const call of mine) {
    assert.deepEqual(Object.keys(call).sort(), ['at', 'duration_ms', 'operation', 'status']);
    assert.match(call.at, ISO_RE);
    assert.ok(Date.parse(call.at) >= started - 5);
    assert.equal(typeof call.duration_ms, 'number');
    assert.ok(call.duration_ms! >= 0);
  }
  assert.ok(mine[2].duration_ms! >= 250, `the held call lasted until the service's 300 ms timeout: ${mine[2].duration_ms}`);
  for (let i = 1; i < mine.length; i++) assert.ok(Date.parse(mine[i].at) >= Date.parse(mine[i - 1].at), 'oldest first');
  // Other couriers keep their own logs.
  assert.ok((await simCalls(svc.url, 'courier_b')).every((c) => c.operation !== 'label' || c.status !== null));

  // The log keeps the last 1,000 calls: 1,005 more answered straight by the simulator.
  await simMode(svc.url, 'courier_a', 'error');
  let loopEnded = Infinity;
  try {
    for (let i = 0; i < 1005; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, 1005 - i) }, () =>
          fetch(`${svc.url}/courier-sim/courier_a/v1/tracking`, { method: 'POST' }).then((r) => r.arrayBuffer()),
        ),
      );
    }
  } finally {
    loopEnded = Date.now();
    await simMode(svc.url, 'courier_a', 'ok');
  }
  const kept = await simCalls(svc.url, 'courier_a');
  assert.equal(kept.length, 1000);
  // Besides the loop's calls, only calls made after it may be kept: the service's own tracking of the shipment above
  // can call the courier at any moment, and once the mode is ok again such a call is not the loop's 500.
  const others = kept.filter((c) => !(c.operation === 'track' && c.status === 500));
  assert.ok(
    others.every((c) => Date.parse(c.at) >= loopEnded - 5),
    `only the newest 1,000 are kept: ${JSON.stringify(others)}`,
  );
});

test('the standalone simulator (npx merx courier-sim) takes the same modes and times and shows its calls', async () => {
  const sim = await standaloneSimulator(0);
  try {
    const set = await fetch(`${sim.url}/_sim/courier_c/mode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'throttle', times: 1 }),
    });
    assert.equal(set.status, 200);
    const bad = await fetch(`${sim.url}/_sim/courier_c/mode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'error', times: 0 }),
    });
    assert.equal(bad.status, 400);
    assert.equal((await fetch(`${sim.url}/courier_c/parcels`, { method: 'POST' })).status, 429);
    assert.equal((await fetch(`${sim.url}/courier_c/parcels`, { method: 'POST' })).status, 401, 'back to ok: the credentials are checked');
    const calls = await (await fetch(`${sim.url}/_sim/courier_c/calls`)).json();
    assert.deepEqual(
      calls.data.map((c: any) => [c.operation, c.status]),
      [
        ['create', 429],
        ['create', 401],
      ],
    );
  } finally {
    await sim.close();
  }
});
