// EXTENSIONS 8: an export streamed from one snapshot. One REPEATABLE READ
// transaction takes the snapshot (and the events-feed cursor at it) with its
// first statement, then the rows are read only as fast as the response takes
// them: nothing is gathered in memory. On PostgreSQL a COPY ... TO STDOUT
// writes the rows (JSONL: one document and a newline; CSV: the cells, read
// from the document by the database) and its bytes go to the response as
// they come, never decoded; PGlite reads a server-side cursor (DECLARE ...
// FETCH) a chunk at a time and lays CSV out in JavaScript (csv.ts).
// Both work inside the transaction, so through a transaction pooler too. The
// transaction ends with the stream; a stream that fails or is cut off errors
// the body, and the transport then ends the response without its final chunk.
import { Readable, Transform, finished, pipeline } from 'node:stream';
import type { Db, Sql } from '../../platform/db/db.ts';
import { AppError } from '../../platform/contract/errors.ts';
import type { ScopedSeal } from '../../platform/contract/cursor-seal.ts';
import { sqlWithLiterals } from '../../platform/db/sql-literals.ts';
import { snapshotFeedCursor } from '../events/feed.ts';
import type { ExportSource } from './sources.ts';
import { csvColumns, csvHeader, csvRow } from './csv.ts';
import { crlfRows, csvCopySelect } from './csv-copy.ts';

export type ExportFormat = 'jsonl' | 'csv';

export const MEDIA_TYPES: Record<ExportFormat, string> = { jsonl: 'application/x-ndjson', csv: 'text/csv; charset=utf-8' };

/** Rows a FETCH reads: an order's document is 1-3 kB, so a chunk of a few megabytes at most. */
const FETCH_ROWS = 1000;
/**
 * A FETCH's lines go out in pieces of about this many characters: a string
 * past V8's regular object size (128 kB) lives in its large-object space,
 * which only a full collection frees, and a megabyte a chunk grew the heap by
 * hundreds of megabytes over an export (bench/RESULTS-exports.md).
 */
const PIECE_CHARS = 64 * 1024;

export interface ExportRequest {
  source: ExportSource;
  accountId: string;
  seal: ScopedSeal;
  format: ExportFormat;
  filters: Record<string, unknown>;
  startingAfter?: string;
  /** Run first in the transaction: the key's slot across instances (slots.ts). */
  claim?: (tx: Sql) => Promise<void>;
}

/** What the transport sends: the header's cursor, then the body. */
export interface OpenExport {
  eventsCursor: string;
  body: Readable;
  format: ExportFormat;
}

/**
 * Opens the export: resolves once the snapshot is taken and the request
 * checked (a refusal rejects, before any byte is sent); the transaction then
 * lives as long as the body.
 */
export function openExport(db: Db, request: ExportRequest): Promise<OpenExport> {
  return new Promise((resolve, reject) => {
    let opened = false;
    db.tx(
      async (tx) => {
        // The snapshot is the first statement's: the cursor and every row below are read in it.
        const eventsCursor = await snapshotFeedCursor(tx, request.seal);
        await request.claim?.(tx);
        const rows = await exportRows(tx, request);
        const body = tx.copyOut ? copiedBody(tx.copyOut, request, rows) : await fetchedBody(tx, request, rows);
        opened = true;
        resolve({ eventsCursor, body, format: request.format });
        // Rejects on an error or a premature close: the transaction rolls back (it only read).
        await new Promise<void>((done, fail) => finished(body, (err) => (err ? fail(err) : done())));
      },
      { repeatableRead: true, readOnly: true },
    ).catch((err) => {
      if (!opened) reject(err);
    });
  });
}

/** The export's rows: where they come from, in the list's order, without the select list. */
interface ExportRows {
  from: string;
  where: string;
  order: string;
  values: unknown[];
}

