// Webhook subscriptions, written (SPEC Webhook subscription; GAPS Webhooks):
// create, change, delete, rotate the secret, prune retired secrets.
import crypto from 'node:crypto';
import type { Sql } from '../../../platform/db/db.ts';
import { AppError } from '../../../platform/contract/errors.ts';
import { SUBSCRIBABLE_EVENTS } from '../../../platform/db/outbox.ts';
import { JsonText } from '../../../platform/read-path/index.ts';
import { MAX_SUBSCRIPTIONS } from '../schema.ts';
import { standardSecretOf } from '../signing/signature.ts';
import { findSubscription, getSubscriptionText } from './queries.ts';

/** SPEC Webhook subscription: 64 hex characters. */
const newSecret = () => crypto.randomBytes(32).toString('hex');

/** Unknown event names are a 400 listing the subscribable ones (SPEC Webhooks). */
export function checkEvents(events: string[]): string[] {
  const unknown = events.filter((e) => !(SUBSCRIBABLE_EVENTS as readonly string[]).includes(e));
  if (unknown.length) {
    throw new AppError('validation_failed', `unknown event ${unknown.map((e) => `"${e}"`).join(', ')}`, { allowed: [...SUBSCRIBABLE_EVENTS] });
  }
  return [...new Set(events)];
}

/** `id`: chosen by the caller when the url depends on it (the debug sink's `?id=`). */
export async function createSubscription(
  tx: Sql,
  accountId: string,
  input: { id?: string; url: string; events: string[]; description?: string | null },
) {
  // Serialise creation per account so the 20-subscription limit holds under concurrency.
  await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  const { rows: count } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_subscriptions WHERE account_id = $1', [accountId]);
  if (count[0].n >= MAX_SUBSCRIPTIONS) {
    throw new AppError('conflict', `an account has at most ${MAX_SUBSCRIPTIONS} webhook subscriptions`);
  }
  const secret = newSecret();
  const id = input.id ?? crypto.randomUUID();
  await tx.query(
    'INSERT INTO webhook_subscriptions (id, account_id, url, description, events, secret, secret_prefix) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [id, accountId, input.url, input.description ?? null, input.events, tx.keyring.seal(secret), secret.slice(0, 8)],
  );
  // SPEC: the full secret is shown here, once.
  return JsonText.object({ data: await getSubscriptionText(tx, accountId, id), secret });
}

export interface SubscriptionChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  active?: boolean;
}

export async function updateSubscription(tx: Sql, accountId: string, webhookId: string, changes: SubscriptionChanges): Promise<JsonText> {
  const current = await findSubscription(tx, accountId, webhookId, { lock: true });
  // SPEC Subscription active flag: activating clears the dead-notification flag.
  const reactivated = changes.active === true;
  await tx.query(
    `UPDATE webhook_subscriptions SET url = $3, events = $4, description = $5, active = $6,
            dead_notified_at = CASE WHEN $7 THEN NULL ELSE dead_notified_at END, updated_at = now()
      WHERE account_id = $1 AND id = $2`,
    [
      accountId,
      webhookId,
      changes.url ?? current.url,
      changes.events ?? current.events,
      changes.description === undefined ? current.description : changes.description,
      changes.active ?? current.active,
      reactivated,
    ],
  );
  return getSubscriptionText(tx, accountId, webhookId);
}

/** Deleting removes its deliveries and recoveries too (ON DELETE CASCADE): pending ones stop at once; and its attempt log. */
export async function deleteSubscription(tx: Sql, accountId: string, webhookId: string) {
  await findSubscription(tx, accountId, webhookId, { lock: true });
  await tx.query('DELETE FROM webhook_attempts WHERE webhook_id = $1', [webhookId]);
  await tx.query('DELETE FROM webhook_subscriptions WHERE account_id = $1 AND id = $2', [accountId, webhookId]);
  return { id: webhookId, deleted: true as const };
}

/**
 * EXTENSIONS 4: a new secret signs from now on; the one it replaces signs
 * beside it for `previousTtlSec` more seconds. A secret still waiting to
 * expire from an earlier rotation is retired at once (kept only so that the
 * signature self-test can recognise it).
 */
export async function rotateSecret(tx: Sql, accountId: string, webhookId: string, previousTtlSec: number) {
  await findSubscription(tx, accountId, webhookId, { lock: true });
  await tx.query(
    `INSERT INTO webhook_retired_secrets (account_id, webhook_id, secret, expired_at)
     SELECT account_id, id, previous_secret, least(previous_secret_expires_at, now())
       FROM webhook_subscriptions WHERE account_id = $1 AND id = $2 AND previous_secret IS NOT NULL`,
    [accountId, webhookId],
  );
  const secret = newSecret();
  const { rows } = await tx.query<{ previous_secret_expires_at: string }>(
    `UPDATE webhook_subscriptions
        SET previous_secret = secret, previous_secret_expires_at = now() + make_interval(secs => $4), secret = $3, secret_prefix = $5,
            updated_at = now()
      WHERE account_id = $1 AND id = $2 RETURNING previous_secret_expires_at`,
    [accountId, webhookId, tx.keyring.seal(secret), previousTtlSec, secret.slice(0, 8)],
  );
  // EXTENSIONS 4: the new secret is shown here, once, beside the view (which shows its prefix only).
  return JsonText.object({
    data: await getSubscriptionText(tx, accountId, webhookId),
    secret,
    standard_secret: standardSecretOf(secret),
    previous_secret_expires_at: rows[0].previous_secret_expires_at,
  });
}

/** Retired secrets are kept 30 days past their expiry, for the self-test only. */
export async function pruneRetiredSecrets(sql: Sql, now: Date): Promise<number> {
  const { rowCount } = await sql.query(`DELETE FROM webhook_retired_secrets WHERE expired_at < $1::timestamptz - interval '30 days'`, [
    now.toISOString(),
  ]);
  return rowCount;
}
