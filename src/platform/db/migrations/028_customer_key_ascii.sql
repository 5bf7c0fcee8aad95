-- customer_key_of() (migration 019) folds an e-mail's case with translate()
-- over a table of ~1,400 capitals, and translate() looks up every character
-- of its input in the whole table: ~90 us of PostgreSQL's CPU per call,
-- measured, and orders.customer_key is a generated column, recomputed on
-- every UPDATE of an order (a status change, a note) whether or not the
-- e-mail changed. An ASCII e-mail (nearly all of them) has only A-Z to fold,
-- the table's only ASCII capitals, so it takes a 26-letter table; any other
-- e-mail takes the full function, unchanged, under a name of its own. The
-- keys are the same (test/customer-keys.test.ts compares both paths), so no
-- stored key is rewritten.
DO $$
BEGIN
  EXECUTE format(
    'CREATE FUNCTION merx_customer_key_unicode(email text, phone text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS %L',
    (SELECT prosrc FROM pg_proc WHERE oid = 'customer_key_of(text, text)'::regprocedure));
END
$$;

CREATE OR REPLACE FUNCTION customer_key_of(email text, phone text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT CASE
    WHEN email IS NULL OR octet_length(email) = char_length(email) THEN coalesce(
      nullif(translate(btrim(email, E' \t\n\r\f\v'), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), ''),
      nullif(btrim(phone, E' \t\n\r\f\v'), ''))
    ELSE merx_customer_key_unicode(email, phone)
  END
$fn$;
