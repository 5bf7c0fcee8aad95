// The tables this room owns: only SQL in src/modules/shipments/ writes them; other
// rooms change them by calling this room's services (test/house-rules.test.ts).
export const TABLES = ['shipments', 'courier_integrations', 'courier_orphans'] as const;
