-- Webhook fan-out at volume (issue 16): /metrics counts dead deliveries on
-- every scrape; a partial index keeps that a small index scan however large
-- the delivered history grows.
CREATE INDEX webhook_deliveries_dead ON webhook_deliveries (webhook_id) WHERE status = 'dead';
