-- Issue 12: API keys are cached in each instance (src/platform/key-cache.ts).
-- Whatever changes what a key may do (revoked, scopes, deleted; the
-- account's plan or active flag) announces it on merx_key_changes when it
-- commits, from any writer (operator API, CLI, a SQL console), so every
-- instance forgets the key at once. last_used_at writes stay silent.
CREATE FUNCTION merx_announce_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'accounts' THEN
    PERFORM pg_notify('merx_key_changes', 'account:' || COALESCE(NEW.id, OLD.id)::text);
  ELSE
    PERFORM pg_notify('merx_key_changes', 'key:' || COALESCE(NEW.id, OLD.id)::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_announce_change AFTER UPDATE ON api_keys FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.scopes IS DISTINCT FROM NEW.scopes
        OR OLD.key_hash IS DISTINCT FROM NEW.key_hash OR OLD.account_id IS DISTINCT FROM NEW.account_id)
  EXECUTE FUNCTION merx_announce_key_change();
CREATE TRIGGER api_keys_announce_delete AFTER DELETE ON api_keys FOR EACH ROW
  EXECUTE FUNCTION merx_announce_key_change();
CREATE TRIGGER accounts_announce_change AFTER UPDATE ON accounts FOR EACH ROW
  WHEN (OLD.plan IS DISTINCT FROM NEW.plan OR OLD.active IS DISTINCT FROM NEW.active)
  EXECUTE FUNCTION merx_announce_key_change();
CREATE TRIGGER accounts_announce_delete AFTER DELETE ON accounts FOR EACH ROW
  EXECUTE FUNCTION merx_announce_key_change();

-- Issue 12: PostgreSQL writes the views. jsonb prints ", " and ": " where
-- JSON.stringify prints none (and MCP's text content must be exactly the
-- stringified structuredContent), so each JSON document a view shows is
-- kept once more as compact json text, computed once when the row is
-- written; the views copy it verbatim. Outside strings jsonb's spelling
-- holds no other whitespace.
CREATE FUNCTION merx_compact_json(doc jsonb) RETURNS json LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN regexp_replace(doc::text, '("(?:[^"\\]|\\.)*")|[ \n]+', '\1', 'g')::json;

ALTER TABLE orders ADD COLUMN line_items_json json GENERATED ALWAYS AS (merx_compact_json(line_items)) STORED;
ALTER TABLE shipments
  ADD COLUMN status_events_json json GENERATED ALWAYS AS (merx_compact_json(status_events)) STORED,
  ADD COLUMN recipient_address_json json GENERATED ALWAYS AS (merx_compact_json(recipient_address)) STORED,
  ADD COLUMN parcel_dim_cm_json json GENERATED ALWAYS AS (merx_compact_json(parcel_dim_cm)) STORED,
  ADD COLUMN sender_origin_json json GENERATED ALWAYS AS (merx_compact_json(sender_origin)) STORED,
  ADD COLUMN shipment_terms_json json GENERATED ALWAYS AS (merx_compact_json(shipment_terms)) STORED;
ALTER TABLE products ADD COLUMN dim_cm_json json GENERATED ALWAYS AS (merx_compact_json(dim_cm)) STORED;
