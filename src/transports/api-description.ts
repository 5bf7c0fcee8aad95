// The public OpenAPI document's info and the decisions it records (GAPS.md:
// "Each decision appears in the OpenAPI document").
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
  so rows inserted while paging never shift pages). \`next_cursor\` is null when \`has_more\` is false. A limit out of range,
  a non-integer or an unknown query parameter is a 400, never silently clamped.
- Unknown JSON body fields are a 400 with \`details.allowed\` listing the accepted fields. Malformed JSON is a 400;
  a body over 1 MiB is a 413 \`payload_too_large\`.
- Write operations marked with the \`X-Merx-Dry-Run\` header accept a dry run (\`1\`, \`true\` or \`yes\`): nothing is
  written, no courier is called, and the answer is a preview.
- Every response carries \`X-Deploy-SHA\` (the serving build) and \`X-Request-Id\`; every authenticated response
  carries \`X-RateLimit-Limit\` and \`X-RateLimit-Remaining\`; a 429 also \`Retry-After\` (seconds).
- Rate limits: 300 requests per minute per key on REST; 120 JSON-RPC messages per minute per key on MCP (a batch of N counts N).
- Order list \`q\` is a case-insensitive substring match over customer name, phone, email and tracking number, in which
  \`%\` and \`_\` are literal characters. \`payment\` matches \`payment_status\`; \`courier=none\` finds orders without a
  tracking number; \`product_id\` matches orders whose page sells the product or whose line items contain it.
- \`updated_at\` is set at creation, so \`since\` polling sees new rows.

## Errors
Every error is \`{error: {code, message, scope?, details?}}\`; \`code\` is stable, \`message\` is not.
Codes: unauthorized 401, scope_missing 403, plan_required 403, plan_lookup_failed 403, method_not_allowed 405,
validation_failed 400, not_found 404, conflict 409, payload_too_large 413, rate_limited 429, internal_error 500,
courier_error 502, migration_pending 503.

## Versioning
The version is in the path (\`/api/v1\`) and changes only additively. Webhook envelopes carry \`api_version\` \`2026-09-01\`.
`.trim();

export const ERROR_STATUSES = {
  '400': 'validation_failed: bad id, query, body, date or cursor',
  '401': 'unauthorized: missing, malformed or revoked key, or deactivated account',
  '403': 'scope_missing, plan_required or plan_lookup_failed',
  '404': 'not_found: no such row in this account',
  '405': 'method_not_allowed (Allow lists the methods)',
  '409': 'conflict',
  '413': 'payload_too_large',
  '429': 'rate_limited (Retry-After)',
  '500': 'internal_error',
  '502': 'courier_error',
  '503': 'migration_pending: feature not yet enabled on this deployment',
};

export const COMMON_HEADERS = {
  'X-Deploy-SHA': { description: '10-character revision id of the serving build.', schema: { type: 'string' } },
  'X-Request-Id': { description: 'Id of this request, also in the service logs.', schema: { type: 'string' } },
  'X-RateLimit-Limit': { description: 'Requests allowed per minute for this key.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current minute.', schema: { type: 'integer' } },
};
