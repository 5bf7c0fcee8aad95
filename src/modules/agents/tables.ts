// The tables this room owns (TABLES): only SQL in src/modules/agents/ writes
// them. The platform's operation pipeline reaches them through the agents
// hook (src/platform/operations/agents-hook.ts), which this room implements
// (hook.ts). READS lists the other rooms' tables its SQL reads (the operator's
// approval lists name the key that asked); test/house-rules.test.ts holds both to the SQL.
export const TABLES = ['approvals', 'request_logs'] as const;
export const READS = ['api_keys'] as const;
