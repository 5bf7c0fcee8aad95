-- Issue 12: every order-list filter finds its rows on an index, and the
-- customer list's total is not a count (bench/RESULTS-explain.md has the
-- plans before and after).

-- shipment_status: the status of the order's latest shipment (newest
-- created_at, id), or null. The orders room keeps it (orders/commands.ts)
-- in the transaction that creates a shipment or changes its status, so the
-- filter reads the page off one index instead of probing shipments order by
-- order.
ALTER TABLE orders ADD COLUMN shipment_status text;
UPDATE orders o SET shipment_status = latest.status
  FROM (SELECT DISTINCT ON (s.order_id) s.order_id, s.status FROM shipments s ORDER BY s.order_id, s.created_at DESC, s.id DESC) latest
 WHERE latest.order_id = o.id;
CREATE INDEX orders_account_shipment_status ON orders (account_id, shipment_status, created_at DESC, id DESC) WHERE shipment_status IS NOT NULL;

-- q of one or two characters: a trigram index has no trigram to look up, so
-- the search texts (orders' and customers') are also indexed by their one-
-- and two-character substrings: every character, and the pairs starting at
-- odd and at even positions (a pair holding the chr(2) the split uses may be
-- lost, so a q holding chr(2) does not use this index). q occurs in the text
-- exactly when it is one of them, so the condition finds the rows and LIKE
-- stays the exact test. Plain expressions, no subquery: about 30 µs a row.
CREATE FUNCTION merx_short_grams(t text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN string_to_array(t, NULL)
      || string_to_array(regexp_replace(t, '(..)', E'\\1\x02', 'g'), E'\x02')
      || string_to_array(regexp_replace(substr(t, 2), '(..)', E'\\1\x02', 'g'), E'\x02');
CREATE INDEX orders_search_short ON orders USING gin (merx_short_grams(
  lower(coalesce(customer_name, '') || chr(1) || coalesce(customer_phone, '') || chr(1) ||
        coalesce(customer_email, '') || chr(1) || coalesce(tracking_number, ''))));
CREATE INDEX customer_aggregates_search_short ON customer_aggregates USING gin (merx_short_grams(
  lower(coalesce(name, '') || chr(1) || coalesce(email, '') || chr(1) || coalesce(phone, ''))));

-- The customer list's total (SPEC: a page of customers with `total`) without
-- counting them: customers per account, kept by aggregates.ts in the
-- transaction that adds or removes an aggregate row. Spread over 16 stripes
-- (by the key's hash) so that checkouts of new customers do not all queue on
-- one row; the total is the sum of at most 16 rows.
CREATE TABLE customer_counts (
  account_id uuid NOT NULL REFERENCES accounts(id),
  stripe smallint NOT NULL,
  customers bigint NOT NULL,
  PRIMARY KEY (account_id, stripe)
);
INSERT INTO customer_counts (account_id, stripe, customers)
  SELECT account_id, hashtextextended(key, 0) & 15, count(*) FROM customer_aggregates GROUP BY 1, 2;
