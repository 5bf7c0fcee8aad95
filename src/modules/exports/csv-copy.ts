// EXTENSIONS 8, CSV on PostgreSQL: the rows are written by COPY ... TO STDOUT
// WITH (FORMAT csv), so that their bytes go to the response undecoded, as
// JSONL's do; the cells are the view's fields read from the row
// (csv-cells.ts). COPY quotes exactly where csv.ts does (a comma, a quote, CR
// or LF) and doubles quotes; only its line end differs: see crlfRows.
import { Transform } from 'node:stream';

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
