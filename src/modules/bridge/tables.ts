// The tables this room owns: only SQL in src/modules/bridge/ writes them; other
// rooms change them by calling this room's services (test/house-rules.test.ts).
export const TABLES = ['briefs', 'asset_activity'] as const;
