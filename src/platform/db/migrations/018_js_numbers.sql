-- Numbers inside the JSON documents the views show, spelled as JavaScript
-- spells them. jsonb keeps a number as numeric and prints every digit
-- (3e-323 comes back as 0.000…0003 with 323 decimals, 1e21 as 22 digits),
-- while a client's JSON.stringify of the parsed answer, and MCP's text
-- content, which must be exactly that, print the double's shortest form.
-- Found by the fuzz test (a product's dim_cm of 3e-323).

-- A number as JavaScript's Number#toString prints it: the double nearest to
-- n in its shortest round-trip digits, plain from 1e-6 to below 1e21, else
-- d.ddde±x with no padded exponent. float8's text is shortest too, except
-- that it leaves out a decimal lying exactly halfway between two doubles
-- (53321762210960780, which reads as ...784), where JavaScript takes it: so
-- one digit fewer is tried as long as it still reads as the same double.
-- Beyond a double's range (only a writer other than the service can store
-- one), as JavaScript would print what it parsed: Infinity is null, a value
-- that underflows is 0. extra_float_digits is pinned: below 1, float8's text
-- is not the shortest round trip, whatever the writer's session says.
CREATE FUNCTION merx_js_number(n numeric) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET extra_float_digits = 1 AS $$
DECLARE
  d float8;
  v numeric;
  plain text;
  digits text;
  e10 int;
  shorter numeric;
BEGIN
  BEGIN
    d := n::float8;
  EXCEPTION WHEN numeric_value_out_of_range THEN
    RETURN CASE WHEN abs(n) > 1 THEN 'null' ELSE '0' END;
  END;
  IF d = 0 THEN
    RETURN '0';
  END IF;
  v := d::text::numeric;
  LOOP
    plain := trim_scale(abs(v))::text;
    digits := trim(BOTH '0' FROM replace(plain, '.', ''));
    e10 := CASE WHEN plain LIKE '0.%' THEN -(length(substring(plain FROM '^0\.(0*)')) + 1) ELSE length(split_part(plain, '.', 1)) - 1 END;
    EXIT WHEN length(digits) <= 1;
    shorter := round(v, length(digits) - 2 - e10);
    -- Rounded up past the largest double: no shorter spelling.
    IF abs(shorter) > 1.7976931348623157e308 THEN
      EXIT;
    END IF;
    EXIT WHEN shorter::float8 <> d;
    v := shorter;
  END LOOP;
  IF e10 BETWEEN -6 AND 20 THEN
    RETURN trim_scale(v)::text;
  END IF;
  RETURN CASE WHEN v < 0 THEN '-' ELSE '' END || left(digits, 1) || CASE WHEN length(digits) > 1 THEN '.' || substr(digits, 2) ELSE '' END
         || 'e' || CASE WHEN e10 > 0 THEN '+' ELSE '-' END || abs(e10);
END
$$;

-- A jsonb document as compact JSON text with JavaScript's numbers, keys in
-- jsonb's order (the order its text has). Strings are jsonb's own escaping,
-- which is JSON.stringify's.
CREATE FUNCTION merx_js_json(doc jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  CASE jsonb_typeof(doc)
    WHEN 'object' THEN
      RETURN '{' || coalesce((SELECT string_agg(to_jsonb(e.key)::text || ':' || merx_js_json(e.value), ',' ORDER BY e.position)
                                FROM jsonb_each(doc) WITH ORDINALITY AS e(key, value, position)), '') || '}';
    WHEN 'array' THEN
      RETURN '[' || coalesce((SELECT string_agg(merx_js_json(a.value), ',' ORDER BY a.position)
                                FROM jsonb_array_elements(doc) WITH ORDINALITY AS a(value, position)), '') || ']';
    WHEN 'number' THEN
      RETURN merx_js_number(doc::text::numeric);
    ELSE
      RETURN doc::text;
  END CASE;
END
$$;

-- Whether jsonb's text of a document holds a number that JavaScript spells
-- otherwise: below 1e-6 (six zeros after the point), a trailing zero after
-- the point, or 16 or more digits (past what a double holds exactly from
-- 2^53, or 1e21 and up).
-- A number follows "[", ": " or ", " and ends at ",", "}", "]"; the test also
-- looks inside strings, where a false alarm only takes the slow path.
CREATE FUNCTION merx_spells_numbers_otherwise(doc_text text) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN doc_text ~ '(^|\[|: |, )-?(0\.000000[0-9]*|[0-9]+\.[0-9]*0|[0-9.]{16,})($|[,}\]])';

-- The fast path (squeezing jsonb's spaces out of its text) stays for every
-- document whose numbers JavaScript spells the same.
CREATE OR REPLACE FUNCTION merx_compact_json(doc jsonb) RETURNS json LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE
    WHEN merx_spells_numbers_otherwise(doc::text) THEN merx_js_json(doc)
    ELSE regexp_replace(doc::text, '("(?:[^"\\]|\\.)*")|[ \n]+', '\1', 'g')
  END::json;

-- Twins written before: recompute the ones whose document takes the new path.
UPDATE products SET dim_cm = dim_cm WHERE merx_spells_numbers_otherwise(dim_cm::text);
UPDATE segments SET filters = filters WHERE merx_spells_numbers_otherwise(filters::text);
UPDATE orders SET line_items = line_items WHERE merx_spells_numbers_otherwise(line_items::text);
UPDATE shipments SET status_events = status_events, recipient_address = recipient_address, parcel_dim_cm = parcel_dim_cm,
       sender_origin = sender_origin, shipment_terms = shipment_terms
 WHERE merx_spells_numbers_otherwise(concat_ws(' ', status_events, recipient_address, parcel_dim_cm, sender_origin, shipment_terms));
