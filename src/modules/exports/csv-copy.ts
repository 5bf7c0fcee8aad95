// EXTENSIONS 8, CSV on PostgreSQL: the rows are written by COPY ... TO STDOUT
// WITH (FORMAT csv), so that their bytes go to the response undecoded, as
// JSONL's do, and no document is parsed in JavaScript. Each cell is read from
// the document's text as csv.ts reads it (test/export-csv-parity.test.ts
// compares the two byte for byte): json_to_record parses a document once,
// strings come unescaped and an empty one becomes an empty cell (COPY would
// quote it), numbers keep JavaScript's spelling (a field that may hold a
// string or a number, a jsonb value, is read as JSON to tell which), and an
// object or array that is not flattened is its JSON text as the document
// holds it. COPY quotes exactly where csv.ts does (a comma, a quote, CR or
// LF) and doubles quotes; only its line end differs: see crlfRows.
import { Transform } from 'node:stream';
import type { Column } from './csv.ts';

/** The alias of the document's fields, as json_to_record reads them; a flattened object's fields are read by its own, numbered. */
const RECORD = 'csv_row';

const identifier = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * A number as csv.ts prints it (String of the parsed number): the document's
 * own spelling, except where float8's text takes an exponent that
 * JavaScript does not (1e+15, 1e-05), which merx_js_number respells.
 */
function numberCell(text: string): string {
  return `CASE WHEN strpos(${text}, 'e') > 0 THEN merx_js_number((${text})::numeric) ELSE ${text} END`;
}

/**
 * A number's JSON text as csv.ts prints it: as it is when it is an integer of
 * 15 digits at most, else as merx_js_number spells the number JavaScript
 * parses (jsonb prints 1e21 with all its digits, 1.50 with its zero).
 */
function jsNumberCell(text: string): string {
  return `CASE WHEN ${text} ~ '^(-?[1-9][0-9]{0,14}|0)$' THEN ${text} ELSE merx_js_number((${text})::numeric) END`;
}

/** A field read as json (a mixed column): a string unescaped, a number in JavaScript's spelling, null empty. */
function mixedCell(json: string): string {
  return `CASE json_typeof(${json}) WHEN 'string' THEN NULLIF(${json} #>> '{}', '') WHEN 'number' THEN ${jsNumberCell(`(${json})::text`)} WHEN 'null' THEN NULL ELSE (${json})::text END`;
}

/** An object's fields as json_to_record reads them: a flattened object (nested Fields) or a mixed field as json, any other as text. */
type Fields = Map<string, Fields | 'text' | 'json'>;

/**
 * The select list of a CSV row and the LATERALs that read `document` (a
 * record's JSON text) into its fields: json_to_record parses the document
 * once, and each flattened object once more (its cells taken with `->>`
 * parsed the object again per cell). A null object reads as a row of nulls.
 * The row's last cell is a lone CR, which COPY writes as `,"\r"` before its
 * LF: crlfRows makes that the row's CRLF.
 */
export function csvCopySelect(columns: Column[], document: string): { cells: string; lateral: string } {
  const root: Fields = new Map();
  for (const { path, mixed } of columns) {
    let record = root;
    for (const key of path.slice(0, -1)) {
      if (!(record.get(key) instanceof Map)) record.set(key, new Map());
      record = record.get(key) as Fields;
    }
    if (!record.has(path.at(-1)!)) record.set(path.at(-1)!, mixed ? 'json' : 'text');
  }
  const laterals: string[] = [];
  const aliases = new Map<Fields, string>();
  const read = (record: Fields, json: string) => {
    const alias = laterals.length ? `${RECORD}_${laterals.length}` : RECORD;
    aliases.set(record, alias);
    const definitions = [...record].map(([name, nested]) => `${identifier(name)} ${nested instanceof Map ? 'json' : nested}`).join(', ');
    laterals.push(`CROSS JOIN LATERAL json_to_record(${json}) AS ${alias}(${definitions})`);
    for (const [name, nested] of record) if (nested instanceof Map) read(nested, `${alias}.${identifier(name)}`);
  };
  read(root, `(${document})::json`);
  const cellOf = (column: Column) => {
    let record = root;
    for (const key of column.path.slice(0, -1)) record = record.get(key) as Fields;
    const text = `${aliases.get(record)}.${identifier(column.path.at(-1)!)}`;
    if (column.mixed) return mixedCell(text);
    return column.number ? numberCell(text) : `NULLIF(${text}, '')`;
  };
  return { cells: `${columns.map(cellOf).join(', ')}, E'\\r'`, lateral: laterals.join(' ') };
}

const ROW_END = Buffer.from(',"\r"\n');
const CRLF = Buffer.from('\r\n');

/**
 * COPY's rows with RFC 4180's CRLF, after `header`. A row ends with the
 * quoted lone CR cell and COPY's LF (`,"\r"\n`), bytes that appear nowhere
 * else: inside a quoted field a quote is doubled or closes the field, so
 * `,"` followed by CR opens a field, and `"` then LF ends the row's last
 * field, the CR cell. A few bytes that may begin a row end wait for the
 * next chunk.
 */
export function crlfRows(header: string): Transform {
  let pending: Buffer = Buffer.from(header);
  return new Transform({
    highWaterMark: 1 << 20,
    transform(chunk: Buffer, _encoding, next) {
      const input = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      const out = Buffer.allocUnsafe(input.length);
      let length = 0;
      let from = 0;
      for (let at = input.indexOf(ROW_END); at !== -1; at = input.indexOf(ROW_END, from)) {
        length += input.copy(out, length, from, at);
        length += CRLF.copy(out, length);
        from = at + ROW_END.length;
      }
      const kept = Math.max(from, input.length - (ROW_END.length - 1));
      length += input.copy(out, length, from, kept);
      pending = Buffer.from(input.subarray(kept));
      next(null, out.subarray(0, length));
    },
    flush(next) {
      next(null, pending);
    },
  });
}
