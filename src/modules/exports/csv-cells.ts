// EXTENSIONS 8, CSV on PostgreSQL, of a view declared field by field
// (defineView): each cell is its field's own SQL over the row's columns and
// the view's joins, printed as csv.ts prints the field's value in the JSON,
// so that no document is parsed per row (reading the cells from each
// document with json_to_record ran at a third of JSONL's speed,
// bench/RESULTS-exports.md). A stored document is always the JSON its row's
// columns build (stored-view.ts), and the export reads the row in the
// snapshot it would read the document in, so the cells are the document's.
// test/export-csv-parity.test.ts compares them with csv.ts byte for byte.
import type { Sql } from '../../platform/db/db.ts';
import type { View, ViewField, ViewFields } from '../../platform/read-path/index.ts';
import type { Column } from './csv.ts';
import { SLICES, slicedFields } from './csv-slices.ts';

/** A column's field, and the conditions under which an object on its path is null (an order without a shipment). */
interface Located {
  field: ViewField;
  nullWhen: string[];
}

function locate(fields: ViewFields, path: string[]): Located {
  const nullWhen: string[] = [];
  let within: ViewFields | null = fields;
  let field: ViewField | null = null;
  for (const key of path) {
    field = within && Object.hasOwn(within, key) ? within[key] : null;
    if (!field) throw new Error(`CSV column ${path.join('.')} is not a field of the view`);
    while (field.built.kind === 'nullable') {
      nullWhen.push(field.built.nullWhen);
      field = field.built.inner;
    }
    within = field.built.kind === 'object' ? field.built.fields : null;
  }
  return { field: field!, nullWhen };
}

/**
 * A float8's text as csv.ts prints the number (String of the parsed JSON):
 * float8's own spelling, except where it takes an exponent that JavaScript
 * does not (1e+15, 1e-05), which merx_js_number respells.
 */
function numberCell(text: string): string {
  return `CASE WHEN strpos(${text}, 'e') > 0 THEN merx_js_number((${text})::numeric) ELSE ${text} END`;
}

/** An integer or decimal's text as JavaScript prints the number it parses to: as it is when it has 15 digits at most and no point nor exponent. */
function jsNumberText(text: string): string {
  return `CASE WHEN ${text} ~ '^(-?[1-9][0-9]{0,14}|0)$' THEN ${text} ELSE merx_js_number((${text})::numeric) END`;
}

/** A JSON value's cell (`typeOf` json_typeof or jsonb_typeof): a string unescaped, null empty, a number in JavaScript's spelling, else `text`. */
function jsonCell(json: string, typeOf: string, text: string): string {
  return `CASE ${typeOf}(${json}) WHEN 'string' THEN NULLIF(${json} #>> '{}', '') WHEN 'null' THEN NULL WHEN 'number' THEN ${jsNumberText(`(${json})::text`)} ELSE ${text} END`;
}

const RAW_TEXT = new Set(['text', 'character varying', 'name']);
const OWN_TEXT = new Set(['uuid', 'integer', 'smallint', 'boolean']);

/**
 * A value field's cell, by its SQL type: row_to_json writes a column as
 * to_json does, so a type whose JSON is plain (text, uuid, integers,
 * booleans) is its text, and any other is read from its to_json.
 */
function valueCell(sql: string, type: string): string {
  if (RAW_TEXT.has(type)) return `NULLIF(${sql}, '')`;
  if (OWN_TEXT.has(type)) return `(${sql})::text`;
  if (type === 'bigint' || type === 'numeric') return jsNumberText(`(${sql})::text`);
  if (type === 'double precision' || type === 'real') return numberCell(`(${sql})::text`);
  if (type === 'jsonb') return jsonCell(sql, 'jsonb_typeof', `(${sql})::text`);
  if (type === 'json') return jsonCell(sql, 'json_typeof', `(${sql})::text`);
  if (type.endsWith('[]')) return `to_json(${sql})::text`;
  return jsonCell(`to_json(${sql})`, 'json_typeof', `to_json(${sql})::text`);
}

function cellOf(field: ViewField, type: string | undefined): string {
  const parts = field.built;
  switch (parts.kind) {
    case 'value':
      return valueCell(field.sql, type!);
    case 'number':
      return numberCell(`(${field.sql})::text`);
    case 'time':
      return field.sql;
    case 'document':
      // Strings and nulls from the jsonb itself; anything else as the document holds it, compacted.
      return `CASE jsonb_typeof(${parts.jsonb}) WHEN 'string' THEN NULLIF(${parts.jsonb} #>> '{}', '') WHEN 'null' THEN NULL ELSE (${field.sql})::text END`;
    default:
      return `(${field.sql})::text`;
  }
}

/** The SQL types of the views' value fields, by view and field SQL: the database's schema, which does not change under a running service. */
const typesOfViews = new Map<string, Map<string, string>>();

