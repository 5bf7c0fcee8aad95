// The tables this room owns: only SQL in src/modules/accounts/ writes them; other
// rooms change them by calling this room's services (test/house-rules.test.ts).
export const TABLES = ['accounts', 'api_keys'] as const;
