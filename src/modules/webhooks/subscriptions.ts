// Webhook subscriptions (SPEC Webhook subscription; GAPS Webhooks).
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { SUBSCRIBABLE_EVENTS } from '../../platform/events.ts';
import type { Static } from 'typebox';
import { MAX_SUBSCRIPTIONS, type Subscription } from './schema.ts';
import { standardSecretOf } from './signature.ts';

const COLUMNS = `id, url, description, events, active, secret, last_triggered_at, last_status_code, dead_notified_at, created_at, updated_at`;

/** SPEC Webhook subscription: 64 hex characters. */
const newSecret = () => crypto.randomBytes(32).toString('hex');

export function toSubscriptionView(row: Record<string, any>): Static<typeof Subscription> {
  const { secret, ...rest } = row;
  return { ...(rest as Omit<Static<typeof Subscription>, 'secret_prefix'>), secret_prefix: `${String(secret).slice(0, 8)}…` };
}

/** Unknown event names are a 400 listing the subscribable ones (SPEC Webhooks). */
export function checkEvents(events: string[]): string[] {
  const unknown = events.filter((e) => !(SUBSCRIBABLE_EVENTS as readonly string[]).includes(e));
  if (unknown.length) {
    throw new AppError('validation_failed', `unknown event ${unknown.map((e) => `"${e}"`).join(', ')}`, { allowed: [...SUBSCRIBABLE_EVENTS] });
  }
  return [...new Set(events)];
}

export async function listSubscriptions(sql: Sql, accountId: string) {
  const { rows } = await sql.query(`SELECT ${COLUMNS} FROM webhook_subscriptions WHERE account_id = $1 ORDER BY created_at, id`, [accountId]);
  return rows.map(toSubscriptionView);
}

export async function findSubscription(sql: Sql, accountId: string, webhookId: string, options: { lock?: boolean } = {}) {
  const { rows } = await sql.query(
    `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE account_id = $1 AND id = $2 ${options.lock ? 'FOR UPDATE' : ''}`,
    [accountId, webhookId],
  );
  if (!rows[0]) throw notFound('webhook subscription');
  return rows[0];
}

export async function createSubscription(tx: Sql, accountId: string, input: { url: string; events: string[]; description?: string | null }) {
  // Serialise creation per account so the 20-subscription limit holds under concurrency.
  await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  const { rows: count } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_subscriptions WHERE account_id = $1', [accountId]);
  if (count[0].n >= MAX_SUBSCRIPTIONS) {
    throw new AppError('conflict', `an account has at most ${MAX_SUBSCRIPTIONS} webhook subscriptions`);
  }
  const secret = newSecret();
  const { rows } = await tx.query(
    `INSERT INTO webhook_subscriptions (id, account_id, url, description, events, secret) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [crypto.randomUUID(), accountId, input.url, input.description ?? null, input.events, secret],
  );
  return { data: toSubscriptionView(rows[0]), secret };
}

export interface SubscriptionChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  active?: boolean;
}

export async function updateSubscription(tx: Sql, accountId: string, webhookId: string, changes: SubscriptionChanges) {
  const current = await findSubscription(tx, accountId, webhookId, { lock: true });
  // SPEC Subscription active flag: activating clears the dead-notification flag.
  const reactivated = changes.active === true;
  const { rows } = await tx.query(
    `UPDATE webhook_subscriptions SET url = $3, events = $4, description = $5, active = $6,
            dead_notified_at = CASE WHEN $7 THEN NULL ELSE dead_notified_at END, updated_at = now()
      WHERE account_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
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
  return toSubscriptionView(rows[0]);
}

/** Deleting removes its deliveries too (ON DELETE CASCADE): pending ones stop at once. */
export async function deleteSubscription(tx: Sql, accountId: string, webhookId: string) {
  await findSubscription(tx, accountId, webhookId, { lock: true });
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
  const { rows } = await tx.query(
    `UPDATE webhook_subscriptions
        SET previous_secret = secret, previous_secret_expires_at = now() + make_interval(secs => $4), secret = $3, updated_at = now()
      WHERE account_id = $1 AND id = $2 RETURNING ${COLUMNS}, previous_secret_expires_at`,
    [accountId, webhookId, secret, previousTtlSec],
  );
  const { previous_secret_expires_at, ...row } = rows[0];
  return { data: toSubscriptionView(row), secret, standard_secret: standardSecretOf(secret), previous_secret_expires_at: previous_secret_expires_at as string };
}

/** Every secret the subscription has had that the self-test can check, and whether it signs now. */
export async function secretsOf(sql: Sql, accountId: string, webhookId: string) {
  const { rows } = await sql.query<{ secret: string; live: boolean }>(
    `SELECT secret, true AS live FROM webhook_subscriptions WHERE account_id = $1 AND id = $2
     UNION ALL
     SELECT previous_secret, previous_secret_expires_at > now() FROM webhook_subscriptions
      WHERE account_id = $1 AND id = $2 AND previous_secret IS NOT NULL
     UNION ALL
     SELECT secret, false FROM webhook_retired_secrets WHERE account_id = $1 AND webhook_id = $2`,
    [accountId, webhookId],
  );
  return rows;
}

/** Retired secrets are kept 30 days past their expiry, for the self-test only. */
export async function pruneRetiredSecrets(sql: Sql, now: Date): Promise<number> {
  const { rowCount } = await sql.query(`DELETE FROM webhook_retired_secrets WHERE expired_at < $1::timestamptz - interval '30 days'`, [now.toISOString()]);
  return rowCount;
}
