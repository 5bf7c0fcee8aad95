// EXTENSIONS 6 Attempt view: one attempt of a delivery as the attempt log
// shows it. Declared here, in one place (schema and read), to be converted to
// the platform's view declarations later.
import { Type } from 'typebox';
import type { Sql } from '../../../platform/db/db.ts';
import { notFound } from '../../../platform/contract/errors.ts';
import { ATTEMPT_TRIGGERS, type AttemptRow } from './log.ts';
import { Closed, DateTime, Nullable } from '../../../platform/contract/schema.ts';

const Headers = (description: string) => Type.Record(Type.String(), Type.String(), { description });

export const Attempt = Closed(
  {
    number: Type.Integer({ minimum: 1, description: '1, 2, ... in the order the attempts were made.' }),
    trigger: Type.Unsafe<(typeof ATTEMPT_TRIGGERS)[number]>({
      type: 'string',
      enum: [...ATTEMPT_TRIGGERS],
      description: 'What made it: the automatic schedule, the retry endpoint, a recovery, or the test endpoint.',
    }),
    started_at: DateTime(),
    duration_ms: Type.Integer({ minimum: 0 }),
    url: Type.String(),
    request_headers: Headers('The request headers as sent, signature headers included (names in lower case); empty when nothing was sent.'),
    response_status: Nullable('integer'),
    response_headers: Type.Union([Headers('At most 20 headers, each value at most 200 characters.'), Type.Null()]),
    response_body: Nullable('string', { description: 'The first 1000 characters of the answer.' }),
    error: Nullable('string', {
      description:
        'One English sentence when the attempt failed without an answer or with a redirect: timeout, connection refused, TLS, DNS, redirect not followed, URL refused by the policy.',
    }),
  },
  { $id: 'WebhookAttempt' },
);

/** An attempt as the log keeps it, numbered in the order made. */
type AttemptRecord = Omit<AttemptRow, 'account_id' | 'webhook_id' | 'delivery_id' | 'outcome'> & { number: number };

/** Every attempt of the account's delivery, oldest first; 404 for a delivery of another account. */
export async function listAttempts(sql: Sql, accountId: string, deliveryId: string): Promise<AttemptRecord[]> {
  const found = await sql.query('SELECT 1 FROM webhook_deliveries WHERE account_id = $1 AND id = $2', [accountId, deliveryId]);
  if (!found.rowCount) throw notFound('webhook delivery');
  const { rows } = await sql.query<AttemptRecord & { request_headers: unknown; response_headers: unknown }>(
    `SELECT (row_number() OVER (ORDER BY started_at, id))::int AS number, trigger, started_at, duration_ms, url,
            request_headers, response_status, response_headers, response_body, error
       FROM webhook_attempts WHERE delivery_id = $1 AND account_id = $2
      ORDER BY started_at, id`,
    [deliveryId, accountId],
  );
  // jsonb comes back parsed from pg and as text from some drivers: one shape either way.
  const object = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
  return rows.map((r) => ({
    ...r,
    request_headers: object(r.request_headers),
    response_headers: r.response_headers === null ? null : object(r.response_headers),
  }));
}
