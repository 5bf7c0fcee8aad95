// The tables this room owns: only SQL in src/modules/products/ writes them; other
// rooms change them by calling this room's services (test/house-rules.test.ts).
// Stock levels on them are decided by the inventory room and written
// through stock-levels.ts.
export const TABLES = ['products', 'product_variants'] as const;
