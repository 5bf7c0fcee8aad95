// The public OpenAPI document's info and the decisions it records (GAPS.md:
// "Each decision appears in the OpenAPI document").
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from '../platform/operations/idempotency.ts';
import { ETAG_HEADER, IF_MATCH_HEADER, IF_NONE_MATCH_HEADER } from '../platform/contract/etag.ts';
import { APPROVAL_HEADER } from '../platform/operations/agents-hook.ts';
import type { ErrorCode } from '../platform/contract/errors.ts';
import { ERROR_MEANINGS, errorStatuses, errorTableRows } from './error-descriptions.ts';
export const API_DESCRIPTION = `
Merx is a commerce operations API: one merchant account's orders, shipments, inventory, products, customers,
segments and webhook subscriptions, over REST (this document), an MCP tool server at \`POST /api/mcp\` with the
same operations, and signed webhooks.

## Authentication
\`Authorization: Bearer merx_...\`. One key belongs to one account; scopes are explicit (\`:write\` never implies \`:read\`).
Checks run in this order on a known route: 401 \`unauthorized\`, 403 \`scope_missing\` (with \`error.scope\`),
403 \`plan_required\` / \`plan_lookup_failed\`, 429 \`rate_limited\`, then 400 (ids, query, body), then 404.
Unknown routes answer 404 and a wrong method 405 (with \`Allow\`) before any key check; OPTIONS answers 204.

## Conventions
- Success is 201 for a POST that creates a resource, 200 otherwise; dry runs always 200.
- Ids are UUIDs; a non-UUID id is a 400 before any data access. Rows of other accounts are 404, never 403.
- Dates are strict ISO 8601: \`2026-09-01\`, \`2026-09-01T10:00:00Z\`, \`2026-09-01T10:00:00.123+02:00\`. A date-only
  \`from\` or \`since\` means 00:00:00Z of that day; a date-only \`to\` means the end of that day (both inclusive).
- Lists: \`limit\` 1..200 (default 50), \`cursor\` = the previous page's \`next_cursor\` (opaque; keyset on created_at, id,
  so rows inserted while paging never shift pages; signed to the account it was issued to, so a crafted or altered
  cursor, or another account's, is a 400). \`next_cursor\` is null when \`has_more\` is false. A limit out of range,
  a non-integer or an unknown query parameter is a 400, never silently clamped.
- Unknown JSON body fields are a 400 with \`details.allowed\` listing the accepted fields. Malformed JSON is a 400;
  a body over 1 MiB is a 413 \`payload_too_large\`. JSON nested deeper than 64 levels of objects and arrays (\`{}\` is one)
  is a 400 with \`details.reason: "json_too_deep"\`, refused before it is parsed; over MCP it is JSON-RPC \`-32602\` with the
  same \`data\`, and a tool's \`arguments\` may nest 64 levels of their own.
- Write operations marked with the \`X-Merx-Dry-Run\` header accept a dry run (\`1\`, \`true\` or \`yes\`): nothing is
  written, no courier is called, and the answer is a preview.
- Every response carries \`X-Deploy-SHA\` (the serving build) and \`X-Request-Id\`; every authenticated response
  carries \`X-RateLimit-Limit\` and \`X-RateLimit-Remaining\`; a 429 also \`Retry-After\` (seconds).
- Rate limits: 300 requests per minute per key on REST; 120 JSON-RPC messages per minute per key on MCP (a batch of N counts N).
  Failed authentications are limited per client address (1,000 a minute by default): past them, requests from that address
  answer 429 \`rate_limited\` with \`Retry-After\` instead of 401, except with a key the serving instance has just admitted.
- An overloaded instance answers 503 \`unavailable\` at once (\`details.reason: "overloaded"\`, \`Retry-After\`), before
  the key is checked; nothing was done, so any request may be retried after \`Retry-After\` seconds.
- Order list \`q\` is a case-insensitive substring match over customer name, phone, email and tracking number, in which
  \`%\` and \`_\` are literal characters. \`payment\` matches \`payment_status\`; \`courier=none\` finds orders without a
  tracking number; \`product_id\` matches orders whose page sells the product or whose line items contain it.
- \`updated_at\` is set at creation, so \`since\` polling sees new rows.

## Errors
Every error is \`{error: {code, message, scope?, details?}}\`: \`code\` is stable snake_case, \`message\` is English and may change.
\`details\` carries \`allowed\`, \`kind\`, \`reason\`, \`detail\`, \`shipment\` or \`retry_after_sec\` where they help.

| code | HTTP | when |
|---|---|---|
${errorTableRows()}

Over MCP the same refusals are tool results with \`isError: true\` and \`structuredContent: {error, reason}\`: \`SCOPE\`, \`PLAN\`, or the code
upper-cased (\`NOT_FOUND\`, \`CONFLICT\`, ...).

## Integrator safety (examples in the Integrator safety guide)
- **Events feed**: \`GET /api/v1/events\` (MCP \`list_events\`) lists the envelopes webhooks deliver, oldest first. A consumer that
  follows \`next_cursor\` from the first page sees every event exactly once, even when transactions commit out of order;
  \`next_cursor\` stays set on the last page so you can poll with it. Events are kept 30 days; an older cursor is 400
  with \`details.reason: "cursor_expired"\`.
- **Idempotency keys**: every write accepts \`Idempotency-Key\` (MCP: \`params._meta.idempotency_key\`). The first answer is
  stored for 24 hours and replayed with \`Idempotent-Replayed: true\`; nothing runs twice, also across instances. Reuse with
  another request is 409 \`idempotency_key_reused\`, a key still running 409 \`idempotency_key_in_use\` (in \`details.reason\`).
- **ETag / If-Match**: \`GET\` and \`PATCH\` of an order, a product and a webhook subscription answer with a strong \`ETag\`
  that changes whenever the resource changes, by any path. \`PATCH\` with \`If-Match\` (MCP: \`params._meta.if_match\`; reads
  give the tag in \`_meta.etag\`) changes nothing and answers 412 \`precondition_failed\` with \`details.current_etag\` when the
  resource changed meanwhile; \`If-Match: *\` matches any existing resource; dry runs check it too. \`GET\` with a matching
  \`If-None-Match\` answers 304 with no body.
- **Caching for pollers**: every other \`GET\` (lists, stock, reports) answers with an \`ETag\` of the answer as sent; send it
  back in \`If-None-Match\` and, while nothing changed, the answer is 304 with no body.
- **Standard Webhooks**: every delivery also carries \`webhook-id\`, \`webhook-timestamp\` and \`webhook-signature\` (see the
  \`webhooks\` section). \`POST /api/v1/webhooks/{id}/rotate-secret\` rotates the secret with both signing until the old expires;
  \`POST /api/v1/webhooks/{id}/verify-signature\` says why a receiver's verification fails.

## Versioning
The version is in the path (\`/api/v1\`) and changes only additively. Webhook envelopes carry \`api_version\` \`2026-09-01\`.
`.trim();

