// The webhook sender's own thread (webhooks/delivery/sender-thread.ts):
// attempts handed over from the request loop come back with the outcome
// Senders gives (2xx, non-2xx with the answer kept, connection refused), signed
// as SPEC says, many in one message; the thread starts again after close(), and
// runs at the nice value it was given (Linux).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { loadConfig } from '../src/config.ts';
import { ThreadedSenders } from '../src/modules/webhooks/delivery/sender-thread.ts';
import { verifyMerxSignature } from '../src/modules/webhooks/signing/signature.ts';
import type { CheckedTarget } from '../src/modules/webhooks/subscriptions/url-policy.ts';
import { startHttpsReceiver } from './helpers/https-receiver.ts';

const receiver = await startHttpsReceiver();
process.env.NODE_EXTRA_CA_CERTS = receiver.caFile; // set after start: the thread shares this process's environment
const senders = new ThreadedSenders();
after(async () => {
  await senders.close();
  await receiver.close();
});

const remote = (url: string): CheckedTarget => ({ kind: 'remote', url: new URL(url), address: '127.0.0.1', family: 4 });
const delivery = (n: number) => ({
  rawBody: JSON.stringify({ id: `evt_${n}`, event: 'order.updated', data: { n } }),
  secrets: ['whsec_thread_test'],
  event: 'order.updated',
  eventId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  attemptId: `attempt-${n}`,
});

async function refusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('attempts sent from the thread come back with their outcomes, signed', async () => {
  const endpoint = receiver.endpoint('thread');
  endpoint.script([
    { status: 200, body: 'ok' },
    { status: 500, body: 'nope' },
  ]);
  const refused = await refusedPort();
  const [delivered, failed, unreachable] = await Promise.all([
    senders.send(remote(endpoint.url), delivery(1), null),
    senders.send(remote(endpoint.url), delivery(2), null),
    senders.send(remote(`https://127.0.0.1:${refused}/hook`), delivery(3), null),
  ]);
  // The receiver answers in arrival order; which of the first two arrived first is up to the connections.
  const byCode = [delivered, failed].sort((a, b) => (a.statusCode ?? 0) - (b.statusCode ?? 0));
  // The attempt log's extras (request and response headers) ride along; the outcome proper is these three.
  assert.deepEqual(
    byCode.map(({ statusCode, error, responseBody }) => ({ statusCode, error, responseBody })),
    [
      { statusCode: 200, error: null, responseBody: 'ok' },
      { statusCode: 500, error: 'HTTP 500', responseBody: 'nope' },
    ],
  );
  assert.equal(unreachable.statusCode, null);
  assert.match(unreachable.error ?? '', /^connection: .*ECONNREFUSED/);
  assert.equal(endpoint.requests.length, 2);
  for (const r of endpoint.requests) {
    assert.equal(r.headers['x-merx-event'], 'order.updated');
    assert.equal(verifyMerxSignature(r.rawBody, r.headers['x-merx-signature'] as string, 'whsec_thread_test'), true, 'signed with the secret');
  }
});

test('many attempts at once each get their own outcome; after close() the next attempt starts the thread again', async () => {
  const endpoint = receiver.endpoint('thread-many');
  const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => senders.send(remote(endpoint.url), delivery(100 + i), null)));
  assert.ok(outcomes.every((o) => o.statusCode === 200));
  assert.equal(new Set(endpoint.requests.map((r) => r.headers['x-merx-delivery'])).size, 50);

  await senders.close();
  const again = await senders.send(remote(endpoint.url), delivery(200), null);
  assert.equal(again.statusCode, 200);
});

test('a sender thread that dies mid-attempt answers that attempt as a failed one (retried on schedule), and the next attempt gets a new thread', async () => {
  const endpoint = receiver.endpoint('thread-dies');
  endpoint.script([{ hang: true }, { status: 200 }]);
  const hanging = senders.send(remote(endpoint.url), delivery(300), null);
  await endpoint.waitFor(1);
  await (senders as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
  const outcome = await hanging;
  assert.equal(outcome.statusCode, null);
  assert.match(outcome.error ?? '', /^connection: the sender thread exited/);
  assert.equal((await senders.send(remote(endpoint.url), delivery(301), null)).statusCode, 200);
});

/** The nice value of each thread of this process (Linux /proc: field 19 of a task's stat, counted after the command's closing parenthesis). */
function threadNiceValues(): number[] {
  return fs.readdirSync('/proc/self/task').map((tid) => {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

test('the thread runs at the nice value it was given, the request loop at its own (Linux)', { skip: process.platform !== 'linux' }, async () => {
  const before = threadNiceValues();
  assert.ok(!before.includes(7));
  const yielding = new ThreadedSenders({ nice: 7 });
  try {
    assert.equal((await yielding.send(remote(receiver.endpoint('thread-nice').url), delivery(400), null)).statusCode, 200);
    assert.equal(threadNiceValues().filter((nice) => nice === 7).length, 1, 'one thread, the sender, at nice 7');
    assert.equal(os.getPriority(), 0, 'the request loop keeps its priority');
  } finally {
    await yielding.close();
  }
});

test('WEBHOOK_SENDER_NICE: 19 unless set, 0-19 accepted, anything else refused at start-up', () => {
  assert.equal(loadConfig({}).webhookSenderNice, 19);
  assert.equal(loadConfig({ WEBHOOK_SENDER_NICE: '0' }).webhookSenderNice, 0);
  assert.throws(() => loadConfig({ WEBHOOK_SENDER_NICE: '20' }), /WEBHOOK_SENDER_NICE must be an integer between 0 and 19/);
  assert.throws(() => loadConfig({ WEBHOOK_SENDER_NICE: '-1' }), /WEBHOOK_SENDER_NICE must be an integer between 0 and 19/);
});
