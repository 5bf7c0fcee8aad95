// The tables this room owns (TABLES): only SQL in src/modules/inventory/ writes
// them; other rooms change them by calling this room's functions. READS lists
// the other rooms' tables its SQL reads; test/house-rules.test.ts holds both to the SQL.
export const TABLES = ['stock_movements', 'low_stock_alerts'] as const;
export const READS = ['accounts', 'product_variants', 'products'] as const;
