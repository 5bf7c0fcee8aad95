// One error type, one code table (SPEC Errors). The code decides the HTTP
// status and the MCP refusal code; a 500 never shows its cause.
import { isUnavailableError, UNAVAILABLE_RETRY_AFTER_SEC } from '../db/health.ts';

export const ERROR_STATUS = {
  unauthorized: 401,
  scope_missing: 403,
  plan_required: 403,
  plan_lookup_failed: 403,
  /** EXTENSIONS 7: the approval a repeated write names was rejected. */
  approval_rejected: 403,
  method_not_allowed: 405,
  validation_failed: 400,
  not_found: 404,
  conflict: 409,
  /** EXTENSIONS 3: If-Match does not match the current ETag. */
  precondition_failed: 412,
  payload_too_large: 413,
  request_timeout: 408,
  headers_too_large: 431,
  rate_limited: 429,
  internal_error: 500,
  courier_error: 502,
  migration_pending: 503,
  /** Issue 27: the database (or the instance itself, overloaded) cannot serve now; always with Retry-After. */
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetails {
  allowed?: string[];
  kind?: string;
  reason?: string;
  detail?: unknown;
  shipment?: unknown;
  retry_after_sec?: number;
  [key: string]: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | unknown[] | undefined;
  readonly scope: string | undefined;
  /** Whether trying the same thing again later may succeed (courier outages, timeouts). */
  readonly retryable: boolean;
  /** Extra response headers that belong to this error (Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    details?: ErrorDetails | unknown[],
    options: { scope?: string; retryable?: boolean; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.code = code;
    this.details = details;
    this.scope = options.scope;
    this.retryable = options.retryable ?? false;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toBody(): { error: { code: string; message: string; scope?: string; details?: unknown } } {
    const error: { code: string; message: string; scope?: string; details?: unknown } = { code: this.code, message: this.message };
    if (this.scope) error.scope = this.scope;
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

export const WWW_AUTHENTICATE = 'Bearer realm="Merx API"';

export function unauthorized(message = 'missing, malformed or revoked API key'): AppError {
  return new AppError('unauthorized', message, undefined, { headers: { 'WWW-Authenticate': WWW_AUTHENTICATE } });
}

export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found`);
}

/** 503 `unavailable`: the database cannot be reached (issue 27); the client retries after Retry-After. */
export function databaseUnavailable(): AppError {
  return new AppError(
    'unavailable',
    'the database is unreachable right now; retry after the Retry-After seconds',
    { reason: 'database_unavailable', retry_after_sec: UNAVAILABLE_RETRY_AFTER_SEC },
    { retryable: true, headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SEC) } },
  );
}

/**
 * Postgres errors mapped in one place: unique -> 409, foreign key /
 * check -> 400, a lost or refused connection -> 503 unavailable.
 */
export function fromDatabaseError(err: unknown): AppError | null {
  if (isUnavailableError(err)) return databaseUnavailable();
  const code = (err as { code?: string } | null)?.code;
  if (code === '23505') return new AppError('conflict', 'a record with the same unique value already exists');
  if (code === '23503') return new AppError('validation_failed', 'a referenced record does not exist');
  // The inputs are checked before any query (NUL, date range); these codes are the net under that check, never a 500.
  // 22P02/22003/22007/22008: malformed or out-of-range numbers and dates; 22021/22P05: text PostgreSQL cannot store (NUL).
  if (['23514', '22P02', '22003', '22007', '22008', '22021', '22P05'].includes(code ?? '')) {
    return new AppError('validation_failed', 'a value is out of range or malformed');
  }
  return null;
}

/** Anything thrown becomes an AppError; unknown failures become a bare internal_error. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return fromDatabaseError(err) ?? new AppError('internal_error', 'internal server error');
}

/** SPEC Errors, MCP: SCOPE, PLAN, or the REST code upper-cased. */
export function mcpRefusalCode(code: ErrorCode): string {
  if (code === 'scope_missing') return 'SCOPE';
  if (code === 'plan_required' || code === 'plan_lookup_failed') return 'PLAN';
  return code.toUpperCase();
}
