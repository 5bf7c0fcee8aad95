-- Issue 12: PostgreSQL writes the Segment view too. Its filters are jsonb,
-- which prints ", " and ": " where JSON.stringify prints none, so they are
-- kept once more as compact json text (merx_compact_json, migration 014),
-- computed when the row is written; the view copies it verbatim.
ALTER TABLE segments ADD COLUMN filters_json json GENERATED ALWAYS AS (merx_compact_json(filters)) STORED;
