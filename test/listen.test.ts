// Issue 28: `npx merx listen --forward-to <local url>` follows the events feed
// and POSTs each envelope to a receiver on this machine, signed with both
// schemes with the secret it prints. The receiver here verifies every request
// with merx-client/webhooks (the package's source) and with the
// `standardwebhooks` package, as an integrator's would.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Webhook } from 'standardwebhooks';
import { verifyMerxSignature, verifyStandardWebhook, constructEvent } from '../packages/client/src/webhooks.ts';
import { startTestService, freshTenant, type TestService } from './helpers/harness.ts';
import { touchOrder } from './helpers/webhooks.ts';
import { freePort } from './helpers/service-child.ts';

const ROOT = path.join(import.meta.dirname, '..');
let svc: TestService;

before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.close();
});

interface Received {
  envelope: any;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
}

/** What the receiver's verifiers say of one request, with the secret the listener printed (known once it is ready). */
function checks(r: Received, secrets: { hex: string; whsec: string }) {
  const h = r.headers as Record<string, string>;
  let constructed = true;
  try {
    constructEvent(r.raw, r.headers, secrets.hex);
  } catch {
    constructed = false;
  }
  let standardPackage = true;
  try {
    new Webhook(secrets.whsec).verify(r.raw.toString('utf8'), {
      'webhook-id': h['webhook-id'],
      'webhook-timestamp': h['webhook-timestamp'],
      'webhook-signature': h['webhook-signature'],
    });
  } catch {
    standardPackage = false;
  }
  return {
    constructed,
    merx: verifyMerxSignature(r.raw, h['x-merx-signature'], secrets.hex),
    standard: verifyStandardWebhook(
      r.raw,
      { id: h['webhook-id'], timestamp: h['webhook-timestamp'], signature: h['webhook-signature'] },
      secrets.hex,
    ),
    standardPackage,
  };
}

/** A receiver on 127.0.0.1 that keeps each request's raw body and headers, and answers 204. */
async function startReceiver(port = 0) {
  const received: Received[] = [];
  const secrets = { hex: '', whsec: '' };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      received.push({ envelope: JSON.parse(raw.toString('utf8')), headers: req.headers, raw });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    received,
    secrets,
    verified: (r: Received) => checks(r, secrets),
    url: `http://127.0.0.1:${address.port}/hooks`,
    port: address.port,
    close: () => new Promise((r) => server.close(r)),
  };
}

interface Listener {
  child: ChildProcess;
  output(): string;
  secret: string;
  whsec: string;
  stop(): Promise<void>;
}

