// The webhook operations screens (EXTENSIONS 6) for docs/screenshots: an
// account whose endpoint failed three deliveries, then the console walk of
// test/browser/console-webhook-ops.ts (health, attempts, a recovery).
// Part of npm run screenshots; `node scripts/webhook-ops-screens.ts` takes these alone.
import type { Browser } from 'playwright-core';
import { ADMIN_TOKEN, http, operator, startTestService, type TestService } from '../test/helpers/harness.ts';
import { createWebhook, eventually, touchOrder } from '../test/helpers/webhooks.ts';
import { walkWebhookOps } from '../test/browser/console-webhook-ops.ts';
import type { ReceiverEndpoint } from '../test/helpers/https-receiver.ts';

export async function webhookOpsScreens(o: {
  svc: TestService;
  browser: Browser;
  baseUrl: string;
  endpoint: ReceiverEndpoint;
  shotsDir: string;
}): Promise<string[]> {
  const op = operator(o.svc.url);
  const account = await op.createAccount({ name: 'Lamps & Co' });
  const key = await op.issueKey(account.id);
  o.endpoint.script([], { status: 500, body: 'down for maintenance' });
  const { data: sub } = await createWebhook(o.svc.url, key, { url: o.endpoint.url, events: ['order.updated'], description: 'ERP integration' });
  const order = await op.checkout(account.id);
  for (let i = 0; i < 3; i++) await touchOrder(o.svc.url, key, order.id, `note ${i}`);
  await eventually(async () => {
    const res = await http(o.svc.url, 'GET', `/api/v1/webhooks/${sub.id}/deliveries`, { token: key });
    return res.body.data.filter((d: any) => d.last_status_code === 500).length === 3;
  }, 'three failed first attempts');
  o.endpoint.script([], { status: 200, body: 'ok' });
  return (
    await walkWebhookOps({
      browser: o.browser,
      baseUrl: o.baseUrl,
      adminToken: ADMIN_TOKEN,
      accountId: account.id,
      webhookId: sub.id,
      failed: 3,
      shotsDir: o.shotsDir,
    })
  ).screenshots;
}

if (import.meta.main) {
  const path = await import('node:path');
  const { launchChromium } = await import('../test/helpers/browser.ts');
  const { startHttpsReceiver } = await import('../test/helpers/https-receiver.ts');
  const receiver = await startHttpsReceiver();
  process.env.NODE_EXTRA_CA_CERTS = receiver.caFile;
  const svc = await startTestService({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
  const browser = await launchChromium();
  try {
    const files = await webhookOpsScreens({
      svc,
      browser,
      baseUrl: svc.url,
      endpoint: receiver.endpoint('console-ops'),
      shotsDir: path.join(import.meta.dirname, '../docs/screenshots'),
    });
    for (const file of files) process.stdout.write(`${file}\n`);
  } finally {
    await browser.close();
    await svc.close();
    await receiver.close();
  }
}
