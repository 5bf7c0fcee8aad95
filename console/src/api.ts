// Talking to the operator API (/admin/api) with the operator token. The token
// lives in sessionStorage: it is gone when the tab closes, and never in a URL.
const TOKEN_KEY = 'merx.operatorToken';
export const API = '/admin/api';

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

async function request(method: string, path: string, body?: unknown, token = getToken()): Promise<Response> {
  const res = await fetch(API + path, {
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

export async function admin<T = any>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
  const res = await request(method, path, body, token);
  return (await res.json()) as T;
}

/** Runs a public operation of the registry as the merchant's admin (POST /accounts/{id}/operations/{name}). */
export function runOperation<T = any>(accountId: string, name: string, args: Record<string, unknown> = {}): Promise<T> {
  return admin<T>('POST', `/accounts/${accountId}/operations/${name}`, { arguments: withoutEmpty(args) });
}

/** Runs an operation that answers a file (the PDF label) and hands it to the browser. */
export async function downloadOperation(accountId: string, name: string, args: Record<string, unknown>): Promise<void> {
  const res = await request('POST', `/accounts/${accountId}/operations/${name}`, { arguments: args });
  const filename = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'download';
  const url = URL.createObjectURL(await res.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Form values left empty mean "not given". */
export function withoutEmpty(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== '' && v !== undefined));
}

/** A query string of the values given (empty ones left out). */
export const queryString = (params: Record<string, unknown>) => new URLSearchParams(withoutEmpty(params) as Record<string, string>).toString();

/** A keyset-paged list answer. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface ServiceInfo {
  public_base_url: string;
  sink_url: string;
  database: 'postgres' | 'pglite';
  deploy_sha: string;
  courier_mode: string;
  couriers: Array<{ slug: string; mode: string | null; status_updates: 'poll' | 'push'; cancel: boolean }>;
  jobs: string[];
  scopes: string[];
  presets: Record<string, string[]>;
  operations: Array<{ name: string; method: string; path: string; rest: boolean; mcp: boolean; scope: string; summary: string; dry_run: boolean }>;
}
