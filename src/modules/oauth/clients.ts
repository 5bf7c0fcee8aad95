// EXTENSIONS 10: OAuth clients, registered dynamically (RFC 7591, public
// clients only) or known by the URL of their metadata document.
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import type { UrlPolicy } from '../webhooks/subscriptions/url-policy.ts';
import { fetchClientMetadata, isMetadataDocumentId } from './client-metadata.ts';
import { OAuthError } from './oauth-error.ts';

export interface OAuthClient {
  id: string;
  kind: 'registered' | 'metadata_document';
  client_name: string | null;
  redirect_uris: string[];
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const MAX_REDIRECT_URIS = 20;

/** EXTENSIONS 10: each redirect URI https, or http on a loopback host; no fragment (RFC 6749 3.1.2). */
export function redirectUriProblem(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length > 2000) return 'each redirect URI must be a string of at most 2000 characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${raw} is not an absolute URL`;
  }
  if (url.hash || raw.includes('#')) return `${raw} must not carry a fragment`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return `${raw} must use https, or http on localhost, 127.0.0.1 or [::1]`;
}

/** RFC 7591 3.2.1: the client as registered, with the metadata it was given (public clients: no secret). */
export async function registerClient(sql: Sql, body: unknown) {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object of client metadata');
  const input = body as Record<string, unknown>;
  const uris = input.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw new OAuthError('invalid_redirect_uri', 'redirect_uris is required: a non-empty array of URIs');
  if (uris.length > MAX_REDIRECT_URIS) throw new OAuthError('invalid_redirect_uri', `at most ${MAX_REDIRECT_URIS} redirect_uris`);
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', problem);
  }
  const method = input.token_endpoint_auth_method ?? 'none';
  if (method !== 'none')
    throw new OAuthError('invalid_client_metadata', 'token_endpoint_auth_method must be none: Merx registers public clients (PKCE)');
  const grantTypes = input.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!Array.isArray(grantTypes) || grantTypes.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
    throw new OAuthError('invalid_client_metadata', 'grant_types may hold only authorization_code and refresh_token');
  }
  const responseTypes = input.response_types ?? ['code'];
  if (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== 'code'))
    throw new OAuthError('invalid_client_metadata', 'response_types may hold only code');
  const name = input.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.length > 200))
    throw new OAuthError('invalid_client_metadata', 'client_name must be a string of at most 200 characters');
  const clientUri = typeof input.client_uri === 'string' ? input.client_uri : undefined;
  const id = `merx_client_${crypto.randomBytes(16).toString('hex')}`;
  const metadata = {
    redirect_uris: uris as string[],
    token_endpoint_auth_method: 'none',
    grant_types: grantTypes,
    response_types: responseTypes,
    ...(name ? { client_name: name } : {}),
    ...(clientUri ? { client_uri: clientUri } : {}),
    ...(typeof input.scope === 'string' ? { scope: input.scope } : {}),
  };
  const { rows } = await sql.query<{ issued: number }>(
    `INSERT INTO oauth_clients (id, kind, client_name, redirect_uris, metadata) VALUES ($1, 'registered', $2, $3, $4)
     RETURNING extract(epoch FROM created_at)::int AS issued`,
    [id, name ?? null, uris, JSON.stringify(metadata)],
  );
  return { client_id: id, client_id_issued_at: rows[0].issued, ...metadata };
}

/**
 * The client behind `clientId`: a registered one from the database, or a
 * metadata document fetched now (and its name and redirect URIs kept, for the
 * grant to name). Null when there is none.
 */
export async function findClient(sql: Sql, clientId: string, policy: UrlPolicy): Promise<OAuthClient | null> {
  if (isMetadataDocumentId(clientId)) {
    const doc = await fetchClientMetadata(clientId, policy);
    const name = typeof doc.client_name === 'string' ? doc.client_name.slice(0, 200) : null;
    const { rows } = await sql.query<OAuthClient>(
      `INSERT INTO oauth_clients (id, kind, client_name, redirect_uris, metadata) VALUES ($1, 'metadata_document', $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET client_name = excluded.client_name, redirect_uris = excluded.redirect_uris,
         metadata = excluded.metadata, updated_at = now()
       RETURNING id, kind, client_name, redirect_uris`,
      [clientId, name, doc.redirect_uris, JSON.stringify(doc)],
    );
    return rows[0];
  }
  const { rows } = await sql.query<OAuthClient>(
    `SELECT id, kind, client_name, redirect_uris FROM oauth_clients WHERE id = $1 AND kind = 'registered'`,
    [clientId],
  );
  return rows[0] ?? null;
}

/** What the consent page and the console call the client: its name, else its redirect host. */
export function clientLabel(client: OAuthClient, redirectUri: string): string {
  return client.client_name || new URL(redirectUri).host;
}
