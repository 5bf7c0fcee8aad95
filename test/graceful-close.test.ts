// A graceful stop with a request in flight on a keep-alive connection: the request is answered, and the connection is
// closed as soon as it falls idle, not when the keep-alive timeout (72 s) ends it. Before, a service delivering
// webhooks to its own sink took a minute to stop whenever a delivery was in flight as it began to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { ADMIN_TOKEN, startTestService } from './helpers/harness.ts';

test('a request in flight when the service stops is answered, then its keep-alive connection is closed and the stop ends', async () => {
  const svc = await startTestService();
  const { port, hostname } = new URL(svc.url);
  const socket = net.connect(Number(port), hostname);
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  const closedByServer = new Promise<void>((resolve) => socket.once('close', () => resolve()));

  const body = JSON.stringify({ name: 'Closing', email: 'closing@example.com' });
  // Headers and half the body: the request is in flight.
  socket.write(
    `POST /admin/api/accounts HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  let stopped = false;
  const stopping = svc.close().then(() => (stopped = true));
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(stopped, false, 'the stop waits for the request in flight');
  socket.write(body.slice(10));

  // A generous bound, far under the 72 s the connection would otherwise stay open.
  const bound = new Promise<'bound'>((resolve) => setTimeout(() => resolve('bound'), 20_000).unref());
  assert.notEqual(await Promise.race([closedByServer.then(() => 'closed'), bound]), 'bound', 'the server closed the idle connection');
  assert.notEqual(await Promise.race([stopping.then(() => 'stopped'), bound]), 'bound', 'and the stop ended');
  assert.match(received, /^HTTP\/1\.1 201 /, 'the request in flight was answered');
  socket.destroy();
});
