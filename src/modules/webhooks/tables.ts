// The tables this room owns (TABLES): only SQL in src/modules/webhooks/ writes
// them; other rooms change them by calling this room's functions. READS lists
// the other rooms' tables its SQL reads; test/house-rules.test.ts holds both to the SQL.
export const TABLES = [
  'webhook_subscriptions',
  'webhook_deliveries',
  'webhook_sink_captures',
  'webhook_retired_secrets',
  'webhook_attempts',
  'webhook_recoveries',
  'webhook_flows',
] as const;
export const READS = ['accounts', 'events'] as const;
