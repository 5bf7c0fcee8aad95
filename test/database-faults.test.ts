// Issue 27: the database's bad days, for real. A PostgreSQL cluster of the
// test's own (another port, created and dropped here, so nothing else on the
// machine is touched) serves a Merx child process under a steady load of
// order PATCHes, each with its own Idempotency-Key, with a webhook
// subscription. Every connection of the service is terminated ten times, then
// the cluster is stopped for 10 s and started again. The service must stay
// up, answer only 2xx, 4xx or 503 with Retry-After, be healthy within 2 s of
// the database, and in the end every write that committed has exactly its one
// event and one delivery, and no key stays locked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { ADMIN_TOKEN, http, operator } from './helpers/harness.ts';
import { ownClusterUnavailable as skip, sql, startFaultRig, terminateServiceConnections, type FaultRig } from './helpers/own-cluster.ts';
import { createWebhook, runDeliveryJob } from './helpers/webhooks.ts';

const SECOND = 1000;
let rig: FaultRig | null = null;
const pgctl = (...args: string[]) => rig!.cluster.ctl(...args);
const serviceUrl = () => rig!.cluster.serviceUrl;

before(async () => {
  if (skip) return;
  rig = await startFaultRig(`merx_fault_${process.pid}`, { WORKERS: '0', LOG_LEVEL: 'info', DEPLOY_SHA: 'faulttest00' });
});

after(async () => {
  await rig?.close();
});

interface Write {
  key: string;
  orderId: string;
  note: string;
  /** The status of the last answer, or 0 when the connection failed. */
  status: number;
}

