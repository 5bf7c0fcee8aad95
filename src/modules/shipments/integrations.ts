// The account's courier integrations (OPERATOR_API PUT /accounts/{id}/couriers/{slug}).
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import { AppError } from '../../platform/contract/errors.ts';
import type { CourierAccount, CourierSlug } from '../../couriers/adapter.ts';
import type { CourierAdapters } from '../../couriers/adapters.ts';
import { COURIER_SLUGS, isCourierSlug } from '../../couriers/catalog.ts';

// Credentials and the push token are sealed at rest (issue 27): credentials as
// the sealed text of their JSON object, the push token sealed beside its
// SHA-256, by which a pushing courier's token is found.
const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
const credentialsOf = (sql: Sql, stored: string | null): Record<string, unknown> => (stored ? JSON.parse(sql.keyring.open(stored)) : {});

/** Where a pushing courier reports statuses. */
export const pushPath = (slug: CourierSlug) => `/api/couriers/${slug}/push`;

export interface IntegrationInput {
  enabled: boolean;
  credentials?: Record<string, unknown>;
  sender_origin?: Record<string, unknown> | null;
  shipment_terms?: Record<string, unknown> | null;
}

const VIEW = 'slug, enabled, sender_origin, shipment_terms, created_at, updated_at';

export async function putIntegration(tx: Sql, accountId: string, slug: CourierSlug, input: IntegrationInput) {
  // The courier catalog, not the database, knows the couriers (migration 015).
  if (!isCourierSlug(slug)) throw new AppError('validation_failed', `${slug} is not a registered courier`, { allowed: [...COURIER_SLUGS] });
  const pushToken = crypto.randomBytes(24).toString('hex');
  const { rows } = await tx.query(
    `INSERT INTO courier_integrations (account_id, slug, enabled, credentials, sender_origin, shipment_terms, push_token, push_token_sha256)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $11)
     ON CONFLICT (account_id, slug) DO UPDATE SET enabled = EXCLUDED.enabled,
       credentials = CASE WHEN $8 THEN EXCLUDED.credentials ELSE courier_integrations.credentials END,
       sender_origin = CASE WHEN $9 THEN EXCLUDED.sender_origin ELSE courier_integrations.sender_origin END,
       shipment_terms = CASE WHEN $10 THEN EXCLUDED.shipment_terms ELSE courier_integrations.shipment_terms END,
       updated_at = now()
     RETURNING ${VIEW}, credentials`,
    [
      accountId,
      slug,
      input.enabled,
      tx.keyring.seal(JSON.stringify(input.credentials ?? {})),
      input.sender_origin == null ? null : JSON.stringify(input.sender_origin),
      input.shipment_terms == null ? null : JSON.stringify(input.shipment_terms),
      tx.keyring.seal(pushToken),
      input.credentials !== undefined,
      input.sender_origin !== undefined,
      input.shipment_terms !== undefined,
      sha256(pushToken),
    ],
  );
  const { credentials, ...view } = rows[0];
  // Credentials are write-only: the view says which keys are set, never their values.
  return { ...view, credentials_set: Object.keys(credentialsOf(tx, credentials)) };
}

/** The merchant's courier account for a call, or 400 courier_not_enabled (GAPS Orders and shipments). */
export async function courierAccountFor(sql: Sql, couriers: CourierAdapters, accountId: string, slug: CourierSlug): Promise<CourierAccount> {
  const { rows } = await sql.query(
    'SELECT enabled, credentials, sender_origin, shipment_terms, push_token FROM courier_integrations WHERE account_id = $1 AND slug = $2',
    [accountId, slug],
  );
  const row = rows[0];
  if (!row?.enabled) {
    throw new AppError('validation_failed', `the account has not enabled ${slug}`, { reason: 'courier_not_enabled' });
  }
  const credentials = credentialsOf(sql, row.credentials);
  const hasCredentials = Object.keys(credentials).length > 0;
  return {
    credentials: hasCredentials ? credentials : couriers.defaultCredentials(slug),
    senderOrigin: row.sender_origin,
    shipmentTerms: row.shipment_terms,
    push: { url: couriers.selfOrigin() + pushPath(slug), token: sql.keyring.open(row.push_token) },
  };
}

/** The integration a pushing courier authenticates as. */
export async function integrationByPushToken(sql: Sql, slug: CourierSlug, token: string): Promise<string | null> {
  const { rows } = await sql.query<{ account_id: string }>(
    'SELECT account_id FROM courier_integrations WHERE slug = $1 AND push_token_sha256 = $2 AND enabled',
    [slug, sha256(token)],
  );
  return rows[0]?.account_id ?? null;
}

/** Every registered courier for an account, enabled or not (the operator console's settings). */
export async function listIntegrations(sql: Sql, accountId: string, slugs: readonly CourierSlug[]) {
  const { rows } = await sql.query(`SELECT ${VIEW}, credentials FROM courier_integrations WHERE account_id = $1`, [accountId]);
  return slugs.map((slug) => {
    const row = rows.find((r: Record<string, unknown>) => r.slug === slug);
    if (!row) return { slug, enabled: false, credentials_set: [] as string[] };
    const { credentials, ...view } = row;
    return { ...view, credentials_set: Object.keys(credentialsOf(sql, credentials)) };
  });
}
