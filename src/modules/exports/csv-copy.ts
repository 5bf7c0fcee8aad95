// EXTENSIONS 8, CSV on PostgreSQL: the rows are written by COPY ... TO STDOUT
// WITH (FORMAT csv), so that their bytes go to the response undecoded, as
// JSONL's do, and no document is parsed in JavaScript. Each cell is read from
// the document's text as csv.ts reads it (test/export-csv-parity.test.ts
// compares the two byte for byte): json_to_record parses a document once,
// strings come unescaped and an empty one becomes an empty cell (COPY would
// quote it), numbers keep JavaScript's spelling, and an object or array that
// is not flattened is its JSON text as the document holds it. COPY quotes
// exactly where csv.ts does (a comma, a quote, CR or LF) and doubles quotes;
// only its line end differs: see crlfRows.
import { Transform } from 'node:stream';
import type { Column } from './csv.ts';

/** The alias of the document's fields, as json_to_record reads them. */
const RECORD = 'csv_row';

const identifier = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * A number as csv.ts prints it (String of the parsed number): the document's
 * own spelling, except where float8's text takes an exponent that
 * JavaScript does not (1e+15, 1e-05), which merx_js_number respells.
 */
function numberCell(text: string): string {
  return `CASE WHEN strpos(${text}, 'e') > 0 THEN merx_js_number((${text})::numeric) ELSE ${text} END`;
}

function cellOf(column: Column): string {
  const [top, ...rest] = column.path;
  let text = `${RECORD}.${identifier(top)}`;
  rest.forEach((key, i) => (text += `${i === rest.length - 1 ? '->>' : '->'}${literal(key)}`));
  return column.number ? numberCell(text) : `NULLIF(${text}, '')`;
}

/**
 * The select list of a CSV row and the LATERAL that reads `document` (a
 * record's JSON text) into its top-level fields: a flattened object as json,
 * any other field as text. The row's last cell is a lone CR, which COPY
 * writes as `,"\r"` before its LF: crlfRows makes that the row's CRLF.
 */
export function csvCopySelect(columns: Column[], document: string): { cells: string; lateral: string } {
  const fields = new Map<string, string>();
  for (const { path } of columns) {
    if (path.length > 1 || !fields.has(path[0])) fields.set(path[0], path.length > 1 ? 'json' : 'text');
  }
  const definitions = [...fields].map(([name, type]) => `${identifier(name)} ${type}`).join(', ');
  return {
    cells: `${columns.map(cellOf).join(', ')}, E'\\r'`,
    lateral: `CROSS JOIN LATERAL json_to_record((${document})::json) AS ${RECORD}(${definitions})`,
  };
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
