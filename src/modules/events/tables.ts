// The tables this room owns (TABLES): only SQL in src/modules/events/ writes
// them, except the outbox rows themselves: platform/db/outbox.ts emit() writes
// those in the caller's transaction, and this room reads them (the feed) and
// ages them out. READS lists the other rooms' tables its SQL reads;
// test/house-rules.test.ts holds both to the SQL.
export const TABLES = ['events', 'event_feed_horizons'] as const;
export const READS = [] as const;
