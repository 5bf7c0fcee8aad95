// Merchant accounts and their API keys (SPEC Authentication; OPERATOR_API Accounts and keys).
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import { AppError, notFound } from '../../platform/contract/errors.ts';
import { GRANT_KEY_PREFIX, PUBLIC_PREFIX_LENGTH, generateApiKey, randomToken } from '../../platform/edge/auth.ts';
import type { Scope } from '../../platform/contract/scopes.ts';

/** SPEC Authentication 4. */
export const MAX_ACTIVE_KEYS = 10;

export interface NotificationSettings {
  email_on_shipped: boolean;
  sms_on_shipped: boolean;
}

export interface AccountInput {
  name: string;
  email: string;
  plan?: 'free' | 'pro' | 'business';
  active?: boolean;
  default_threshold?: number;
  notification_settings?: Partial<NotificationSettings>;
}

const ACCOUNT_COLUMNS = 'id, name, email, plan, active, default_threshold, notification_settings, created_at';
const KEY_COLUMNS = 'id, name, prefix, scopes, writes, created_at, last_used_at, revoked_at, expires_at';

export async function createAccount(tx: Sql, input: AccountInput) {
  const settings: NotificationSettings = { email_on_shipped: true, sms_on_shipped: false, ...input.notification_settings };
  const { rows } = await tx.query(
    `INSERT INTO accounts (id, name, email, plan, active, default_threshold, notification_settings)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${ACCOUNT_COLUMNS}`,
    [crypto.randomUUID(), input.name, input.email, input.plan ?? 'pro', input.active ?? true, input.default_threshold ?? 5, JSON.stringify(settings)],
  );
  return rows[0];
}

export async function getAccount(sql: Sql, accountId: string) {
  const { rows } = await sql.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [accountId]);
  if (!rows[0]) throw notFound('account');
  return rows[0];
}

export async function updateAccount(tx: Sql, accountId: string, input: Partial<AccountInput>) {
  const current = await getAccount(tx, accountId);
  const settings = { ...current.notification_settings, ...input.notification_settings };
  const { rows } = await tx.query(
    `UPDATE accounts SET name = $2, email = $3, plan = $4, active = $5, default_threshold = $6, notification_settings = $7, updated_at = now()
      WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
    [
      accountId,
      input.name ?? current.name,
      input.email ?? current.email,
      input.plan ?? current.plan,
      input.active ?? current.active,
      input.default_threshold ?? current.default_threshold,
      JSON.stringify(settings),
    ],
  );
  return rows[0];
}

/**
 * `writes`: EXTENSIONS 7, "approval" makes every write of the key wait for a person (default "direct").
 * `expiresAt` (issue 41): past it the key answers 401 saying it expired; it must lie in the future.
 */
export async function issueKey(
  tx: Sql,
  accountId: string,
  name: string,
  scopes: Scope[],
  writes: 'direct' | 'approval' = 'direct',
  expiresAt: string | null = null,
) {
  if (expiresAt !== null && !(Date.parse(expiresAt) > Date.now())) {
    throw new AppError('validation_failed', 'expires_at must be a date-time in the future');
  }
  // Serialise key issue per account so two concurrent requests cannot both take the 10th slot.
  const { rowCount } = await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  if (!rowCount) throw notFound('account');
  const { rows: active } = await tx.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL AND kind = 'api_key'",
    [accountId],
  );
  if (active[0].n >= MAX_ACTIVE_KEYS) {
    throw new AppError('conflict', `an account has at most ${MAX_ACTIVE_KEYS} active keys; revoke one first`);
  }
  const generated = generateApiKey();
  const { rows } = await tx.query(
    `INSERT INTO api_keys (id, account_id, name, prefix, key_hash, scopes, writes, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${KEY_COLUMNS}`,
    [crypto.randomUUID(), accountId, name, generated.prefix, generated.hash, [...new Set(scopes)], writes, expiresAt],
  );
  return { data: rows[0], key: generated.key };
}

/**
 * EXTENSIONS 10: the key an OAuth grant stands on (src/modules/oauth/grants.ts). It is no API key: no
 * bearer hashes to it, it is not listed with the account's keys and takes none of their ten slots; its
 * prefix names the grant in the request log.
 */
export async function issueGrantKey(tx: Sql, accountId: string, clientName: string, scopes: Scope[], writes: 'direct' | 'approval') {
  const id = crypto.randomUUID();
  const prefix = randomToken(GRANT_KEY_PREFIX).slice(0, PUBLIC_PREFIX_LENGTH);
  const { rows } = await tx.query<{ id: string; prefix: string }>(
    `INSERT INTO api_keys (id, account_id, name, prefix, key_hash, scopes, writes, kind)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'oauth_grant') RETURNING id, prefix`,
    [id, accountId, clientName.slice(0, 200), prefix, `grant:${id}`, [...new Set(scopes)], writes],
  );
  return rows[0];
}

export async function listKeys(sql: Sql, accountId: string) {
  await getAccount(sql, accountId);
  const { rows } = await sql.query(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 AND kind = 'api_key' ORDER BY created_at, id`, [
    accountId,
  ]);
  return rows;
}

/** SPEC Authentication 4: revocation is immediate; the next request with the key is a 401. */
export async function revokeKey(tx: Sql, keyId: string) {
  const { rows } = await tx.query(`UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [keyId]);
  if (!rows[0]) throw notFound('key');
  return rows[0];
}

/** Revokes the account's live keys of this name (the demo key a start replaces). */
export async function revokeKeysNamed(tx: Sql, accountId: string, name: string): Promise<void> {
  await tx.query('UPDATE api_keys SET revoked_at = now() WHERE account_id = $1 AND name = $2 AND revoked_at IS NULL', [accountId, name]);
}

/** SPEC Authentication 2: last_used_at moves at most once a minute (the key cache calls this off the request path). */
export async function markKeyUsed(sql: Sql, keyId: string): Promise<void> {
  await sql.query(
    `UPDATE api_keys SET last_used_at = now()
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [keyId],
  );
}

/** The account's next order number, and the service-wide order number, taken in the caller's transaction (GAPS General). */
export async function takeOrderNumbers(tx: Sql, accountId: string): Promise<{ number: number; order_number: number }> {
  const { rows } = await tx.query<{ number: number; order_number: number }>(
    `UPDATE accounts SET next_order_number = next_order_number + 1 WHERE id = $1
     RETURNING next_order_number - 1 AS number, nextval('order_number_seq') AS order_number`,
    [accountId],
  );
  return rows[0];
}

/** The operator's seed: `count` merchant-facing order numbers in a row; answers the first. */
export async function reserveOrderNumbers(tx: Sql, accountId: string, count: number): Promise<number> {
  const { rows } = await tx.query<{ start: number }>(
    'UPDATE accounts SET next_order_number = next_order_number + $2 WHERE id = $1 RETURNING next_order_number - $2 AS start',
    [accountId, count],
  );
  return rows[0].start;
}
