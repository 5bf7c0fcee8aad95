// Talking to the operator API (/admin/api) with the operator token. The token
// lives in sessionStorage: it is gone when the tab closes, and never in a URL.
// Calls name a route as its OpenAPI document does, so each answers its own type.
import type { Method, OperationAnswer, OperationName, OperatorAnswer, OperatorInput, OperatorPath } from './api-types';

const TOKEN_KEY = 'merx.operatorToken';

export const getToken = () => sessionStorage.getItem(TOKEN_KEY);
export const setToken = (token: string) => sessionStorage.setItem(TOKEN_KEY, token);
export const clearToken = () => sessionStorage.removeItem(TOKEN_KEY);

/** An error answer in the contract's shape: {error: {code, message, details?}}. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

let onUnauthorized: () => void = () => {};
export const whenUnauthorized = (handler: () => void) => {
  onUnauthorized = handler;
};

async function request(method: string, url: string, body?: unknown, token = getToken()): Promise<Response> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token ?? ''}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.ok) return res;
  const payload = await res.json().catch(() => null);
  const error = payload?.error ?? {};
  if (res.status === 401) onUnauthorized();
  throw new ApiError(res.status, error.code ?? 'http_error', error.message ?? `${res.status} ${res.statusText}`, error.details);
}

/** The path with its {placeholders} filled in, and the query's given values after it. */
function urlOf(path: string, values: Record<string, string> = {}, query: Record<string, unknown> = {}): string {
  const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name]));
  const search = new URLSearchParams(withoutEmpty(query) as Record<string, string>).toString();
  return search ? `${url}?${search}` : url;
}

/** `token`: one to try instead of the stored one (signing in). */
type Call<M extends Method, P extends OperatorPath<M>> = OperatorInput<M, P> & { token?: string };

/** Calls a route of the operator API: admin('GET', '/admin/api/accounts/{id}/keys', { path: { id } }) answers that route's JSON. */
export async function admin<M extends Method, P extends OperatorPath<M>>(
  method: M,
  path: P,
  ...[call]: {} extends Call<M, P> ? [call?: Call<M, P>] : [call: Call<M, P>]
): Promise<OperatorAnswer<M, P>> {
  const {
    path: values,
    query,
    body,
    token,
  } = (call ?? {}) as { path?: Record<string, string>; query?: Record<string, unknown>; body?: unknown; token?: string };
  const res = await request(method, urlOf(path, values, query), body, token);
  return (await res.json()) as OperatorAnswer<M, P>;
}

/** A public operation's arguments as its MCP tool takes them; `dry_run: true` asks for the preview. */
type Arguments = Record<string, unknown> & { dry_run?: boolean };

/** Runs a public operation of the registry as the merchant's admin (POST /accounts/{id}/operations/{name}). */
export async function runOperation<N extends OperationName, A extends Arguments = {}>(
  accountId: string,
  name: N,
  args?: A,
): Promise<OperationAnswer<N, A>> {
  const answer = await admin('POST', '/admin/api/accounts/{id}/operations/{name}', {
    path: { id: accountId, name },
    body: { arguments: withoutEmpty(args ?? {}) },
  });
  // The operator document can only say "an object": what comes is the operation's own answer, typed by its name.
  return answer as OperationAnswer<N, A>;
}

/** Runs an operation that answers a file (the PDF label, an export) and hands it to the browser. */
export async function downloadOperation(
  accountId: string,
  name: OperationName,
  args: Record<string, unknown>,
  fallbackName = 'download',
): Promise<void> {
  const res = await request('POST', urlOf('/admin/api/accounts/{id}/operations/{name}', { id: accountId, name }), { arguments: withoutEmpty(args) });
  const filename = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  const url = URL.createObjectURL(await res.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Form values left empty mean "not given". */
function withoutEmpty(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== '' && v !== undefined));
}
