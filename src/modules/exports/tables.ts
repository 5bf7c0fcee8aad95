// The exports room owns no table: an export reads the other rooms' views
// (EXTENSIONS 8). READS lists the tables its SQL reads; test/house-rules.test.ts
// holds the list to the SQL.
export const TABLES = [] as const;
export const READS = ['orders', 'shipments', 'products', 'customer_aggregates', 'stock_movements'] as const;
