// Exports (EXTENSIONS 8) as a client reads them: the whole stream as text,
// its lines, and a small RFC 4180 reader for the CSV form.
import { http, type HttpResult } from './harness.ts';

export function exportPath(resource: string, query: Record<string, string | number | undefined> = {}): string {
  const qs = new URLSearchParams(
    Object.entries(query)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, String(v)]),
  ).toString();
  return `/api/v1/exports/${resource}${qs ? `?${qs}` : ''}`;
}

export function exportOf(
  base: string,
  key: string,
  resource: string,
  query: Record<string, string | number | undefined> = {},
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return http(base, 'GET', exportPath(resource, query), { token: key, headers });
}

/** The JSONL body's lines (each one record's JSON text). */
export function linesOf(text: string): string[] {
  if (text === '') return [];
  if (!text.endsWith('\n')) throw new Error('a JSONL export ends with a newline');
  return text.slice(0, -1).split('\n');
}

/** The `data` of a `{"data":...}` answer, as the text the service sent. */
export function dataText(text: string): string {
  if (!text.startsWith('{"data":') || !text.endsWith('}')) throw new Error(`not a {data} answer: ${text.slice(0, 100)}`);
  return text.slice('{"data":'.length, -1);
}

/** RFC 4180: rows of fields; quoted fields may hold commas, doubled quotes, CR and LF. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i++;
      } else {
        field += c;
        i++;
      }
    } else if (c === '"' && field === '') {
      quoted = true;
      i++;
    } else if (c === ',') {
      row.push(field);
      field = '';
      i++;
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
    } else if (c === '"' || c === '\r' || c === '\n') throw new Error(`bare ${JSON.stringify(c)} at ${i}`);
    else {
      field += c;
      i++;
    }
  }
  if (field !== '' || row.length) throw new Error('the last CSV row does not end with CRLF');
  return rows;
}