async function exportRows(tx: Sql, { source, accountId, filters, startingAfter }: ExportRequest): Promise<ExportRows> {
  const filter = await source.filter(tx, accountId, filters);
  const where = [...filter.where];
  if (startingAfter !== undefined) {
    const { rows } = await tx.query(source.after.lookup, [accountId, startingAfter]);
    if (!rows[0]) {
      throw new AppError('validation_failed', `starting_after is not ${source.key.described} of a record of this account (${source.resource})`);
    }
    where.push(source.after.condition(filter.bind, rows[0]));
  }
  const view = source.view;
  return { from: `${view.from} ${view.joins ?? ''}`, where: where.join(' AND '), order: source.order, values: filter.values };
}

/** Each record's document as text (v), in the list's order. */
function documentsQuery(source: ExportSource, rows: ExportRows): string {
  return `SELECT ${source.view.json}::text AS v FROM ${rows.from} WHERE ${rows.where} ORDER BY ${rows.order}`;
}

/**
 * The body as COPY writes it. JSONL: in CSV format with a delimiter and a
 * quote that JSON text never holds raw (control characters are escaped in
 * JSON strings), each document comes out as it is, then a newline. CSV: the
 * cells, each read from the document, in CSV format (csv-copy.ts).
 */
function copiedBody(copyOut: NonNullable<Sql['copyOut']>, request: ExportRequest, rows: ExportRows): Readable {
  // Named like the cursor of the other path, so that an operator finds either in pg_stat_activity.
  const name = '/* merx_export */';
  if (request.format === 'csv') {
    const columns = csvColumns(request.source.record);
    const { cells, lateral } = csvCopySelect(columns, request.source.view.json);
    const select = sqlWithLiterals(`SELECT ${cells} FROM ${rows.from} ${lateral} WHERE ${rows.where} ORDER BY ${rows.order}`, rows.values);
    return pipeline(copyOut(`COPY (${select}) TO STDOUT WITH (FORMAT csv) ${name}`), crlfRows(csvHeader(columns)), () => {});
  }
  const select = sqlWithLiterals(documentsQuery(request.source, rows), rows.values);
  const copy = copyOut(`COPY (${select}) TO STDOUT WITH (FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01') ${name}`);
  return pipeline(copy, oneDocumentPerLine(), () => {});
}

const QUOTE = 0x01;

/**
 * COPY quotes (with QUOTE) a document holding a raw line break, which can
 * only be whitespace between its tokens (JSON escapes them inside strings):
 * such a document loses its quotes and its line breaks become spaces, so that
 * every line is one document. A chunk without a quote, every chunk in
 * practice, passes as it is.
 */
export function oneDocumentPerLine(): Transform {
  let quoted = false;
  return new Transform({
    highWaterMark: 1 << 20,
    transform(chunk: Buffer, _encoding, next) {
      if (!quoted && chunk.indexOf(QUOTE) < 0) return next(null, chunk);
      const out = Buffer.allocUnsafe(chunk.length);
      let length = 0;
      for (const byte of chunk) {
        if (byte === QUOTE) quoted = !quoted;
        else out[length++] = quoted && (byte === 0x0a || byte === 0x0d) ? 0x20 : byte;
      }
      next(null, out.subarray(0, length));
    },
  });
}

/** The body: chunks of lines, each FETCHed when the reader asks for more (backpressure). */
async function fetchedBody(tx: Sql, request: ExportRequest, rows: ExportRows): Promise<Readable> {
  await tx.query(`DECLARE merx_export NO SCROLL CURSOR FOR ${documentsQuery(request.source, rows)}`, rows.values);
  const columns = request.format === 'csv' ? csvColumns(request.source.record) : [];
  const line = request.format === 'csv' ? (json: string) => csvRow(columns, json) : (json: string) => `${json}\n`;
  let header = request.format === 'csv' ? csvHeader(columns) : '';
  return new Readable({
    highWaterMark: 1 << 20,
    read() {
      tx.query<{ v: string }>(`FETCH ${FETCH_ROWS} FROM merx_export`).then(
        ({ rows }) => {
          if (!rows.length) {
            if (header) this.push(header);
            this.push(null);
            return;
          }
          let piece = header;
          header = '';
          for (const row of rows) {
            piece += line(row.v);
            if (piece.length >= PIECE_CHARS) {
              this.push(piece);
              piece = '';
            }
          }
          if (piece) this.push(piece);
        },
        (err) => this.destroy(err),
      );
    },
  });
}
