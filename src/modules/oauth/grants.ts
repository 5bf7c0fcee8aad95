// EXTENSIONS 10: authorization codes, grants and their tokens. A grant stands
// on an api_keys row (accounts room, issueGrantKey), so its scopes, approval
// mode, prefix, last use and revocation are that row's, and the key cache
// forgets its tokens on every instance when either changes (migration 032).
import crypto from 'node:crypto';
import type { Db, Sql } from '../../platform/db/db.ts';
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX, hashApiKey, randomToken } from '../../platform/edge/auth.ts';
import type { KeyCache } from '../../platform/edge/key-cache.ts';
import type { Scope } from '../../platform/contract/scopes.ts';
import { issueGrantKey, revokeKey } from '../accounts/service.ts';
import { OAuthError } from './oauth-error.ts';

export const CODE_LIFE_SEC = 60;
export const ACCESS_TOKEN_LIFE_SEC = 3600;

export interface CodeRequest {
  clientId: string;
  accountId: string;
  redirectUri: string;
  resource: string;
  scopes: Scope[];
  writes: 'direct' | 'approval';
  codeChallenge: string;
}

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** Records a code (its SHA-256 only) that lives CODE_LIFE_SEC and is used once. */
export async function createCode(sql: Sql, request: CodeRequest): Promise<string> {
  const code = crypto.randomBytes(32).toString('base64url');
  await sql.query(
    `INSERT INTO oauth_codes (code_hash, client_id, account_id, redirect_uri, resource, scopes, writes, code_challenge, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9))`,
    [
      hashApiKey(code),
      request.clientId,
      request.accountId,
      request.redirectUri,
      request.resource,
      request.scopes,
      request.writes,
      request.codeChallenge,
      CODE_LIFE_SEC,
    ],
  );
  return code;
}

/** RFC 7636 4.6, S256 only: BASE64URL(SHA256(verifier)) equals the challenge, compared in constant time. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  const computed = Buffer.from(crypto.createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && crypto.timingSafeEqual(computed, expected);
}

async function issueTokens(tx: Sql, grantId: string, scopes: readonly string[]): Promise<TokenAnswer> {
  const access = randomToken(ACCESS_TOKEN_PREFIX);
  const refresh = randomToken(REFRESH_TOKEN_PREFIX);
  await tx.query(
    `INSERT INTO oauth_tokens (token_hash, grant_id, kind, expires_at)
     VALUES ($1, $3, 'access', now() + make_interval(secs => $4)), ($2, $3, 'refresh', NULL)`,
    [hashApiKey(access), hashApiKey(refresh), grantId, ACCESS_TOKEN_LIFE_SEC],
  );
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_LIFE_SEC, refresh_token: refresh, scope: scopes.join(' ') };
}

/** A transaction's verdict: the tokens, or the refusal to throw once it committed (and the grant to revoke first). */
type Outcome = { tokens: TokenAnswer; refused?: never; revoke?: never } | { tokens?: never; refused: OAuthError; revoke?: string | null };

interface CodeRow {
  client_id: string;
  account_id: string;
  redirect_uri: string;
  resource: string;
  scopes: Scope[];
  writes: 'direct' | 'approval';
  code_challenge: string;
  expired: boolean;
  used_at: string | null;
  grant_id: string | null;
}

/**
 * The authorization code grant (RFC 6749 4.1.3, PKCE RFC 7636, resource RFC 8707).
 * A code presented twice revokes the grant it gave (RFC 6749 4.1.2).
 */
