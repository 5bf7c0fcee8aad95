// EXTENSIONS 7: how an approval says what an event would reach, e.g.
// "order.status_changed to 2 subscriptions". Other rooms call this when they
// describe the effects of one of their writes.
import type { Sql } from '../../platform/db/db.ts';

/** "<event> to N subscriptions": the account's active subscriptions to the event now. */
export async function eventEffect(sql: Sql, accountId: string, event: string): Promise<string> {
  const { rows } = await sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webhook_subscriptions WHERE account_id = $1 AND active AND $2 = ANY(events)',
    [accountId, event],
  );
  const n = rows[0].n;
  return `${event} to ${n} subscription${n === 1 ? '' : 's'}`;
}