/** `node bin/merx.js listen ...`, as `npx merx listen` runs it; waits for its Ready line. Key and base URL from the environment. */
async function startListener(args: string[], env: Record<string, string>): Promise<Listener> {
  const child = spawn(process.execPath, ['bin/merx.js', 'listen', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: '', DATA_DIR: '/nonexistent/merx-listen-needs-no-database', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const deadline = Date.now() + 30_000;
  while (!out.includes('Ready.')) {
    if (child.exitCode !== null) throw new Error(`merx listen exited ${child.exitCode}: ${out}`);
    if (Date.now() > deadline) throw new Error(`merx listen did not get ready: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    output: () => out,
    secret: /X-Merx-Signature[^\n]*?([0-9a-f]{64})/.exec(out)![1],
    whsec: /(whsec_[A-Za-z0-9+/=]+)/.exec(out)![1],
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await exited;
    },
  };
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('events created through the API arrive at the local receiver, verified by both schemes and both libraries; --events filters; --since replays', async () => {
  const tenant = await freshTenant(svc.url);
  const before = new Date().toISOString();
  const earlier = await tenant.op.checkout(tenant.accountId); // before any listener: only --since sees it

  const all = await startReceiver();
  const filtered = await startReceiver();
  const listenAll = await startListener(['--forward-to', all.url], { MERX_API_KEY: tenant.key, MERX_BASE_URL: svc.url });
  const listenCreated = await startListener(
    ['--forward-to', filtered.url, '--events', 'order.created', '--key', tenant.key, '--base-url', svc.url],
    {},
  );
  try {
    Object.assign(all.secrets, { hex: listenAll.secret, whsec: listenAll.whsec });
    Object.assign(filtered.secrets, { hex: listenCreated.secret, whsec: listenCreated.whsec });
    assert.notEqual(listenAll.secret, listenCreated.secret, 'each listener draws its own secret');
    assert.equal(listenAll.whsec, `whsec_${Buffer.from(listenAll.secret).toString('base64')}`);

    const order = await tenant.op.checkout(tenant.accountId);
    await touchOrder(svc.url, tenant.key, order.id, 'seen by merx listen');
    const updated = await until('order.updated at the receiver', () => all.received.find((r) => r.envelope.event === 'order.updated'));
    const created = all.received.find((r) => r.envelope.event === 'order.created' && r.envelope.data.order.id === order.id);
    assert.ok(created, `order.created arrived: ${all.received.map((r) => r.envelope.event).join(', ')}`);
    assert.equal(updated.envelope.data.order.admin_notes, 'seen by merx listen');
    assert.ok(!all.received.some((r) => r.envelope.data.order?.id === earlier.id), 'from now: the earlier order is not forwarded');
    for (const r of all.received) {
      assert.deepEqual(
        all.verified(r),
        { constructed: true, merx: true, standard: true, standardPackage: true },
        `${r.envelope.event} verifies with both schemes`,
      );
      assert.equal(r.headers['webhook-id'], r.envelope.id);
      assert.equal(r.headers['x-merx-event'], r.envelope.event);
      assert.equal(r.headers['x-merx-event-id'], r.envelope.id);
      assert.equal(r.headers['content-type'], 'application/json');
    }
    // The feed serves the same envelopes: the receiver got them unchanged.
    const feed = await (
      await fetch(`${svc.url}/api/v1/events?since=${encodeURIComponent(before)}`, { headers: { authorization: `Bearer ${tenant.key}` } })
    ).json();
    assert.deepEqual(
      updated.envelope,
      feed.data.find((e: any) => e.id === updated.envelope.id),
    );
    // One line per event: time, type, id, the receiver's status and time taken.
    await until('the line for order.updated', () => listenAll.output().includes(updated.envelope.id));
    assert.match(listenAll.output(), new RegExp(`\\d\\d:\\d\\d:\\d\\d\\s+order\\.updated\\s+${updated.envelope.id}\\s+<-- 204 \\(\\d+ ms\\)`));

    await until('order.created at the filtered receiver', () => filtered.received.find((r) => r.envelope.data.order?.id === order.id));
    await new Promise((r) => setTimeout(r, 1500)); // a poll or more after order.updated was in the feed
    assert.deepEqual([...new Set(filtered.received.map((r) => r.envelope.event))], ['order.created'], '--events order.created forwards nothing else');
    assert.ok(filtered.received.every((r) => filtered.verified(r).merx && filtered.verified(r).standardPackage));
  } finally {
    await listenAll.stop();
    await listenCreated.stop();
  }

  // --since replays what happened before the listener started.
  const replay = await startReceiver();
  const listenSince = await startListener(['--forward-to', replay.url, '--since', before, '--key', tenant.key, '--base-url', svc.url], {});
  try {
    Object.assign(replay.secrets, { hex: listenSince.secret, whsec: listenSince.whsec });
    const replayed = await until('the earlier order replayed', () =>
      replay.received.find((r) => r.envelope.event === 'order.created' && r.envelope.data.order.id === earlier.id),
    );
    assert.deepEqual(replay.verified(replayed), { constructed: true, merx: true, standard: true, standardPackage: true });
    await until('every event since then', () => replay.received.length >= all.received.length + 1);
    const ids = replay.received.map((r) => r.envelope.id);
    assert.equal(new Set(ids).size, ids.length, 'each event once');
  } finally {
    await listenSince.stop();
    await Promise.all([all.close(), filtered.close(), replay.close()]);
  }
});

test('a receiver that is down: the listener says so, retries, moves on, and forwards again once it is back', async () => {
  const tenant = await freshTenant(svc.url);
  const port = await freePort();
  const listener = await startListener(['--forward-to', `http://127.0.0.1:${port}/hooks`, '--key', tenant.key, '--base-url', svc.url], {});
  try {
    const lost = await tenant.op.checkout(tenant.accountId);
    await until('the give-up line', () => /gave up after 4 attempts, moving on/.test(listener.output()), 40_000);
    assert.match(listener.output(), /receiver down at http:\/\/127\.0\.0\.1:\d+\/hooks \(ECONNREFUSED\); retry 1\/3/);
    assert.equal(listener.child.exitCode, null, 'it keeps running');

    const receiver = await startReceiver(port);
    Object.assign(receiver.secrets, { hex: listener.secret, whsec: listener.whsec });
    const next = await tenant.op.checkout(tenant.accountId);
    const arrived = await until('the next event', () => receiver.received.find((r) => r.envelope.data.order?.id === next.id));
    assert.deepEqual(receiver.verified(arrived), { constructed: true, merx: true, standard: true, standardPackage: true });
    assert.ok(!receiver.received.some((r) => r.envelope.data.order?.id === lost.id), 'the event it gave up on is not sent again');
    await receiver.close();
  } finally {
    await listener.stop();
  }
});

test('refusals: no key, a key the service refuses, a bad --forward-to: one line on stderr and exit 1', async () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, ['bin/merx.js', 'listen', ...args], {
        cwd: ROOT,
        env: { ...process.env, MERX_API_KEY: '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (out += c));
      child.on('exit', (code) => resolve({ code, out }));
    });
  const noKey = await run(['--forward-to', 'http://localhost:4000/hooks', '--base-url', svc.url]);
  assert.equal(noKey.code, 1);
  assert.match(noKey.out, /merx: an API key is needed/);
  const badKey = await run(['--forward-to', 'http://localhost:4000/hooks', '--base-url', svc.url, '--key', 'merx_not_a_key']);
  assert.equal(badKey.code, 1);
  assert.match(badKey.out, /merx: GET .*\/api\/v1\/events: 401/);
  const badUrl = await run(['--forward-to', 'localhost:4000', '--key', 'k']);
  assert.equal(badUrl.code, 1);
  assert.match(badUrl.out, /--forward-to must be an/);
});
