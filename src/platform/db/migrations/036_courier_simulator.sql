-- The courier simulator's parcels, modes and call log, shared by every
-- instance (src/couriers/simulator/database-store.ts): a waybill made through
-- one instance is known when another asks the courier for its label.
CREATE TABLE courier_sim_parcels (
  tracking_number text PRIMARY KEY,
  slug text NOT NULL,
  reference text NOT NULL,
  recipient jsonb NOT NULL,
  cod_amount numeric NOT NULL,
  weight_kg numeric NOT NULL,
  notify jsonb,
  events jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A row only while a courier is not ok; remaining: calls left of a counted mode.
CREATE TABLE courier_sim_modes (
  slug text PRIMARY KEY,
  mode text NOT NULL,
  remaining integer
);

CREATE TABLE courier_sim_calls (
  id bigserial PRIMARY KEY,
  slug text NOT NULL,
  at timestamptz NOT NULL,
  operation text NOT NULL,
  status integer,
  duration_ms double precision
);
CREATE INDEX courier_sim_calls_slug_id ON courier_sim_calls (slug, id);
