-- Issue 29: views kept as documents. Which views are stored, and the upkeep
-- that keeps them, follow from their declarations (src/platform/stored-view.ts);
-- src/platform/view-upkeep.ts installs that upkeep after the migrations and
-- writes the documents of existing rows in batches. This table remembers,
-- per view, the definition installed and how far its backfill has come.
CREATE TABLE stored_views (
  name text PRIMARY KEY,
  definition_sha256 text NOT NULL,
  -- The backfill walks the table by id: the last id written, and whether it is done.
  backfilled_through uuid,
  backfilled boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The strong ETag of a stored document: the first 32 base64url characters of
-- the SHA-256 of its UTF-8 text, quoted (src/platform/etag.ts etagOfText is
-- the same function in JavaScript).
CREATE FUNCTION merx_view_etag(doc text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN '"' || left(translate(encode(sha256(convert_to(doc, 'UTF8')), 'base64'), '+/', '-_'), 32) || '"';

-- The compact twins of migration 014 were read by the views built at read
-- time; the stored documents read the jsonb through merx_compact_json when
-- they are written, so the twins would only cost every write.
ALTER TABLE orders DROP COLUMN line_items_json;
ALTER TABLE shipments
  DROP COLUMN status_events_json,
  DROP COLUMN recipient_address_json,
  DROP COLUMN parcel_dim_cm_json,
  DROP COLUMN sender_origin_json,
  DROP COLUMN shipment_terms_json;
ALTER TABLE products DROP COLUMN dim_cm_json;
