// EXTENSIONS 6 Recovery view: a recovery of a window of deliveries, with its
// progress. Declared here, in one place (schema and read), to be converted to
// the platform's view declarations later.
import { Type } from 'typebox';
import type { Sql } from '../../../platform/db/db.ts';
import { notFound } from '../../../platform/contract/errors.ts';
import { Closed, DateTime, NullableDateTime, Uuid } from '../../../platform/contract/schema.ts';

export const RECOVERY_STATES = ['running', 'done', 'cancelled', 'stopped'] as const;
export const RECOVERABLE_STATUSES = ['failed', 'dead', 'pending'] as const;

export const Recovery = Closed(
  {
    id: Uuid(),
    webhook_id: Uuid(),
    state: Type.Unsafe<(typeof RECOVERY_STATES)[number]>({
      type: 'string',
      enum: [...RECOVERY_STATES],
      description:
        'running, then done (every matched delivery taken), cancelled, or stopped (10 failed attempts in a row, or the endpoint answered 410).',
    }),
    since: DateTime(),
    until: DateTime(),
    statuses: Type.Array(Type.Unsafe<(typeof RECOVERABLE_STATUSES)[number]>({ type: 'string', enum: [...RECOVERABLE_STATUSES] })),
    matched: Type.Integer({ description: 'Deliveries in the window with one of the statuses when the recovery started.' }),
    attempted: Type.Integer({ description: 'Deliveries taken so far (each once).' }),
    delivered: Type.Integer(),
    failed: Type.Integer(),
    started_at: DateTime(),
    finished_at: NullableDateTime({ description: 'Null while running.' }),
  },
  { $id: 'WebhookRecovery' },
);

export const RECOVERY_COLUMNS = 'id, webhook_id, state, since, until, statuses, matched, attempted, delivered, failed, started_at, finished_at';

export interface RecoveryRecord {
  id: string;
  webhook_id: string;
  state: (typeof RECOVERY_STATES)[number];
  since: string;
  until: string;
  statuses: Array<(typeof RECOVERABLE_STATUSES)[number]>;
  matched: number;
  attempted: number;
  delivered: number;
  failed: number;
  started_at: string;
  finished_at: string | null;
}

export async function getRecovery(sql: Sql, accountId: string, webhookId: string, recoveryId: string): Promise<RecoveryRecord> {
  const { rows } = await sql.query<RecoveryRecord>(
    `SELECT ${RECOVERY_COLUMNS} FROM webhook_recoveries WHERE account_id = $1 AND webhook_id = $2 AND id = $3`,
    [accountId, webhookId, recoveryId],
  );
  if (!rows[0]) throw notFound('recovery');
  return rows[0];
}
