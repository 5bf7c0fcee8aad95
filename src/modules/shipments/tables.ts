// The tables this room owns (TABLES): only SQL in src/modules/shipments/ writes
// them; other rooms change them by calling this room's functions. READS lists
// the other rooms' tables its SQL reads; test/house-rules.test.ts holds both to the SQL.
export const TABLES = ['shipments', 'courier_integrations', 'courier_orphans', 'shipment_batches', 'shipment_batch_items'] as const;
// orders: a batch item's courier is the order's from checkout unless the item names one (batch-store.ts).
export const READS = ['accounts', 'orders', 'products'] as const;
