// The `instructions` of the MCP initialize result: how an AI agent should use this server.
export const MCP_INSTRUCTIONS = [
  "Merx gives you one merchant account's commerce operations: orders, shipments, inventory, products, customers, segments and webhooks.",
  'The tools you see are the ones your API key is allowed to use. Tool arguments mirror the REST API (GET /api/v1/openapi.json): path, query and body fields flattened into one object.',
  'Lists are newest first with keyset paging: pass next_cursor back as cursor while has_more is true. To watch for changes, call list_orders with since set to the time of your previous call.',
  'Every write tool accepts dry_run: true, which validates and previews the result without writing anything or calling a courier. Prefer a dry run before a change you are unsure of.',
  'To retry a write safely, send params._meta.idempotency_key (any string of 1..255 printable characters, no spaces) with tools/call: the same key and arguments answer the first result again (_meta.idempotent_replayed: true) and do nothing twice.',
  'get_order, get_product and get_webhook (and the update tools) return the resource\'s version in _meta.etag. To change it without overwriting someone else\'s edit, send that value as params._meta.if_match with update_order, update_product or update_webhook: if the resource changed meanwhile the refusal is PRECONDITION_FAILED (its _meta.etag is the current version; read again, then retry). "*" matches any version.',
  'list_events lists what happened (the webhook events), oldest first; keep its next_cursor and pass it back as cursor to see only newer events.',
  'Ids are UUIDs (order numbers are not ids). A refusal comes back as isError: true with structuredContent {error, reason}: SCOPE (the key lacks a scope), PLAN, NOT_FOUND, VALIDATION_FAILED, CONFLICT, PRECONDITION_FAILED, COURIER_ERROR, RATE_LIMITED.',
].join('\n');
