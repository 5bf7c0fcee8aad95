// The tables this room owns (TABLES): only SQL in src/modules/storefront/ writes
// them; other rooms change them by calling this room's functions. READS lists
// the other rooms' tables its SQL reads; test/house-rules.test.ts holds both to the SQL.
export const TABLES = ['pages', 'contacts', 'abandoned_carts'] as const;
export const READS = ['accounts', 'products'] as const;
