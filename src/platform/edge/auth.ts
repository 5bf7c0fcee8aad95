// API keys and the check order of SPEC Authentication 8:
// 401 unauthorized -> 403 scope_missing -> 403 plan -> (429 in rate-limit.ts).
import crypto from 'node:crypto';
import type { Sql } from '../db/db.ts';
import { AppError, unauthorized } from '../contract/errors.ts';
import type { Scope } from '../contract/scopes.ts';

export const KEY_PREFIX = 'merx_';
/** GAPS: the first 11 characters (merx_ + 6) are the key's public prefix. */
export const PUBLIC_PREFIX_LENGTH = 11;
const KEY_SHAPE = /^merx_[A-Za-z0-9]{40}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  // 40 characters of base62 from rejection-free bytes: ~238 bits of entropy.
  const key = randomToken(KEY_PREFIX);
  return { key, prefix: key.slice(0, PUBLIC_PREFIX_LENGTH), hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return crypto.hash('sha256', key, 'hex');
}

/** Who is calling: the account behind the API key, and the key itself. */
export interface Caller {
  accountId: string;
  keyId: string;
  keyPrefix: string;
  scopes: readonly Scope[];
  /** EXTENSIONS 7: "approval" when this key's writes wait for a person (src/modules/agents/approvals/). */
  writes: 'direct' | 'approval';
  /**
   * Whom the changes are attributed to in events (SPEC Webhooks, `source`): "api" for a key (when unset), "merchant"
   * for the operator console, which acts as the merchant's own admin (issue 41: its actions showed as "api").
   */
  source?: 'merchant' | 'api';
}

export interface AuthenticatedKey extends Caller {
  plan: string;
  /** When the credential stops working (ms since the epoch): an OAuth access token's end, an API key's expires_at (issue 41); none: never. */
  expiresAt?: number;
}

/** EXTENSIONS 10: OAuth access and refresh tokens (src/modules/oauth/), told from API keys by their shape. */
export const ACCESS_TOKEN_PREFIX = 'merx_at_';
export const REFRESH_TOKEN_PREFIX = 'merx_rt_';
export const MCP_PATH = '/api/mcp';
/** RFC 9728 protected resource metadata of /api/mcp (src/operator/oauth-server.ts). */
export const RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;

/** EXTENSIONS 10: a 401 from /api/mcp points to its resource metadata, so a client finds the authorization server. */
export function resourceMetadataChallenge(publicBaseUrl: string): string {
  return `Bearer resource_metadata="${publicBaseUrl}${RESOURCE_METADATA_PATH}"`;
}

/** A grant's public prefix in the request log: `merx_oa` and 4 characters. */
export const GRANT_KEY_PREFIX = 'merx_oa';
const ACCESS_TOKEN_SHAPE = /^merx_at_[A-Za-z0-9]{40}$/;

export function isAccessTokenShaped(token: string): boolean {
  return ACCESS_TOKEN_SHAPE.test(token);
}

/** 40 characters of base62 after `prefix` (~238 bits), as API keys are made. */
export function randomToken(prefix: string): string {
  let body = '';
  while (body.length < 40) {
    for (const byte of crypto.randomBytes(64)) {
      if (byte < 248 && body.length < 40) body += ALPHABET[byte % 62];
    }
  }
  return prefix + body;
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer ([^\s]+)$/.exec(header);
  return match ? match[1] : null;
}

export function isKeyShaped(token: string): boolean {
  return KEY_SHAPE.test(token);
}

/**
 * Issue 41: why a header that carries no usable key is refused, said plainly.
 * Nothing here reads the database, so it tells nothing about which keys exist.
 */
export function unusableHeader(header: string | undefined): AppError {
  if (!header) return unauthorized('no API key: send the header Authorization: Bearer <API key>');
  const token = bearerToken(header);
  if (token === null) return unauthorized('the Authorization header must read "Bearer <API key>" (one space, no quotes)');
  if (token.startsWith('merx_admin_')) {
    return unauthorized(
      "this is the operator token: it opens /admin/api; /api/v1 and /api/mcp take an account's API key (merx_ and 40 letters and digits)",
    );
  }
  return unauthorized('this is not a Merx API key: a key is merx_ followed by 40 letters and digits (check it was copied whole)');
}

/**
 * The key with this hash and its account, from the database (key-cache.ts keeps what it finds), or 401.
 * Issue 41: a revoked or an expired key is told so; only the holder of the whole key can learn it, so the
 * answer reveals nothing its holder does not already have. An unknown key is told it is unknown.
 */
