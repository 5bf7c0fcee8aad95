// Crash safety of webhook delivery (SPEC Receiver rules 3 and 4; DESIGN
// transactional outbox): the service runs as a child process (node
// src/main.ts) on a database that outlives it (PostgreSQL, or PGlite in a temp
// DATA_DIR); it is killed with SIGKILL between the commit of an event and the
// end of its first attempt, restarted on the same data, and the delivery job
// (operator API, with `now`) delivers every event written after the grace
// period: nothing is lost, delivery is at least once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { operator, ADMIN_TOKEN } from './helpers/harness.ts';
import { startHttpsReceiver, type HttpsReceiver } from './helpers/https-receiver.ts';
import {
  isolatedDatabase, createWebhook, deliveriesOf, touchOrder, runDeliveryJob, assertSignedDelivery, type IsolatedDatabase,
} from './helpers/webhooks.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECOND = 1000;

let receiver: HttpsReceiver;
// One database and port for the file: each scenario crashes and restarts the same service.
let data: IsolatedDatabase;
let port: number;
let child: Child | null = null;

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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

interface Child {
  url: string;
  process: ChildProcess;
  stderr(): string;
}

/** Starts `node src/main.ts` and waits for GET /healthz. */
async function startChild(port: number, data: IsolatedDatabase): Promise<Child> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('NODE_TEST') && k !== 'DATABASE_URL' && k !== 'DATA_DIR') env[k] = v;
  }
  Object.assign(env, data.env, {
    PORT: String(port),
    HOST: '127.0.0.1',
    ADMIN_TOKEN,
    SEED_DEMO: '0',
    WORKERS: '0',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    NODE_EXTRA_CA_CERTS: receiver.caFile,
    LOG_LEVEL: 'error',
    DEPLOY_SHA: 'crashtest00',
  });
  const child = spawn(process.execPath, ['src/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120 * SECOND;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the service exited during start-up (${child.exitCode ?? child.signalCode}): ${stderr}`);
    }
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service did not start within 120 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, process: child, stderr: () => stderr };
}

async function killHard(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.process.once('exit', () => resolve()));
  child.process.kill('SIGKILL');
  await exited;
}

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
    await killHard(child!);
    child = null;
    const seenBeforeCrash = endpoint.requests.length;

    // Restart on the same data; the receiver now answers.
    endpoint.script([], { status: 200, body: 'ok' });
    child = await startChild(port, data);

    const written = await deliveriesOf(child.url, key, sub.id);
    assert.equal(written.length, events, 'every committed event has its delivery after the crash');
    assert.ok(written.every((d) => d.status === 'pending'), 'none was settled before the crash');

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
      assert.ok(delivered.some((d) => d.event_id === r.headers['x-merx-event-id']), 'attempts before the crash were of the same events');
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
