// Crash safety of webhook delivery (SPEC Receiver rules 3 and 4; DESIGN
// transactional outbox): the service runs as a child process (node
// src/main.ts) on a database that outlives it (PostgreSQL, or PGlite in a temp
// DATA_DIR); it is killed with SIGKILL between the commit of an event and the
// end of its first attempt, restarted on the same data, and the delivery job
// (operator API, with `now`) delivers every event written after the grace
// period: nothing is lost, delivery is at least once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { operator } from './helpers/harness.ts';
import { startHttpsReceiver, type HttpsReceiver } from './helpers/https-receiver.ts';
import {
  isolatedDatabase,
  createWebhook,
  deliveriesOf,
  touchOrder,
  runDeliveryJob,
  assertSignedDelivery,
  type IsolatedDatabase,
} from './helpers/webhooks.ts';
import { freePort, killHard, startServiceChild, type ServiceChild } from './helpers/service-child.ts';

const SECOND = 1000;

let receiver: HttpsReceiver;
// One database and port for the file: each scenario crashes and restarts the same service.
let data: IsolatedDatabase;
let port: number;
let child: ServiceChild | null = null;

const startChild = (port: number, data: IsolatedDatabase) => startServiceChild(port, { ...data.env, DEPLOY_SHA: 'crashtest00' }, receiver.caFile);

before(async () => {
  receiver = await startHttpsReceiver();
  data = await isolatedDatabase({ onDisk: true });
  port = await freePort();
  child = await startChild(port, data);
});
after(async () => {
  if (child) await killHard(child);
  await receiver?.close();
  await data?.drop();
});

/** One crash scenario: `events` order PATCHes, then SIGKILL at `killWhen`, restart, grace, delivery. */
async function crashAndRecover(killWhen: 'attempt_in_flight' | 'right_after_commit', events: number) {
  assert.ok(child, 'the service is running');
  try {
    const op = operator(child.url);
    const account = await op.createAccount();
    const key = await op.issueKey(account.id);
    const endpoint = receiver.endpoint('crash');
    // Every attempt before the crash is held open: the service never learns its outcome.
    endpoint.script([], { hang: true });
    const { data: sub, secret } = await createWebhook(child.url, key, { url: endpoint.url, events: ['order.updated'] });
    const order = await op.checkout(account.id);

    const t0 = Date.now();
    const notes: string[] = [];
    for (let i = 0; i < events; i++) {
      notes.push(`crash note ${i}`);
      await touchOrder(child.url, key, order.id, notes[i]);
    }
    if (killWhen === 'attempt_in_flight') await endpoint.waitFor(events);
    await killHard(child);
    child = null;
    const seenBeforeCrash = endpoint.requests.length;

    // Restart on the same data; the receiver now answers.
    endpoint.script([], { status: 200, body: 'ok' });
    child = await startChild(port, data);

    const written = await deliveriesOf(child.url, key, sub.id);
    assert.equal(written.length, events, 'every committed event has its delivery after the crash');
    assert.ok(
      written.every((d) => d.status === 'pending'),
      'none was settled before the crash',
    );

    // Within the grace period (and the in-flight lease) nothing is due.
    assert.equal(await runDeliveryJob(child.url, new Date(t0 + 59 * SECOND)), 0);
    assert.equal(endpoint.requests.length, seenBeforeCrash, 'nothing is sent inside the grace period');

    // After it the worker takes over and delivers every event.
    assert.equal(await runDeliveryJob(child.url, new Date(t0 + 180 * SECOND)), events);
    const delivered = await deliveriesOf(child.url, key, sub.id);
    assert.equal(delivered.length, events);
    for (const d of delivered) {
      assert.equal(d.status, 'delivered', `delivery ${d.id}`);
      assert.equal(d.last_status_code, 200);
      assert.ok(d.attempt >= 1 && d.attempt <= 2, `attempt ${d.attempt}`);
    }
    assert.equal(new Set(delivered.map((d) => d.event_id)).size, events, 'one delivery per event');

    // The receiver got exactly the events written (at least once each), verifiable as ever.
    const answered = endpoint.requests.filter((r) => !('hang' in r.reply));
    assert.equal(answered.length, events);
    const envelopes = answered.map((r) => assertSignedDelivery(r, secret, 'order.updated'));
    assert.deepEqual(new Set(envelopes.map((e) => e.id)), new Set(delivered.map((d) => d.event_id)));
    assert.deepEqual(envelopes.map((e) => e.data.order.admin_notes).sort(), [...notes].sort());
    for (const r of endpoint.requests.slice(0, seenBeforeCrash)) {
      assert.ok(
        delivered.some((d) => d.event_id === r.headers['x-merx-event-id']),
        'attempts before the crash were of the same events',
      );
    }

    // Nothing more is due later on.
    assert.equal(await runDeliveryJob(child.url, new Date(t0 + 86_400 * SECOND)), 0);
    assert.equal(endpoint.requests.filter((r) => !('hang' in r.reply)).length, events);
  } catch (err) {
    if (child) (err as Error).message += `\n(service stderr: ${child.stderr().slice(-2000)})`;
    throw err;
  }
}

test('SIGKILL while first attempts are in flight: after restart and the grace period every event is delivered', async () => {
  await crashAndRecover('attempt_in_flight', 3);
});

test('SIGKILL right after the commit, before the first attempt could finish: nothing is lost', async () => {
  await crashAndRecover('right_after_commit', 1);
});