export async function lookupKey(sql: Sql, keyHash: string): Promise<AuthenticatedKey> {
  const { rows } = await sql.query<{
    id: string;
    account_id: string;
    prefix: string;
    scopes: Scope[];
    writes: 'direct' | 'approval';
    plan: string;
    active: boolean;
    revoked_at: Date | null;
    expires_at: Date | null;
    expires_in_ms: number | null;
  }>(
    `SELECT k.id, k.account_id, k.prefix, k.scopes, k.writes, a.plan, a.active, k.revoked_at, k.expires_at,
            (extract(epoch FROM k.expires_at - now()) * 1000)::float8 AS expires_in_ms
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.key_hash = $1`,
    [keyHash],
    { prepared: true },
  );
  const row = rows[0];
  if (!row) throw unauthorized('unknown API key: no key of this value exists (it may belong to another Merx instance or database)');
  if (row.revoked_at) throw unauthorized(`this API key (${row.prefix}) was revoked at ${new Date(row.revoked_at).toISOString()}`);
  if (row.expires_in_ms !== null && row.expires_in_ms <= 0) {
    throw unauthorized(`this API key (${row.prefix}) expired at ${new Date(row.expires_at!).toISOString()}`);
  }
  if (!row.active) throw unauthorized('the account behind this key is deactivated');
  const key: AuthenticatedKey = {
    keyId: row.id,
    accountId: row.account_id,
    keyPrefix: row.prefix,
    scopes: row.scopes,
    writes: row.writes,
    plan: row.plan,
  };
  // Counted from the database's clock, so an instance whose clock drifts still keeps the key no longer than it lives.
  if (row.expires_in_ms !== null) key.expiresAt = Date.now() + row.expires_in_ms;
  return key;
}

/**
 * EXTENSIONS 10: an OAuth access token, live and unexpired, as the grant's
 * backing key (its prefix, scopes, approval mode) and its account, or 401.
 */
export async function lookupAccessToken(sql: Sql, tokenHash: string): Promise<AuthenticatedKey> {
  const { rows } = await sql.query<{
    id: string;
    account_id: string;
    prefix: string;
    scopes: Scope[];
    writes: 'direct' | 'approval';
    plan: string;
    active: boolean;
    expires_ms: number;
  }>(
    `SELECT k.id, k.account_id, k.prefix, k.scopes, k.writes, a.plan, a.active, (extract(epoch FROM t.expires_at) * 1000)::float8 AS expires_ms
       FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN api_keys k ON k.id = g.key_id JOIN accounts a ON a.id = k.account_id
      WHERE t.token_hash = $1 AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > now() AND k.revoked_at IS NULL`,
    [tokenHash],
    { prepared: true },
  );
  const row = rows[0];
  if (!row) throw unauthorized('missing, expired or revoked access token');
  if (!row.active) throw unauthorized('the account behind this token is deactivated');
  return {
    keyId: row.id,
    accountId: row.account_id,
    keyPrefix: row.prefix,
    scopes: row.scopes,
    writes: row.writes,
    plan: row.plan,
    expiresAt: row.expires_ms,
  };
}

/** Admits a caller holding any of `scopes`; a refusal names the first. */
export function requireScope(caller: Caller, scopes: Scope | readonly Scope[]): void {
  const accepted: readonly Scope[] = typeof scopes === 'string' ? [scopes] : scopes;
  // An operation that names no scope admits any valid key (EXTENSIONS 7).
  if (accepted.length === 0) return;
  if (!accepted.some((scope) => caller.scopes.includes(scope))) {
    const named = accepted[0];
    const others = accepted.length > 1 ? ` (or any of ${accepted.slice(1).join(', ')})` : '';
    throw new AppError('scope_missing', `this API key lacks the scope ${named}${others}`, undefined, { scope: named });
  }
}

/** Failures the operator can force outside production (OPERATOR_API faults). */
export interface Faults {
  /** Every plan check answers plan_lookup_failed. */
  lookupFails: boolean;
  /** The next shipment creation fails after the courier accepted its waybill (tests the undo). */
  failNextShipmentCommit: boolean;
  /** The next metered webhook claim's attempts begin late, as on a stalled event loop (tests the rate's give-back). */
  lateNextMeteredStart?: boolean;
}

/** SPEC Authentication 7: Pro and above; fail closed when the plan cannot be verified. */
export function requirePlan(plan: string, faults: Faults | undefined): void {
  if (faults?.lookupFails || !['free', 'pro', 'business'].includes(plan)) {
    throw new AppError('plan_lookup_failed', 'the account plan could not be verified; try again later');
  }
  if (plan === 'free') throw new AppError('plan_required', 'the API needs the Pro plan or above');
}
