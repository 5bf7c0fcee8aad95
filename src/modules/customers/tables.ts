// The tables this room owns (TABLES): only SQL in src/modules/customers/ writes
// them; other rooms change them by calling this room's functions. READS lists
// the other rooms' tables its SQL reads; test/house-rules.test.ts holds both to the SQL.
export const TABLES = ['customer_aggregates', 'customer_counts', 'segments', 'segment_members', 'customer_notes'] as const;
export const READS = ['abandoned_carts', 'orders', 'pages'] as const;