export async function exchangeCode(
  db: Db,
  keys: KeyCache,
  input: { code: string; clientId: string; redirectUri: string | undefined; verifier: string; resource: string | undefined },
): Promise<TokenAnswer> {
  const outcome = await db.tx(async (tx): Promise<Outcome> => {
    const { rows } = await tx.query<CodeRow>(
      `SELECT client_id, account_id, redirect_uri, resource, scopes, writes, code_challenge, expires_at <= now() AS expired, used_at, grant_id
         FROM oauth_codes WHERE code_hash = $1 FOR UPDATE`,
      [hashApiKey(input.code)],
    );
    const code = rows[0];
    if (!code || code.client_id !== input.clientId) return { refused: new OAuthError('invalid_grant', 'unknown authorization code') };
    if (code.used_at)
      return {
        refused: new OAuthError('invalid_grant', 'the authorization code was already used; the grant it gave is revoked'),
        revoke: code.grant_id,
      };
    if (code.expired) return { refused: new OAuthError('invalid_grant', 'the authorization code has expired (codes live 60 s)') };
    if (input.redirectUri !== code.redirect_uri)
      return { refused: new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request') };
    if (!verifierMatches(input.verifier, code.code_challenge))
      return { refused: new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge (S256)') };
    if (input.resource !== code.resource)
      return { refused: new OAuthError('invalid_target', `resource must be ${code.resource}, as in the authorization request`) };
    const client = (await tx.query<{ client_name: string | null }>('SELECT client_name FROM oauth_clients WHERE id = $1', [code.client_id])).rows[0];
    const label = client?.client_name || new URL(code.redirect_uri).host;
    const key = await issueGrantKey(tx, code.account_id, label, code.scopes, code.writes);
    const grantId = crypto.randomUUID();
    await tx.query(
      `INSERT INTO oauth_grants (id, account_id, key_id, client_id, client_name, redirect_uri, resource) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [grantId, code.account_id, key.id, code.client_id, label, code.redirect_uri, code.resource],
    );
    await tx.query('UPDATE oauth_codes SET used_at = now(), grant_id = $2 WHERE code_hash = $1', [hashApiKey(input.code), grantId]);
    return { tokens: await issueTokens(tx, grantId, code.scopes) };
  });
  if (outcome.tokens) return outcome.tokens;
  if (outcome.revoke) await revokeGrant(db, keys, outcome.revoke);
  throw outcome.refused;
}

interface RefreshRow {
  grant_id: string;
  used_at: string | null;
  revoked_at: string | null;
  client_id: string;
  resource: string;
  scopes: Scope[];
  grant_revoked: boolean;
}

/** Refresh tokens rotate at every use; one presented again revokes its whole grant (OAuth 2.1 4.3.1). */
export async function refreshTokens(
  db: Db,
  keys: KeyCache,
  input: { refreshToken: string; clientId: string; resource: string | undefined; scope: string | undefined },
): Promise<TokenAnswer> {
  const outcome = await db.tx(async (tx): Promise<Outcome> => {
    const { rows } = await tx.query<RefreshRow>(
      `SELECT t.grant_id, t.used_at, t.revoked_at, g.client_id, g.resource, k.scopes, k.revoked_at IS NOT NULL AS grant_revoked
         FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN api_keys k ON k.id = g.key_id
        WHERE t.token_hash = $1 AND t.kind = 'refresh' FOR UPDATE OF t`,
      [hashApiKey(input.refreshToken)],
    );
    const token = rows[0];
    if (!token || token.client_id !== input.clientId) return { refused: new OAuthError('invalid_grant', 'unknown refresh token') };
    if (token.grant_revoked || token.revoked_at) return { refused: new OAuthError('invalid_grant', 'the grant was revoked') };
    if (token.used_at)
      return { refused: new OAuthError('invalid_grant', 'the refresh token was already used; its grant is revoked'), revoke: token.grant_id };
    if (input.resource !== token.resource) return { refused: new OAuthError('invalid_target', `resource must be ${token.resource}`) };
    if (
      input.scope !== undefined &&
      input.scope
        .split(' ')
        .filter(Boolean)
        .some((s) => !token.scopes.includes(s as Scope))
    ) {
      return { refused: new OAuthError('invalid_scope', "a refresh may not widen the grant's scopes") };
    }
    await tx.query('UPDATE oauth_tokens SET used_at = now() WHERE token_hash = $1', [hashApiKey(input.refreshToken)]);
    return { tokens: await issueTokens(tx, token.grant_id, token.scopes) };
  });
  if (outcome.tokens) return outcome.tokens;
  if (outcome.revoke) await revokeGrant(db, keys, outcome.revoke);
  throw outcome.refused;
}

/** Ends a grant and every token of it; every instance has forgotten them before this returns (key-cache.ts). */
export async function revokeGrant(db: Db, keys: KeyCache, grantId: string): Promise<boolean> {
  const { rows } = await db.query<{ key_id: string }>('SELECT key_id FROM oauth_grants WHERE id = $1', [grantId]);
  if (!rows[0]) return false;
  await keys.announced(`key:${rows[0].key_id}`, () =>
    db.tx(async (tx) => {
      await revokeKey(tx, rows[0].key_id);
      await tx.query('UPDATE oauth_tokens SET revoked_at = now() WHERE grant_id = $1 AND revoked_at IS NULL', [grantId]);
    }),
  );
  return true;
}

/**
 * RFC 7009: a refresh token revokes its grant (EXTENSIONS 10: "revoking a grant or its refresh token ends
 * its access tokens"); an access token ends alone. An unknown token, or another client's, changes nothing.
 */
export async function revokeToken(db: Db, keys: KeyCache, token: string, clientId: string | undefined): Promise<void> {
  const { rows } = await db.query<{ grant_id: string; kind: 'access' | 'refresh'; client_id: string; key_id: string }>(
    `SELECT t.grant_id, t.kind, g.client_id, g.key_id FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.token_hash = $1`,
    [hashApiKey(token)],
  );
  const found = rows[0];
  if (!found || (clientId !== undefined && clientId !== found.client_id)) return;
  if (found.kind === 'refresh') {
    await revokeGrant(db, keys, found.grant_id);
    return;
  }
  await keys.announced(`key:${found.key_id}`, () =>
    db.query('UPDATE oauth_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE token_hash = $1', [hashApiKey(token)]),
  );
}

/** EXTENSIONS 10: an account's connected apps, live grants newest first. */
export async function listGrants(sql: Sql, accountId: string) {
  const { rows } = await sql.query(
    `SELECT g.id, g.client_id, g.client_name, g.redirect_uri, k.prefix AS key_prefix, k.scopes, k.writes, g.created_at, k.last_used_at
       FROM oauth_grants g JOIN api_keys k ON k.id = g.key_id
      WHERE g.account_id = $1 AND k.revoked_at IS NULL
      ORDER BY g.created_at DESC, g.id`,
    [accountId],
  );
  return rows;
}

/** The account a grant belongs to (the operator's revoke answers 404 for none). */
export async function grantAccount(sql: Sql, grantId: string): Promise<string | null> {
  const { rows } = await sql.query<{ account_id: string }>('SELECT account_id FROM oauth_grants WHERE id = $1', [grantId]);
  return rows[0]?.account_id ?? null;
}
