// Issue 27: a client that trickled its body held a request (and a socket)
// for over 100 s. A client has REQUEST_TIMEOUT_MS (30 s by default; 1.5 s
// here) to send its whole request, headers and body; then it gets 408
// request_timeout in the contract's shape, and the connection is closed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestService, freshTenant, type TestService } from './helpers/harness.ts';
import { loadConfig } from '../src/config.ts';

const TIMEOUT_MS = 1500;
let svc: TestService;
before(async () => {
  svc = await startTestService({ REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) });
});
after(async () => {
  await svc?.close();
});

/** Sends `head` at once, then one byte of `body` every `everyMs` until the server answers or closes; resolves with all it answered and when. */
function trickle(head: string, body: string, everyMs: number): Promise<{ text: string; ms: number }> {
  const { port } = new URL(svc.url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(Number(port), '127.0.0.1');
    let text = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (sent < body.length && !socket.destroyed) socket.write(body[sent++]);
      }, everyMs);
    });
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('error', () => {}); // a reset after the answer is expected
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ text, ms: performance.now() - started });
    });
    setTimeout(() => reject(new Error('the server held the connection for 20 s')), 20_000).unref();
  });
}

test('a body trickled slower than the request timeout: 408 request_timeout in the contract shape, connection closed, in about REQUEST_TIMEOUT_MS', async () => {
  const { key } = await freshTenant(svc.url);
  const body = JSON.stringify({ url: 'https://93.184.216.34/hook', events: ['order.created'] });
  const head =
    `POST /api/v1/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const { text, ms } = await trickle(head, body, 200);
  assert.match(text, /^HTTP\/1\.1 408 /, text);
  const answer = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
  assert.equal(answer.error.code, 'request_timeout');
  assert.match(text, /X-Deploy-SHA: /i);
  assert.ok(ms >= TIMEOUT_MS - 100 && ms < TIMEOUT_MS + 2500, `answered after ${ms.toFixed(0)} ms`);
});

test('headers trickled slower than the request timeout: 408 too', async () => {
  const { text, ms } = await trickle('', 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' + 'a'.repeat(200), 50);
  assert.match(text, /^HTTP\/1\.1 408 /, text);
  assert.ok(ms < TIMEOUT_MS + 2500, `answered after ${ms.toFixed(0)} ms`);
});

test('the default bound is 30 s and an operator may change it', () => {
  assert.equal(loadConfig({}).requestTimeoutMs, 30_000);
  assert.equal(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }).requestTimeoutMs, 5000);
});
