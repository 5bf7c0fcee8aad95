// One event of an account by id (the operator console's link from a request
// log entry to the events it committed, EXTENSIONS 7).
import type { Sql } from '../../platform/db/db.ts';
import { envelopeJson } from '../../platform/db/outbox.ts';
import { notFound } from '../../platform/contract/errors.ts';

export async function findEvent(sql: Sql, accountId: string, eventId: string): Promise<Record<string, unknown>> {
  const { rows } = await sql.query<{ envelope: Record<string, unknown> }>(
    `SELECT ${envelopeJson('e')} AS envelope FROM events e WHERE e.account_id = $1 AND e.id = $2`,
    [accountId, eventId],
  );
  if (!rows[0]) throw notFound('event');
  return rows[0].envelope;
}
