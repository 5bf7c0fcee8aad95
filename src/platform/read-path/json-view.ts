// A resource's public view written as one SQL expression (issue 12): PostgreSQL
// builds the JSON exactly as the contract shapes it, so Node never decodes
// the row nor serialises the answer. PostgREST is the model.
//
// The expressions reproduce what the JavaScript views printed, byte for byte
// after a canonical sort (test/json-views.test.ts proves it per view, on
// PostgreSQL and PGlite): timestamps as Date#toISOString (milliseconds, Z),
// numeric money as the shortest number (12.5, not 12.50).

/**
 * The contract's date-time: 2026-11-22T03:01:40.120Z, whatever the session
 * time zone. The colons are quoted literals so that no `:name` appears in
 * the SQL (pgbench would take it for a variable when it runs this SQL).
 */
export function isoTime(expr: string): string {
  return `to_char((${expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"')`;
}

/** A numeric column as JSON prints a JavaScript number: float8's shortest form (12.5, 100, 0.01). */
export function jsonNumber(expr: string): string {
  return `(${expr})::float8`;
}

/**
 * An object of the view's fields in their declared order, written compactly
 * ({"a":1}, as JSON.stringify prints): row_to_json over a one-row select.
 * (json_build_object pads with spaces and measured slower.) Keys are SQL
 * identifiers written here, never taken from input. A jsonb document goes in
 * through merx_compact_json (or a compact *_json twin), never as jsonb, which
 * PostgreSQL prints with spaces.
 */
export function jsonObject(fields: Record<string, string>): string {
  const columns = Object.entries(fields).map(([key, expr]) => `${expr} AS "${key}"`);
  // An alias no view uses for its own tables.
  return `(SELECT row_to_json(json_view_row) FROM (SELECT ${columns.join(', ')}) json_view_row)`;
}

/** A JSON array of `json` (one object per row of `from`), in `orderBy` order; [] when none. */
export function jsonArray(json: string, from: string, orderBy: string): string {
  return `array_to_json(ARRAY(SELECT ${json} FROM ${from} ORDER BY ${orderBy}))`;
}

/** A view: where its rows come from and the expression that writes one row. */
export interface JsonView {
  /** The table and the alias every expression uses, e.g. `orders o`. */
  from: string;
  alias: string;
  /** LATERAL joins the expression reads (a latest shipment, counts). */
  joins?: string;
  /** The row's JSON: an expression that builds it, or the column of a stored view (stored-view.ts). */
  json: string;
  /** A stored view's ETag column: the tag of exactly the stored text, written with it. */
  etag?: string;
}
