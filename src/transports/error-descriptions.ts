// What each error code of the code table (platform/contract/errors.ts) means, for the
// OpenAPI documents: the introduction's Errors table and each route's error
// responses are derived from it, so a new code cannot go undescribed (the
// record is keyed by the table's codes) nor land under a wrong status.
import { ERROR_STATUS, type ErrorCode } from '../platform/contract/errors.ts';

interface ErrorMeaning {
  /** Its row of the Errors table: when it is answered, and what `details` carries. */
  when: string;
  /** What a response of its status says of it, after the code; none when the code says it. */
  briefly?: string;
  /** Always sent with Retry-After. */
  retryAfter?: true;
}

export const ERROR_MEANINGS: Record<ErrorCode, ErrorMeaning> = {
  validation_failed: {
    when: 'unknown field or query parameter, wrong type or enum value, non-UUID id, date not strict ISO 8601, bad cursor, webhook URL policy (`details.reason`); `details.allowed` lists what is accepted',
    briefly: 'bad id, query, body, date or cursor',
  },
  unauthorized: {
    when: 'missing, malformed or revoked key, or a deactivated account (with `WWW-Authenticate`)',
    briefly: 'missing, malformed or revoked key, or deactivated account',
  },
  scope_missing: { when: "the key lacks the route's scope; `error.scope` names it", briefly: "the key lacks the route's scope (error.scope)" },
  plan_required: { when: 'the account is on the Free plan', briefly: 'the account is on the Free plan' },
  plan_lookup_failed: { when: 'the plan could not be verified (fail closed)', briefly: 'the plan could not be verified' },
  approval_rejected: {
    when: 'the approval named in `Merx-Approval` (MCP `_meta.approval_id`) was rejected; nothing ran',
    briefly: 'the approval named in Merx-Approval was rejected',
  },
  not_found: {
    when: 'no such route, or no such row in this account (rows of other accounts too, never 403)',
    briefly: 'no such row in this account',
  },
  method_not_allowed: { when: 'wrong method; `Allow` lists the right ones', briefly: 'Allow lists the methods' },
  request_timeout: {
    when: 'the request (headers and body) was not received within 30 seconds; the connection is closed',
    briefly: 'the request was not received in time',
  },
  conflict: {
    when: 'live shipment (`details.shipment`), terminal shipment, 20-subscription limit, delivery already delivered, inactive webhook on test, members on a computed segment',
  },
  precondition_failed: {
    when: "`If-Match` does not match the resource's current ETag (orders, products, webhook subscriptions); nothing changed; `details.current_etag` is the current one",
    briefly: 'If-Match does not match the current ETag',
  },
  payload_too_large: { when: 'a body over 1 MiB', briefly: 'a body over 1 MiB' },
  headers_too_large: { when: 'the request line and headers exceed 16 KB', briefly: 'the request line and headers exceed 16 KB' },
  rate_limited: {
    when: 'over a rate limit; `Retry-After` and `details.retry_after_sec` say when to come back',
    briefly: "over the key's rate limit, or too many failed authentications from this address",
    retryAfter: true,
  },
  internal_error: { when: 'a defect on our side; the message never shows its cause' },
  courier_error: {
    when: 'the courier refused or did not answer (`details.reason`, `details.detail`)',
    briefly: 'the courier refused or did not answer',
  },
  migration_pending: { when: 'the feature is not yet enabled on this deployment', briefly: 'feature not yet enabled on this deployment' },
  unavailable: {
    when:
      'the database cannot be reached right now (`details.reason: "database_unavailable"`), or this instance is overloaded; `Retry-After` and ' +
      '`details.retry_after_sec` say when to try again. Nothing was changed unless a replay of the same `Idempotency-Key` says otherwise',
    briefly: 'the database cannot be reached or the instance is overloaded',
    retryAfter: true,
  },
};

/** Every code, by status (the table's order within one status). */
const CODES = (Object.keys(ERROR_STATUS) as ErrorCode[]).sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b]);

/** The rows of the introduction's Errors table (`| code | HTTP | when |`), one per code. */
export function errorTableRows(): string {
  return CODES.map((code) => `| \`${code}\` | ${ERROR_STATUS[code]} | ${ERROR_MEANINGS[code].when} |`).join('\n');
}

/**
 * Each status `codes` answer with, described by its codes (and `briefly`, or
 * a document's own `texts` when it gives them): what every route of an
 * OpenAPI document lists or sums up as its error responses.
 */
export function errorStatuses(codes: readonly ErrorCode[], texts?: Partial<Record<ErrorCode, string>>): Record<string, string> {
  const statuses: Record<string, string[]> = {};
  for (const code of CODES.filter((c) => codes.includes(c))) {
    const text = texts ? texts[code] : ERROR_MEANINGS[code].briefly;
    (statuses[ERROR_STATUS[code]] ??= []).push(`${code}${ERROR_MEANINGS[code].retryAfter ? ' (Retry-After)' : ''}${text ? `: ${text}` : ''}`);
  }
  return Object.fromEntries(Object.entries(statuses).map(([status, said]) => [status, said.join('; ')]));
}
