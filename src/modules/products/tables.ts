// The tables this room owns (TABLES): only SQL in src/modules/products/ writes
// them; other rooms change them by calling this room's functions. READS lists
// the other rooms' tables its SQL reads; test/house-rules.test.ts holds both to the SQL.
// Stock levels on them are decided by the inventory room and written
// through stock-levels.ts.
export const TABLES = ['products', 'product_variants'] as const;
export const READS = [] as const;