/** EXTENSIONS 2 in the document: the request header of write operations and the mark of a replay. */
export const IDEMPOTENCY_HEADERS = {
  request: {
    name: IDEMPOTENCY_KEY_HEADER,
    description:
      'Makes a retry safe: the first answer (status, body, Location/ETag) is stored for 24 hours under this key (per account, shared with MCP ' +
      '_meta.idempotency_key) and replayed to the same request with Idempotent-Replayed: true, doing nothing again. The same key with another ' +
      'method, path or body is 409 (details.reason idempotency_key_reused), and while the first request runs 409 idempotency_key_in_use. ' +
      '401, 403, 429 and 5xx answers are not stored; dry runs neither store nor use a key.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' },
  },
  replayed: {
    name: REPLAYED_HEADER,
    description: 'true when this answer is the stored answer of an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** EXTENSIONS 7 in the document: the approval header and the 202 answer of a write by a key whose writes wait for a person. */
export const APPROVAL_HEADERS = {
  header: {
    name: APPROVAL_HEADER,
    description:
      'The id of an approved approval: the write runs once, only if the operation and arguments are those approved and the target is unchanged. ' +
      'Refused, in this order: not an approval of this key 404; rejected 403 approval_rejected; used, expired, pending or for another request ' +
      '409 (details.reason approval_used, approval_expired, approval_pending, approval_mismatch); the target changed since 412 precondition_failed.',
    schema: { type: 'string' },
  },
  accepted:
    'Not performed: the key was issued with writes "approval", so the write waits for a person. The body is the approval (preview, effects); ' +
    'poll GET /api/v1/approvals/{id}, then repeat the request with Merx-Approval. With an Idempotency-Key, asking again answers the same approval.',
};

/** EXTENSIONS 3 in the document: the headers and answers of versioned resources (orders, products, webhook subscriptions). */
export const VERSIONING_HEADERS = {
  etag: {
    name: ETAG_HEADER,
    description:
      'Strong entity tag. For an order, a product or a webhook subscription: of the resource in `data` (for a dry run: of the current resource); ' +
      'it changes whenever the resource changes, by any path. For any other read (lists): of the answer as sent, so a poller that sends it back ' +
      'in If-None-Match gets a 304 while nothing changed.',
    schema: { type: 'string', pattern: '^"[A-Za-z0-9_-]+"$' },
  },
  ifMatch: {
    name: IF_MATCH_HEADER,
    description:
      'Change the resource only if it is still the version you read: an ETag from a GET or PATCH answer (several comma-separated, or * for any ' +
      'existing resource). On a mismatch nothing changes and the answer is 412 precondition_failed with details.current_etag. Dry runs check it too.',
    schema: { type: 'string', minLength: 1 },
  },
  ifNoneMatch: {
    name: IF_NONE_MATCH_HEADER,
    description: 'The ETag of the copy you hold (several comma-separated, or *): when it is still current the answer is 304 with no body.',
    schema: { type: 'string', minLength: 1 },
  },
  notModified: 'Not modified: the ETag in If-None-Match is current; no body.',
  preconditionFailed: 'precondition_failed: If-Match does not match the current ETag (details.current_etag, also in ETag); nothing changed',
};

/** Every code but precondition_failed, which only versioned resources answer (VERSIONING_HEADERS.preconditionFailed). */
export const ERROR_STATUSES = errorStatuses((Object.keys(ERROR_MEANINGS) as ErrorCode[]).filter((code) => code !== 'precondition_failed'));

/** The operator API's refusals: its own, plus the failed-token limit and load shedding (issue 27). */
export const OPERATOR_ERROR_STATUSES = errorStatuses(['validation_failed', 'unauthorized', 'not_found', 'conflict', 'rate_limited', 'unavailable'], {
  rate_limited: 'too many wrong operator tokens from this address',
  unavailable: ERROR_MEANINGS.unavailable.briefly,
});

export const COMMON_HEADERS = {
  'X-Deploy-SHA': { description: '10-character revision id of the serving build.', schema: { type: 'string' } },
  'X-Request-Id': { description: 'Id of this request, also in the service logs.', schema: { type: 'string' } },
  'X-RateLimit-Limit': { description: 'Requests allowed per minute for this key.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current minute.', schema: { type: 'integer' } },
};
