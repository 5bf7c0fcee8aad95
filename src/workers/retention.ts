// The retention job: what each store keeps, and no longer.
import type { Db } from '../platform/db/db.ts';
import { pruneEvents } from '../modules/events/retention.ts';
import { pruneIdempotencyKeys } from '../platform/operations/idempotency.ts';
import { pruneRetiredSecrets } from '../modules/webhooks/subscriptions/commands.ts';
import { pruneRequestLogs } from '../modules/agents/request-log/log.ts';
import { pruneOAuth } from '../modules/oauth/retention.ts';

export async function runRetention(db: Db, now: Date): Promise<number> {
  return (
    (await pruneEvents(db, now)) +
    (await pruneIdempotencyKeys(db, now)) +
    (await pruneRetiredSecrets(db, now)) +
    (await pruneRequestLogs(db, now)) +
    (await pruneOAuth(db, now))
  );
}
