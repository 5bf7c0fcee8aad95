// EXTENSIONS 10: the OAuth 2.1 authorization server and protected resource
// metadata for /api/mcp, following the MCP authorization specification:
// RFC 9728 and RFC 8414 metadata, RFC 7591 registration, client ID metadata
// documents, the consent page, PKCE S256 (RFC 7636), resource indicators
// (RFC 8707), iss in the answer (RFC 9207), rotating refresh tokens and
// revocation (RFC 7009). Errors are OAuth's {error, error_description}.
// The protocol's decisions live in the oauth room; this file speaks HTTP.
// Hand-written rather than the MCP SDK's auth router: that router is Express
// middleware and has no place for §10's consent form, operator token or
// grant-backed keys; the SDK's own client is what the tests drive it with.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { SCOPES, isScope, type Scope } from '../platform/contract/scopes.ts';
import { MCP_PATH, RESOURCE_METADATA_PATH, hashApiKey, isKeyShaped, lookupKey } from '../platform/edge/auth.ts';
import { AppError, toAppError } from '../platform/contract/errors.ts';
import { registerPaths } from '../transports/http-paths.ts';
import { getAccount } from '../modules/accounts/service.ts';
import { OAuthError } from '../modules/oauth/oauth-error.ts';
import { clientLabel, findClient, registerClient, type OAuthClient } from '../modules/oauth/clients.ts';
import { createCode, exchangeCode, refreshTokens, revokeToken } from '../modules/oauth/grants.ts';
import { consentPage, errorPage } from './consent-page.ts';
import type { OperatorServices } from './route.ts';

/** The parameters of an authorization request (RFC 6749 4.1.1, RFC 7636, RFC 8707) the form carries back. */
const REQUEST_PARAMETERS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
  'scope',
] as const;

type Params = Map<string, string[]>;
const one = (params: Params, name: string): string | undefined => params.get(name)?.[0];

function paramsOf(source: unknown): Params {
  const params: Params = new Map();
  if (typeof source === 'string') {
    for (const [name, value] of new URLSearchParams(source)) params.set(name, [...(params.get(name) ?? []), value]);
  } else if (source && typeof source === 'object') {
    for (const [name, value] of Object.entries(source)) {
      const values = Array.isArray(value) ? value : [value];
      params.set(
        name,
        values.filter((v) => typeof v === 'string'),
      );
    }
  }
  return params;
}

/** Where the request may go back to, once its client and redirect URI are known (else an error page). */
interface Checked {
  client: OAuthClient;
  redirectUri: string;
  state: string | undefined;
}

/** A refusal answered with a page (the consent page with its error, or the error page). */
class PageRefusal extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export function registerOAuthServer(app: FastifyInstance, services: OperatorServices): void {
  const base = services.config.publicBaseUrl;
  const resource = `${base}${MCP_PATH}`;
  const policy = { publicBaseUrl: base, allowHosts: services.config.webhookAllowHosts };

