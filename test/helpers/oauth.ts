// EXTENSIONS 10: an OAuth client as a script drives Merx's authorization
// server (registration, the consent form, the token endpoint), and an
// OAuthClientProvider for the official MCP SDK client.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

export function pkce() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

export async function form(base: string, path: string, fields: Record<string, string | undefined>) {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) body.append(name, value);
  const res = await fetch(base + path, {
    method: 'POST',
    body,
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: json,
    location: res.headers.get('location') ? new URL(res.headers.get('location')!) : null,
  };
}

export async function registerClient(base: string, metadata: Record<string, unknown> = {}) {
  const res = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Script agent', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', ...metadata }),
  });
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body.client_id as string;
}

/** The authorization request's parameters, as a client sends them. */
export function authorizationRequest(base: string, clientId: string, challenge: string, extra: Record<string, string | undefined> = {}) {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    state: 'st-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${base}/api/mcp`,
    scope: 'orders:read orders:write',
    ...extra,
  };
}

/** Consents through the form as a person does; returns the code of the 302. */
export async function consent(
  base: string,
  request: Record<string, string | undefined>,
  credential: string,
  extra: Record<string, string | undefined> = {},
) {
  const res = await form(base, '/oauth/authorize', { ...request, credential, approval: 'off', decision: 'approve', ...extra });
  assert.equal(res.status, 302, res.text);
  const code = res.location!.searchParams.get('code');
  assert.ok(code, String(res.location));
  return code;
}

/** A client that registered, was consented to and holds its first tokens. */
export async function connectedClient(base: string, key: string, extra: Record<string, string | undefined> = {}) {
  const clientId = await registerClient(base);
  const { verifier, challenge } = pkce();
  const code = await consent(base, authorizationRequest(base, clientId, challenge), key, extra);
  const res = await form(base, '/oauth/token', {
    grant_type: 'authorization_code',
    code,
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    resource: `${base}/api/mcp`,
  });
  assert.equal(res.status, 200, res.text);
  return { clientId, tokens: res.body as { access_token: string; refresh_token: string; scope: string; expires_in: number; token_type: string } };
}

/** The SDK's OAuth client provider, in memory; the "browser" is the test, which reads authorizationUrl. */
export class MemoryProvider implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';

  get redirectUrl() {
    return REDIRECT_URI;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK test agent',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }

  state() {
    return 'sdk-state';
  }

  clientInformation() {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }
}
