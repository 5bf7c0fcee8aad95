// The delivery engine's batched bookkeeping reads its rows by primary key, on
// both databases, however young the table's statistics: a plan that scans
// every delivery for each batch of outcomes costs more the longer the service
// runs. Plans only (EXPLAIN), never timings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClaimedDelivery } from '../src/modules/webhooks/delivery/deliveries.ts';
import { routineOutcomesStatement, type RoutineOutcome } from '../src/modules/webhooks/delivery/outcomes.ts';
import { pendingDeliveries, subscriptionDatabase } from './helpers/webhooks.ts';
import { attemptRow } from '../src/modules/webhooks/attempts/log.ts';

const DELIVERIES = 3_000;

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function planNodes(plan: Record<string, unknown>): Array<Record<string, unknown>> {
  const children = (plan.Plans as Array<Record<string, unknown>> | undefined) ?? [];
  return [plan, ...children.flatMap(planNodes)];
}

test('recording a batch of outcomes finds its deliveries by primary key, not by scanning them all, before any ANALYZE', async () => {
  const { db, accountId, webhookId, close } = await subscriptionDatabase('Plans');
  try {
    // A table that grew since the last ANALYZE (none here): what a busy service's deliveries table looks like between autovacuums.
    const ids = await pendingDeliveries(db, accountId, webhookId, DELIVERIES);
    assert.equal(ids.length, DELIVERIES);

    const outcomes: RoutineOutcome[] = ids.slice(0, 8).map((id) => ({
      delivery: { id, webhook_id: webhookId, attempt: 1 } as ClaimedDelivery,
      outcome: { statusCode: 200, error: null, responseBody: 'ok' },
      settlement: 'delivered',
      now: new Date().toISOString(),
      log: attemptRow(
        { id, webhook_id: webhookId, account_id: accountId, url: 'https://example.com/' },
        { statusCode: 200, error: null, responseBody: 'ok' },
        'automatic',
        new Date(),
        1,
      ),
    }));
    const { text, values } = routineOutcomesStatement(outcomes);
    const explained = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
    const raw = explained.rows[0]['QUERY PLAN'];
    const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: Record<string, unknown> }>;
    const scans = planNodes(plan[0].Plan).filter((n) => n['Relation Name'] === 'webhook_deliveries');
    assert.ok(scans.length > 0, 'the plan reads webhook_deliveries');
    for (const scan of scans) {
      assert.notEqual(scan['Node Type'], 'Seq Scan', `webhook_deliveries is read by ${String(scan['Node Type'])}, not scanned whole`);
    }
  } finally {
    await close();
  }
});