/** The SQL type of each of `sqls` (a value field's expression), asked once per view and process. */
async function typesOf(tx: Sql, view: View, sqls: string[]): Promise<Map<string, string>> {
  const known = typesOfViews.get(view.name) ?? new Map<string, string>();
  const unknown = [...new Set(sqls.filter((sql) => !known.has(sql)))];
  if (unknown.length) {
    // One row of nulls whatever the table holds: the expressions' types are the parser's.
    const { rows } = await tx.query<Record<string, string>>(
      `SELECT ${unknown.map((sql, i) => `pg_typeof(${sql})::text AS t${i}`).join(', ')}
         FROM (VALUES (1)) merx_one LEFT JOIN ${view.built.from} ON false ${view.built.joins ?? ''}`,
    );
    unknown.forEach((sql, i) => known.set(sql, rows[0][`t${i}`]));
    typesOfViews.set(view.name, known);
  }
  return known;
}

/** The expressions of the value fields under `fields`, whose SQL types decide their cells. */
function valueSqls(fields: ViewFields): string[] {
  return Object.values(fields).flatMap((field) => {
    const parts = field.built;
    if (parts.kind === 'value') return [field.sql];
    if (parts.kind === 'object') return valueSqls(parts.fields);
    if (parts.kind === 'nullable') return valueSqls({ inner: parts.inner });
    return [];
  });
}

/** Whether SQL reads only columns of `alias` (string literals aside): then the view's joins are not needed for it. */
function readsOnly(sql: string, alias: string): boolean {
  const qualifiers = sql.replace(/'(?:[^']|'')*'/g, "''").matchAll(/\b([A-Za-z_][A-Za-z0-9_]*)\s*\.\s*["A-Za-z_]/g);
  return [...qualifiers].every(([, name]) => name === alias);
}

/** A cell of a field's JSON text cut out of the document (csv-slices.ts): a string unescaped, null empty, anything else as it is. */
function slicedCell(text: string): string {
  return `CASE WHEN ${text} = 'null' THEN NULL WHEN left(${text}, 1) = '"' THEN NULLIF((${text})::json #>> '{}', '') ELSE ${text} END`;
}

/** A cell of a located field read from the row: its SQL, null where an object on its path is. */
function rowCell({ field, nullWhen }: Located, types: Map<string, string>): string {
  const cell = cellOf(field, types.get(field.sql));
  return nullWhen.length ? `CASE WHEN ${nullWhen.join(' OR ')} THEN NULL ELSE ${cell} END` : cell;
}

/**
 * The select list of a CSV row of `view` and what it reads from: the view's
 * table, its joins where a cell read from the row needs them, and the
 * LATERALs that cut fields out of the stored document (csv-slices.ts), a
 * flattened object's fields each read once. The row's last cell is a
 * lone CR (crlfRows).
 */
export async function csvCellsSelect(tx: Sql, view: View, columns: Column[]): Promise<{ cells: string; from: string }> {
  const sqls = valueSqls(view.fields);
  const types = sqls.length ? await typesOf(tx, view, sqls) : new Map<string, string>();
  const sliced = slicedFields(view, types);
  const slices = new Set(sliced.keys);
  const laterals = [sliced.lateral];
  const records = new Map<string, string>();
  const fromRow: string[] = [];
  const cells = columns.map(({ path }) => {
    const [top, first, ...rest] = path;
    if (!slices.has(top)) {
      const located = locate(view.fields, path);
      fromRow.push(located.field.sql, ...located.nullWhen);
      return rowCell(located, types);
    }
    const text = `${SLICES}."${top}"`;
    if (first === undefined) return slicedCell(text);
    let alias = records.get(top);
    if (!alias) {
      alias = `csv_object_${records.size}`;
      records.set(top, alias);
      const object = locate(view.fields, [top]).field.built;
      const keys = object.kind === 'object' ? Object.keys(object.fields) : [];
      // A plain subquery, not json_to_record: a set-returning function in FROM costs a tuplestore a row.
      const values = keys.map((k) => `json -> '${k}' AS "${k}"`).join(', ');
      laterals.push(`CROSS JOIN LATERAL (SELECT ${values} FROM (SELECT NULLIF(${text}, 'null')::json AS json OFFSET 0) csv_json OFFSET 0) ${alias}`);
    }
    const json = rest.length ? `(${alias}."${first}" #> '{${rest.join(',')}}')` : `${alias}."${first}"`;
    return jsonCell(json, 'json_typeof', `(${json})::text`);
  });
  const joins = fromRow.every((sql) => readsOnly(sql, view.built.alias)) ? '' : (view.built.joins ?? '');
  return { cells: `${cells.join(', ')}, E'\\r'`, from: `${view.built.from} ${joins} ${laterals.join(' ')}` };
}
