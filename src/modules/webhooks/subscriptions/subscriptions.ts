// Webhook subscriptions (SPEC Webhook subscription; GAPS Webhooks).
import crypto from 'node:crypto';
import type { Sql } from '../../../platform/db.ts';
import { AppError, notFound } from '../../../platform/errors.ts';
import { SUBSCRIBABLE_EVENTS } from '../../../platform/events.ts';
import { isoTime, jsonObject, type JsonView } from '../../../platform/json-view.ts';
import { JsonText, valueOf } from '../../../platform/json-text.ts';
import { readArray, readOne } from '../../../platform/read-sql.ts';
import type { Static } from 'typebox';
import { MAX_SUBSCRIPTIONS, type Subscription } from '../schema.ts';
import { standardSecretOf } from '../signing/signature.ts';
import { openSecret, sealSecret } from '../../../platform/secret-box.ts';

// The secret itself is sealed at rest (issue 27): read by secretsOf() and the delivery claim, opened there.
const COLUMNS = `id, url, description, events, active, last_triggered_at, last_status_code, dead_notified_at, created_at, updated_at`;

/** SPEC Webhook subscription: 64 hex characters. */
const newSecret = () => crypto.randomBytes(32).toString('hex');

/**
 * SPEC Webhook subscription view, written by PostgreSQL (issue 12). Never the
 * secret: only its first 8 characters and an ellipsis. The full secret is in
 * the answers of create and rotate alone, beside this view. Fields in the
 * order the JavaScript view printed them (secret_prefix last).
 */
export const SUBSCRIPTION_VIEW: JsonView = {
  from: 'webhook_subscriptions s',
  alias: 's',
  json: jsonObject({
    id: 's.id',
    url: 's.url',
    description: 's.description',
    events: 's.events',
    active: 's.active',
    last_triggered_at: isoTime('s.last_triggered_at'),
    last_status_code: 's.last_status_code',
    dead_notified_at: isoTime('s.dead_notified_at'),
    created_at: isoTime('s.created_at'),
    updated_at: isoTime('s.updated_at'),
    // Kept beside the sealed secret (migration 020).
    secret_prefix: `s.secret_prefix || '…'`,
  }),
};

/** The subscription's view, or 404. */
export async function getSubscriptionText(sql: Sql, accountId: string, webhookId: string): Promise<JsonText> {
  const text = await readOne(sql, SUBSCRIPTION_VIEW, 's.account_id = $1 AND s.id = $2', [accountId, webhookId]);
  if (!text) throw notFound('webhook subscription');
  return text;
}

/** The same view as an object, for code that decides on its fields (and for ETags). */
export async function getSubscription(sql: Sql, accountId: string, webhookId: string): Promise<Static<typeof Subscription>> {
  return valueOf<Static<typeof Subscription>>(await getSubscriptionText(sql, accountId, webhookId));
}

/** Unknown event names are a 400 listing the subscribable ones (SPEC Webhooks). */
export function checkEvents(events: string[]): string[] {
  const unknown = events.filter((e) => !(SUBSCRIBABLE_EVENTS as readonly string[]).includes(e));
  if (unknown.length) {
    throw new AppError('validation_failed', `unknown event ${unknown.map((e) => `"${e}"`).join(', ')}`, { allowed: [...SUBSCRIBABLE_EVENTS] });
  }
  return [...new Set(events)];
}

export function listSubscriptions(sql: Sql, accountId: string): Promise<JsonText> {
  return readArray(sql, SUBSCRIPTION_VIEW, 's.account_id = $1', [accountId], 's.created_at, s.id');
}

export async function findSubscription(sql: Sql, accountId: string, webhookId: string, options: { lock?: boolean } = {}) {
  const { rows } = await sql.query(
    `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE account_id = $1 AND id = $2 ${options.lock ? 'FOR UPDATE' : ''}`,
    [accountId, webhookId],
  );
  if (!rows[0]) throw notFound('webhook subscription');
  return rows[0];
}

/** `id`: chosen by the caller when the url depends on it (the debug sink's `?id=`). */
export async function createSubscription(tx: Sql, accountId: string, input: { id?: string; url: string; events: string[]; description?: string | null }) {
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
    [id, accountId, input.url, input.description ?? null, input.events, sealSecret(secret), secret.slice(0, 8)],
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
    [accountId, webhookId, sealSecret(secret), previousTtlSec, secret.slice(0, 8)],
  );
  // EXTENSIONS 4: the new secret is shown here, once, beside the view (which shows its prefix only).
  return JsonText.object({
    data: await getSubscriptionText(tx, accountId, webhookId),
    secret,
    standard_secret: standardSecretOf(secret),
    previous_secret_expires_at: rows[0].previous_secret_expires_at,
  });
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
  return rows.map((r) => ({ secret: openSecret(r.secret), live: r.live }));
}

/** Retired secrets are kept 30 days past their expiry, for the self-test only. */
export async function pruneRetiredSecrets(sql: Sql, now: Date): Promise<number> {
  const { rowCount } = await sql.query(`DELETE FROM webhook_retired_secrets WHERE expired_at < $1::timestamptz - interval '30 days'`, [now.toISOString()]);
  return rowCount;
}
