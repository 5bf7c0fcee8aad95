// The tables this room owns: only SQL in src/modules/events/ writes them; other
// rooms change them by calling this room's services (test/house-rules.test.ts).
// The outbox rows are written by platform/events.ts emit() in the
// caller's transaction; this room reads them (the feed) and ages them out.
export const TABLES = ['events', 'event_feed_horizons'] as const;
