// Routine outcomes, recorded in batches (recordRoutineOutcomes), on both
// databases: an outcome is recorded only while its delivery is still on that
// attempt, so a first attempt's late answer never overwrites what a manual
// retry or a job run recorded since; the subscription's last_status_code is
// that of the latest outcome recorded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClaimedDelivery } from '../src/modules/webhooks/delivery/deliveries.ts';
import { recordRoutineOutcomes, type RoutineOutcome } from '../src/modules/webhooks/delivery/outcomes.ts';
import { pendingDeliveries, subscriptionDatabase } from './helpers/webhooks.ts';
import { attemptRow } from '../src/modules/webhooks/attempts/log.ts';

test('an outcome is recorded only for the attempt its delivery is still on', async () => {
  const { db, accountId, webhookId, close } = await subscriptionDatabase('Outcomes');
  try {
    // Two deliveries on attempt 1; the second was then taken by a retry (attempt 2) that was delivered.
    const [current, retried] = await pendingDeliveries(db, accountId, webhookId, 2, 1);
    await db.query(`UPDATE webhook_deliveries SET attempt = 2, status = 'delivered', last_status_code = 204, delivered_at = now() WHERE id = $1`, [
      retried,
    ]);

    const firstAttempt = (id: string, statusCode: number): RoutineOutcome => ({
      delivery: { id, webhook_id: webhookId, attempt: 1 } as ClaimedDelivery,
      outcome: { statusCode, error: statusCode >= 300 ? `HTTP ${statusCode}` : null, responseBody: null },
      settlement: statusCode < 300 ? 'delivered' : 'retry_later',
      now: new Date().toISOString(),
      log: attemptRow(
        { id, webhook_id: webhookId, account_id: accountId, url: 'https://example.com/' },
        { statusCode, error: null, responseBody: null },
        'automatic',
        new Date(),
        1,
      ),
    });
    const recorded = await recordRoutineOutcomes(db, [firstAttempt(current, 200), firstAttempt(retried, 500)]);
    assert.deepEqual(recorded, [true, false]);

    const after = await db.query<{ id: string; status: string; attempt: number; last_status_code: number | null }>(
      'SELECT id, status, attempt, last_status_code FROM webhook_deliveries WHERE id = ANY($1::uuid[])',
      [[current, retried]],
    );
    const byId = new Map(after.rows.map((r) => [r.id, r]));
    assert.deepEqual({ ...byId.get(current) }, { id: current, status: 'delivered', attempt: 1, last_status_code: 200 });
    assert.deepEqual(
      { ...byId.get(retried) },
      { id: retried, status: 'delivered', attempt: 2, last_status_code: 204 },
      'the late 500 of attempt 1 changed nothing',
    );
    const sub = await db.query<{ last_status_code: number }>('SELECT last_status_code FROM webhook_subscriptions WHERE id = $1', [webhookId]);
    assert.equal(sub.rows[0].last_status_code, 200, 'the subscription shows the outcome that was recorded');
  } finally {
    await close();
  }
});
