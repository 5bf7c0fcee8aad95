-- The events feed (EXTENSIONS 1). Every event remembers the transaction that
-- wrote it: the feed hands out only events of transactions that had finished
-- before its snapshot, in (xid, seq) order, so a cursor never passes an event
-- that a still-running transaction could insert behind it (docs/ARCHITECTURE.md).
ALTER TABLE events ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
-- The order an event concerns (order.* events, and shipment.* events of its waybills): the feed's order_id filter.
ALTER TABLE events ADD COLUMN order_id uuid GENERATED ALWAYS AS (
  (coalesce(data -> 'order' ->> 'id', data ->> 'order_id', data -> 'shipment' ->> 'order_id'))::uuid
) STORED;
CREATE INDEX events_feed ON events (account_id, xid, seq);
CREATE INDEX events_feed_order ON events (account_id, order_id, xid, seq) WHERE order_id IS NOT NULL;
-- The retention job deletes by age.
CREATE INDEX events_created ON events (created_at);

-- Per account, the newest feed position the retention job has deleted: a
-- cursor before it has missed events and is refused as cursor_expired.
CREATE TABLE event_feed_horizons (
  account_id uuid PRIMARY KEY REFERENCES accounts(id),
  xid xid8 NOT NULL,
  seq bigint NOT NULL,
  pruned_at timestamptz(3) NOT NULL DEFAULT now()
);

-- Pruning an event takes its webhook deliveries with it (all their attempts
-- fall within a day of the event; retention is 30 days).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES events(id) ON DELETE CASCADE;
