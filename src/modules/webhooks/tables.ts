// The tables this room owns: only SQL in src/modules/webhooks/ writes them; other
// rooms change them by calling this room's services (test/house-rules.test.ts).
export const TABLES = ['webhook_subscriptions', 'webhook_deliveries', 'webhook_sink_captures', 'webhook_retired_secrets', 'webhook_attempts', 'webhook_recoveries'] as const;
