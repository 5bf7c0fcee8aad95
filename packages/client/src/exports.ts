// Exports (EXTENSIONS 8) as an async iterator of parsed records. A stream cut
// short (a dropped connection, a restart of the service) ends without its
// final chunk, so reading it throws; the iterator then asks again with
// starting_after = the last record it handed out and goes on. The events
// cursor of the first answer is the one to follow: the resumed part is a newer
// snapshot, and the feed from the first cursor covers both.
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];

/** The record each export streams. */
export interface ExportRecords {
  orders: Schemas['Order'];
  shipments: Schemas['Shipment'];
  products: Schemas['Product'];
  customers: Schemas['Customer'];
  'stock-movements': Schemas['StockMovement'];
}
export type ExportResource = keyof ExportRecords;

/** The list's filters of that export (no format: records are read as JSON Lines). */
export type ExportFilters<R extends ExportResource> = Omit<NonNullable<paths[`/api/v1/exports/${R}`]['get']['parameters']['query']>, 'format'>;

export interface RecordExport<T> extends AsyncIterable<T> {
  /** The Merx-Events-Cursor of the first answer (set once it arrived): follow GET /api/v1/events?cursor=<it> after the export. */
  readonly eventsCursor: string | undefined;
  /** How many times a cut stream was resumed. */
  readonly resumed: number;
}

export interface ExportOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
  /** Resumes in a row without a record read in between before giving up (default 5). */
  maxResumes?: number;
}

/** An answer Merx refused (4xx/5xx before any record): its status and error body. */
export class MerxExportError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    super(
      `Merx answered ${status}${(body as { error?: { message?: string } })?.error?.message ? `: ${(body as { error: { message: string } }).error.message}` : ''}`,
    );
    this.status = status;
    this.body = body;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function exportRecords<R extends ExportResource>(
  options: ExportOptions,
  resource: R,
  filters: ExportFilters<R> = {} as ExportFilters<R>,
): RecordExport<ExportRecords[R]> {
  const doFetch = options.fetch ?? fetch;
  const keyOf = (record: Record<string, unknown>) => String(resource === 'customers' ? record.key : record.id);
  const state = { eventsCursor: undefined as string | undefined, resumed: 0 };
  async function* records(): AsyncGenerator<ExportRecords[R]> {
    let after = (filters as { starting_after?: string }).starting_after;
    let failures = 0;
    for (;;) {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(filters as Record<string, unknown>))
        if (value !== undefined && name !== 'starting_after') query.set(name, String(value));
      if (after !== undefined) query.set('starting_after', after);
      const url = `${options.baseUrl.replace(/\/+$/, '')}/api/v1/exports/${resource}${query.size ? `?${query}` : ''}`;
      let lines: AsyncGenerator<string> | null = null;
      try {
        const res = await doFetch(url, { headers: { Authorization: `Bearer ${options.apiKey}`, Accept: 'application/x-ndjson' } });
        if (!res.ok) {
          const body = await res.json().catch(() => null);
          // A full slot or an unreachable database is worth waiting for; any other refusal is the caller's to see.
          if ((res.status === 429 || res.status === 503) && failures < (options.maxResumes ?? 5)) {
            failures++;
            await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
            continue;
          }
          throw new MerxExportError(res.status, body);
        }
        state.eventsCursor ??= res.headers.get('merx-events-cursor') ?? undefined;
        lines = linesOf(res.body!);
      } catch (err) {
        if (err instanceof MerxExportError || ++failures > (options.maxResumes ?? 5)) throw err;
        await sleep(200 * failures);
        continue;
      }
      try {
        for await (const line of lines) {
          const record = JSON.parse(line) as ExportRecords[R];
          after = keyOf(record);
          failures = 0;
          yield record;
        }
        return;
      } catch (err) {
        // Only a broken transfer is resumed; a record that does not parse is a bug to see.
        if (err instanceof SyntaxError || ++failures > (options.maxResumes ?? 5)) throw err;
        state.resumed++;
        await sleep(200 * failures);
      }
    }
  }
  return {
    get eventsCursor() {
      return state.eventsCursor;
    },
    get resumed() {
      return state.resumed;
    },
    [Symbol.asyncIterator]: records,
  };
}

/** Complete lines only: a last line without its newline belongs to a cut stream, and the read throws before it is handed out. */
async function* linesOf(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    rest += decoder.decode(chunk, { stream: true });
    let end = rest.indexOf('\n');
    while (end !== -1) {
      yield rest.slice(0, end);
      rest = rest.slice(end + 1);
      end = rest.indexOf('\n');
    }
  }
  if (rest !== '') throw new Error('the export ended in the middle of a record');
}
