// The tables this room owns (TABLES) and the other rooms' tables its SQL reads
// (READS); test/house-rules.test.ts holds both to the SQL. A grant stands on an
// api_keys row that the accounts room writes (issueGrantKey, revokeKey).
export const TABLES = ['oauth_clients', 'oauth_grants', 'oauth_codes', 'oauth_tokens'] as const;
export const READS = ['api_keys'] as const;
