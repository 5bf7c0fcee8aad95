// The tables this room owns: only SQL in src/modules/customers/ writes them; other
// rooms change them by calling this room's services (test/house-rules.test.ts).
export const TABLES = ['customer_aggregates', 'customer_counts', 'segments', 'segment_members', 'customer_notes'] as const;