  const resourceMetadata = { resource, authorization_servers: [base], scopes_supported: [...SCOPES], bearer_methods_supported: ['header'] };
  const serverMetadata = {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...SCOPES],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };

  /** Client and redirect URI first: a failure here is a page, never a redirect (RFC 6749 4.1.2.1). */
  async function checkClient(params: Params): Promise<Checked> {
    const clientId = one(params, 'client_id');
    if (!clientId) throw new PageRefusal(400, 'The request names no client (client_id is missing).');
    let client: OAuthClient | null;
    try {
      client = await findClient(services.db, clientId, policy);
    } catch (err) {
      if (err instanceof OAuthError) throw new PageRefusal(400, `The client could not be identified: ${err.message}.`);
      throw err;
    }
    if (!client) throw new PageRefusal(400, 'This client is not registered with Merx.');
    const asked = one(params, 'redirect_uri');
    const redirectUri = asked ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined);
    if (!redirectUri || !client.redirect_uris.includes(redirectUri)) {
      throw new PageRefusal(400, 'The redirect address is not one this client registered.');
    }
    return { client, redirectUri, state: one(params, 'state') };
  }

  function redirect(reply: FastifyReply, checked: Checked, answer: Record<string, string>) {
    const target = new URL(checked.redirectUri);
    for (const [name, value] of Object.entries(answer)) target.searchParams.set(name, value);
    if (checked.state !== undefined) target.searchParams.set('state', checked.state);
    target.searchParams.set('iss', base);
    return reply.code(302).header('Location', target.toString()).header('Cache-Control', 'no-store').send();
  }

  /** After the client: S256 challenge, response type, resource (RFC 8707), known scopes; null when the request may go on. */
  function requestProblem(params: Params): Record<string, string> | null {
    const challenge = one(params, 'code_challenge');
    if (one(params, 'code_challenge_method') !== 'S256' || !challenge || !/^[A-Za-z0-9\-_]{43}$/.test(challenge)) {
      return {
        error: 'invalid_request',
        error_description: 'a code_challenge with code_challenge_method S256 is required (PKCE; plain is not accepted)',
      };
    }
    if (one(params, 'response_type') !== 'code') return { error: 'unsupported_response_type', error_description: 'response_type must be code' };
    const target = one(params, 'resource');
    if (!target) return { error: 'invalid_target', error_description: `resource is required: ${resource}` };
    if (target !== resource) return { error: 'invalid_target', error_description: `this server grants access only to ${resource}` };
    const unknown = askedScopes(params).filter((s) => !isScope(s));
    if (unknown.length) return { error: 'invalid_scope', error_description: `unknown scopes: ${unknown.join(' ')}` };
    return null;
  }

  const askedScopes = (params: Params): string[] => {
    const given = (params.get('scope') ?? []).join(' ').split(/\s+/).filter(Boolean);
    return given.length ? [...new Set(given)] : [...SCOPES];
  };

  function showPage(reply: FastifyReply, status: number, params: Params, checked: Checked, error?: string) {
    const request: Record<string, string> = {};
    for (const name of REQUEST_PARAMETERS) {
      const value = one(params, name);
      if (value !== undefined) request[name] = value;
    }
    if (!request.redirect_uri) request.redirect_uri = checked.redirectUri;
    const html = consentPage({
      request,
      error,
      asked: askedScopes(params),
      accountId: one(params, 'account_id'),
      clientName: clientLabel(checked.client, checked.redirectUri),
      redirectHost: new URL(checked.redirectUri).host,
    });
    return sendPage(reply, status, html);
  }

  /** Who the credential speaks for, and the scopes it may grant; a refusal page otherwise. */
  async function whoConsents(params: Params, ip: string): Promise<{ accountId: string; held: readonly Scope[] }> {
    const credential = one(params, 'credential') ?? '';
    const operatorToken = crypto.timingSafeEqual(crypto.createHash('sha256').update(credential, 'utf8').digest(), services.adminTokenSha256);
    if (credential && operatorToken) {
      const accountId = one(params, 'account_id')?.trim();
      if (!accountId || !/^[0-9a-f-]{36}$/i.test(accountId))
        throw new PageRefusal(400, 'With the operator token, enter the id of the account to connect.');
      const account = await getAccount(services.db, accountId).catch(() => null);
      if (!account || !account.active) throw new PageRefusal(400, 'No active account has this id.');
      return { accountId, held: SCOPES };
    }
    const refusal = new PageRefusal(401, 'This API key or operator token is not valid. Nothing was shared.');
    await services.rateLimits.authFailures.refuseIfLimited(`api-key:${ip}`);
    if (!isKeyShaped(credential)) return services.rateLimits.authFailures.failed(`api-key:${ip}`, refusal);
    const key = await lookupKey(services.db, hashApiKey(credential)).catch((err) => {
      if (err instanceof AppError && err.code === 'unauthorized') return null;
      throw err;
    });
    if (!key) return services.rateLimits.authFailures.failed(`api-key:${ip}`, refusal);
    const accountId = one(params, 'account_id')?.trim();
    if (accountId && accountId !== key.accountId) throw new PageRefusal(400, 'This API key belongs to another account than the one entered.');
    return { accountId: key.accountId, held: key.scopes };
  }

  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    // Browser-based clients (the MCP Inspector) discover, register and exchange from another origin; no cookie is involved.
    scope.addHook('onSend', async (request, reply) => {
      if (!request.url.startsWith('/oauth/authorize')) reply.header('Access-Control-Allow-Origin', '*');
      if (request.method === 'OPTIONS') {
        reply
          .header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS')
          .header('Access-Control-Allow-Headers', 'Content-Type, Authorization, MCP-Protocol-Version');
      }
    });
    scope.setErrorHandler(async (error: Error, request, reply) => {
      if (error instanceof OAuthError) return reply.code(error.status).header('Cache-Control', 'no-store').send(error.toBody());
      // Fastify's own refusals (a body too large, a content type it cannot read, unparsable JSON).
      const statusCode = (error as Error & { statusCode?: number }).statusCode;
      if (!(error instanceof AppError) && statusCode && statusCode < 500) {
        return reply.code(statusCode).send({ error: 'invalid_request', error_description: error.message });
      }
      // 429 (failed credentials past the limit), 503 (the database away, load shedding), 500.
      const refusal = toAppError(error);
      if (refusal.status >= 500 && refusal.code === 'internal_error') request.log.error({ err: error }, 'oauth request failed');
      reply.headers(refusal.headers);
      if (request.url.startsWith('/oauth/authorize'))
        return sendPage(reply, refusal.status, errorPage(refusal.status === 500 ? 'Merx could not answer; try again.' : refusal.message));
      const code =
        refusal.status === 429 || refusal.status === 503 ? 'temporarily_unavailable' : refusal.status < 500 ? 'invalid_request' : 'server_error';
      return reply
        .code(refusal.status)
        .send({ error: code, error_description: refusal.status === 500 ? 'the server could not answer; try again' : refusal.message });
    });

    scope.get(RESOURCE_METADATA_PATH, async () => resourceMetadata);
    scope.get('/.well-known/oauth-protected-resource', async () => resourceMetadata);
    scope.get('/.well-known/oauth-authorization-server', async () => serverMetadata);

    scope.post('/oauth/register', async (request, reply) => {
      return reply
        .code(201)
        .header('Cache-Control', 'no-store')
        .send(await registerClient(services.db, request.body));
    });

    /** The client and redirect checked (an error page otherwise), then the request's own parameters (a redirect otherwise); null once answered. */
    const checkedRequest = async (params: Params, reply: FastifyReply): Promise<Checked | null> => {
      let checked: Checked;
      try {
        checked = await checkClient(params);
      } catch (err) {
        if (!(err instanceof PageRefusal)) throw err;
        void sendPage(reply, err.status, errorPage(err.message));
        return null;
      }
      const problem = requestProblem(params);
      if (!problem) return checked;
      void redirect(reply, checked, problem);
      return null;
    };

    scope.get('/oauth/authorize', async (request, reply) => {
      const params = paramsOf(request.query);
      const checked = await checkedRequest(params, reply);
      if (!checked) return reply;
      return showPage(reply, 200, params, checked);
    });

    scope.post('/oauth/authorize', async (request, reply) => {
      const params = paramsOf(request.body);
      const checked = await checkedRequest(params, reply);
      if (!checked) return reply;
      const decision = one(params, 'decision');
      if (decision === 'deny') return redirect(reply, checked, { error: 'access_denied', error_description: 'the person denied access' });
      if (decision !== 'approve') return showPage(reply, 400, params, checked, 'Choose Approve or Deny.');
      try {
        const who = await whoConsents(params, request.ip);
        // EXTENSIONS 10: granted = asked (the page offers only those), chosen, and held by the credential.
        const granted = SCOPES.filter((s) => askedScopes(params).includes(s) && who.held.includes(s));
        if (!(params.get('scope') ?? []).join(' ').trim() || granted.length === 0) {
          throw new PageRefusal(400, 'Grant at least one scope that your API key holds.');
        }
        const approval = one(params, 'approval') ?? 'on';
        if (approval !== 'on' && approval !== 'off') throw new PageRefusal(400, 'approval must be on or off.');
        const code = await createCode(services.db, {
          clientId: checked.client.id,
          accountId: who.accountId,
          redirectUri: checked.redirectUri,
          resource,
          scopes: granted,
          writes: approval === 'on' ? 'approval' : 'direct',
          codeChallenge: one(params, 'code_challenge')!,
        });
        return redirect(reply, checked, { code });
      } catch (err) {
        if (err instanceof PageRefusal) return showPage(reply, err.status, params, checked, err.message);
        throw err;
      }
    });

    scope.post('/oauth/token', async (request, reply) => {
      const params = paramsOf(request.body);
      const grantType = one(params, 'grant_type');
      const clientId = one(params, 'client_id');
      if (!clientId) throw new OAuthError('invalid_client', 'client_id is required (public clients authenticate with none)', 401);
      let answer;
      if (grantType === 'authorization_code') {
        const code = one(params, 'code');
        const verifier = one(params, 'code_verifier');
        if (!code || !verifier) throw new OAuthError('invalid_request', 'code and code_verifier are required');
        answer = await exchangeCode(services.db, services.keys, {
          code,
          clientId,
          verifier,
          redirectUri: one(params, 'redirect_uri'),
          resource: one(params, 'resource'),
        });
      } else if (grantType === 'refresh_token') {
        const refreshToken = one(params, 'refresh_token');
        if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
        answer = await refreshTokens(services.db, services.keys, {
          refreshToken,
          clientId,
          resource: one(params, 'resource'),
          scope: one(params, 'scope'),
        });
      } else {
        throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
      }
      return reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache').send(answer);
    });

    scope.post('/oauth/revoke', async (request, reply) => {
      const params = paramsOf(request.body);
      const token = one(params, 'token');
      if (!token) throw new OAuthError('invalid_request', 'token is required');
      await revokeToken(services.db, services.keys, token, one(params, 'client_id'));
      return reply.code(200).header('Cache-Control', 'no-store').send();
    });

    registerPaths(scope, [
      { path: RESOURCE_METADATA_PATH, method: 'GET' },
      { path: '/.well-known/oauth-protected-resource', method: 'GET' },
      { path: '/.well-known/oauth-authorization-server', method: 'GET' },
      { path: '/oauth/register', method: 'POST' },
      { path: '/oauth/authorize', method: 'GET' },
      { path: '/oauth/authorize', method: 'POST' },
      { path: '/oauth/token', method: 'POST' },
      { path: '/oauth/revoke', method: 'POST' },
    ]);
  });
}

function sendPage(reply: FastifyReply, status: number, html: string) {
  return (
    reply
      .code(status)
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      // The page loads nothing and may not be framed (clickjacking a consent).
      // No form-action: browsers apply it to the redirect that follows the post, which goes to the client.
      .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
      .header('X-Frame-Options', 'DENY')
      .send(html)
  );
}
