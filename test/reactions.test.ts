// Reactions to domain events are wired in the composition root (app.ts
// subscribeReactions), not by importing a module: an app built with
// `reactions: false` writes its events and nobody reacts to them, while the
// usual app fans each event out to the webhook subscriptions.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, freshTenant, type TestService } from './helpers/harness.ts';
import { sinkSubscription } from './helpers/webhooks.ts';

const started: TestService[] = [];
after(async () => {
  for (const svc of started) await svc.close();
});

async function eventsAndDeliveries(svc: TestService) {
  const { op, accountId, key } = await freshTenant(svc.url);
  await sinkSubscription(svc, key, ['order.created']);
  await op.checkout(accountId);
  const count = async (table: string) =>
    Number((await svc.service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`, [accountId])).rows[0].n);
  return { events: await count('events'), deliveries: await count('webhook_deliveries') };
}

test('an app built without reactions writes its events but fans nothing out', async () => {
  const quiet = await startTestService({ WORKERS: '0' }, { reactions: false });
  started.push(quiet);
  const seen = await eventsAndDeliveries(quiet);
  assert.ok(seen.events >= 1, 'order.created is in the outbox');
  assert.equal(seen.deliveries, 0, 'no webhook delivery without the fan-out subscription');
  await quiet.close();
  started.pop();

  const usual = await startTestService({ WORKERS: '0' });
  started.push(usual);
  const fanned = await eventsAndDeliveries(usual);
  assert.equal(fanned.deliveries, 1, 'the usual app fans order.created out to the subscription');
});