test(
  'terminated connections and a stopped database: the service stays up, answers 503 with Retry-After, recovers, and loses or doubles nothing',
  { skip, timeout: 240_000 },
  async () => {
    const { service: svc, cluster, receiver } = rig!;
    const op = operator(svc.url);
    const account = await op.createAccount();
    const key = await op.issueKey(account.id);
    const endpoint = receiver.endpoint('faults');
    endpoint.script([], { status: 200, body: 'ok' });
    const { data: subscription } = await createWebhook(svc.url, key, { url: endpoint.url, events: ['order.updated'] });
    const orders = await Promise.all([0, 1, 2, 3].map(() => op.checkout(account.id)));

    const writes: Write[] = [];
    const badAnswers: string[] = [];
    let running = true;
    const patch = async (write: Write) => {
      try {
        const res = await fetch(`${svc.url}/api/v1/orders/${write.orderId}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': write.key },
          body: JSON.stringify({ admin_notes: write.note }),
        });
        const text = await res.text();
        write.status = res.status;
        const fine = (res.status >= 200 && res.status < 300) || (res.status >= 400 && res.status < 500);
        const unavailable = res.status === 503 && Number(res.headers.get('retry-after')) > 0 && JSON.parse(text).error?.code === 'unavailable';
        if (!fine && !unavailable) badAnswers.push(`${res.status} ${res.headers.get('retry-after')} ${text.slice(0, 200)}`);
      } catch (err) {
        write.status = 0;
        badAnswers.push(`no answer: ${(err as Error).message}`);
      }
    };
    const writer = async (orderId: string) => {
      while (running) {
        const write: Write = { key: crypto.randomUUID(), orderId, note: `fault ${crypto.randomUUID()}`, status: -1 };
        writes.push(write);
        await patch(write);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const load = Promise.all(orders.map((o) => writer(o.id)));
    try {
      // Ten rounds of pg_terminate_backend on every connection of the service's database.
      for (let round = 0; round < 10; round++) {
        await new Promise((r) => setTimeout(r, 300));
        const killed = await terminateServiceConnections(cluster);
        assert.ok(killed > 0, `round ${round}: the service had connections to terminate`);
      }
      assert.equal(svc.process.exitCode, null, `the service is up after the terminations: ${svc.stderr().slice(-2000)}`);

      // The database stops for 10 s.
      pgctl('stop', '-m', 'fast');
      const stoppedAt = Date.now();
      let healthDuringOutage: { status: number; body: any } | null = null;
      while (Date.now() - stoppedAt < 10 * SECOND) {
        await new Promise((r) => setTimeout(r, 500));
        const res = await http(svc.url, 'GET', '/healthz');
        if (res.status === 503) healthDuringOutage = { status: res.status, body: res.body };
      }
      assert.ok(healthDuringOutage, '/healthz said 503 while the database was stopped');
      // MCP and the operator API are refused the same way while it is down.
      for (const [path, token, body] of [
        ['/api/mcp', key, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_orders', arguments: {} } }],
        ['/admin/api/accounts/' + account.id, ADMIN_TOKEN, undefined],
      ] as const) {
        const res = await http(svc.url, body ? 'POST' : 'GET', path, { token, body });
        assert.equal(res.status, 503, `${path} while the database is down: ${res.text}`);
        assert.ok(Number(res.headers.get('retry-after')) > 0, `${path}: Retry-After`);
        assert.equal(res.body.error.code, 'unavailable');
        assert.equal(res.body.error.details.reason, 'database_unavailable');
      }
      assert.deepEqual(healthDuringOutage.body.down, ['database']);
      assert.equal(healthDuringOutage.body.ok, false);

      pgctl('start');
      const startedAt = Date.now();
      let healthyAfterMs = -1;
      while (Date.now() - startedAt < 10 * SECOND) {
        const res = await http(svc.url, 'GET', '/healthz');
        if (res.status === 200 && res.body.ok === true) {
          healthyAfterMs = Date.now() - startedAt;
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(healthyAfterMs >= 0 && healthyAfterMs <= 2 * SECOND, `healthy within 2 s of the database (took ${healthyAfterMs} ms)`);
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      running = false;
      await load;
    }

    assert.equal(svc.process.exitCode, null, `the service is still up: ${svc.stderr().slice(-2000)}`);
    assert.deepEqual(badAnswers, [], 'every answer was 2xx, 4xx or 503 unavailable with Retry-After');
    const unavailable = writes.filter((w) => w.status === 503).length;
    assert.ok(unavailable > 0, 'some writes met the outage');
    // Writes succeeded before the outage and again after it: how many depends on how busy the machine is, not on the service.
    const counts = Object.entries(Object.groupBy(writes, (w) => String(w.status))).map(([status, list]) => `${status}: ${list!.length}`);
    console.log(`# writes by status: ${counts.join(', ')}`);
    const [first, last] = [writes.findIndex((w) => w.status === 503), writes.findLastIndex((w) => w.status === 503)];
    assert.ok(
      writes.slice(0, first).some((w) => w.status === 200),
      `writes went through before the outage (${counts.join(', ')})`,
    );
    assert.ok(
      writes.slice(last + 1).some((w) => w.status === 200),
      `and again after it (${counts.join(', ')})`,
    );
    // One line when the database went away and one when it came back, not a stack trace per request.
    const log = svc.stdout();
    assert.doesNotMatch(log, /"stack"/, 'no stack traces in the log');
    const outageLines = log.split('\n').filter((line) => /the database is (unreachable|reachable again)/.test(line));
    assert.equal(log.match(/the database is unreachable/g)?.length, 1, `one line when the database went away:\n${outageLines.join('\n')}`);
    assert.equal(log.match(/the database is reachable again/g)?.length, 1, `one line when it came back:\n${outageLines.join('\n')}`);

    // Every write not known to have succeeded is sent again with its key: a replay when it had committed, a first run when it had not.
    for (const write of writes.filter((w) => w.status !== 200)) {
      const deadline = Date.now() + 45 * SECOND;
      for (;;) {
        await patch(write);
        // A claim whose own commit was cut off is held until its 30 s lease lapses; nothing else may stay locked.
        if (write.status !== 409 || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      assert.equal(write.status, 200, `write ${write.key} settles with its key`);
    }
    const locked = await sql(serviceUrl(), 'SELECT key FROM idempotency_keys WHERE account_id = $1 AND response_status IS NULL', [account.id]);
    assert.deepEqual(locked, [], 'no idempotency key stays locked');

    // Exactly one order.updated event per write, and exactly one delivery per event.
    const events = await sql<{ id: string; note: string }>(
      serviceUrl(),
      "SELECT id, data->'order'->>'admin_notes' AS note FROM events WHERE account_id = $1 AND event = 'order.updated'",
      [account.id],
    );
    const perNote = new Map<string, number>();
    for (const e of events) perNote.set(e.note, (perNote.get(e.note) ?? 0) + 1);
    for (const write of writes) assert.equal(perNote.get(write.note), 1, `write ${write.key} has exactly one event`);
    assert.equal(events.length, writes.length, 'no event without its write');
    const deliveries = await sql<{ event_id: string; n: number }>(
      serviceUrl(),
      'SELECT event_id, count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 GROUP BY event_id',
      [subscription.id],
    );
    assert.equal(deliveries.length, events.length, 'every event has its delivery');
    assert.ok(
      deliveries.every((d) => d.n === 1),
      'and only one',
    );

    // Deliveries that met the outage are delivered by the worker afterwards. Each pass reads the clock 13 h on from the
    // last, past any retry an attempt of the previous pass scheduled (on a saturated machine some time out).
    for (let pass = 1; pass <= 10; pass++) {
      const later = new Date(Date.now() + pass * 13 * 3600 * SECOND);
      const [{ pending }] = await sql(
        serviceUrl(),
        "SELECT count(*)::int AS pending FROM webhook_deliveries WHERE webhook_id = $1 AND status <> 'delivered'",
        [subscription.id],
      );
      if (pending === 0) break;
      await runDeliveryJob(svc.url, later);
    }
    const left = await sql<{ n: number }>(
      serviceUrl(),
      `SELECT status, attempt, min(next_attempt_at) AS due, min(last_error) AS error, count(*)::int AS n FROM webhook_deliveries
        WHERE webhook_id = $1 AND status <> 'delivered' GROUP BY 1, 2`,
      [subscription.id],
    );
    const undelivered = left.reduce((sum, group) => sum + group.n, 0);
    assert.equal(undelivered, 0, `every delivery was delivered: ${JSON.stringify(left)}`);
  },
);
