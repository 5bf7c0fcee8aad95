// Webhook subscriptions, read (SPEC Webhook subscription; GAPS Webhooks): the
// view, the row commands decide on, and the secrets the self-test checks.
import type { Sql } from '../../../platform/db/db.ts';
import { notFound } from '../../../platform/contract/errors.ts';
import { isoTime, jsonObject, type JsonView, JsonText, valueOf, readArray, readOne } from '../../../platform/read-path/index.ts';
import type { Static } from 'typebox';
import type { Subscription } from '../schema.ts';

// The secret itself is sealed at rest (issue 27): read by secretsOf() and the delivery claim, opened there.
const COLUMNS = `id, url, description, events, active, last_triggered_at, last_status_code, dead_notified_at, created_at, updated_at`;

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
  return rows.map((r) => ({ secret: sql.keyring.open(r.secret), live: r.live }));
}
