// The tables this room owns: only SQL in src/modules/inventory/ writes them; other
// rooms change them by calling this room's services (test/house-rules.test.ts).
export const TABLES = ['stock_movements', 'low_stock_alerts'] as const;
