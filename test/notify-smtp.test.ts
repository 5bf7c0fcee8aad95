// SMTP_URL: customer notices go out through SMTP once the change has committed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { SMTPServer } from 'smtp-server';
import { startTestService, freshTenant, http, type TestService } from './helpers/harness.ts';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

const received: Received[] = [];
let smtp: SMTPServer;
let svc: TestService;

before(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      stream.on('end', () => {
        received.push({
          from: String(session.envelope.mailFrom && session.envelope.mailFrom.address),
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as { port: number }).port;
  svc = await startTestService({ SMTP_URL: `smtp://127.0.0.1:${port}` });
});

after(async () => {
  await svc.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

async function waitFor<T>(check: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('the shipped notice is sent over SMTP and recorded as sent via smtp', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId, { customer: { name: 'Ana', email: 'ana.smtp@example.com', phone: '+359888000111' } });
  const res = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { status: 'shipped', tracking_number: 'TRK-SMTP-1' } });
  assert.equal(res.status, 200);
  assert.equal(res.body.email_sent, true);
  const mail = await waitFor(() => received.find((m) => m.to.includes('ana.smtp@example.com')), 'the email');
  assert.match(mail.raw, /has shipped/);
  assert.match(mail.raw, /TRK-SMTP-1/);
  const { rows } = await svc.service.db.query("SELECT sent_via FROM outbound_messages WHERE account_id = $1 AND channel = 'email'", [accountId]);
  assert.deepEqual(
    rows.map((r: any) => r.sent_via),
    ['smtp'],
  );
});

test('a dry run sends nothing', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId, { customer: { name: 'Bo', email: 'bo.smtp@example.com', phone: null } });
  const before = received.length;
  const res = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, {
    token: key,
    headers: { 'x-merx-dry-run': '1' },
    body: { status: 'shipped' },
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.would_notify_customer, true);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(received.length, before);
  assert.ok(!received.some((m) => m.to.includes('bo.smtp@example.com')));
});
