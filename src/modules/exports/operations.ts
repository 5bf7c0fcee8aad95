// EXTENSIONS 8: GET /api/v1/exports/{resource}, one operation per resource
// (each its own read scope and filters), REST only: MCP answers JSON within a
// context window, not a stream of every record.
import { Type } from 'typebox';
import { defineOperation, type Operation } from '../../platform/operations/operation.ts';
import { Closed } from '../../platform/contract/schema.ts';
import { StreamAnswer } from '../../platform/operations/stream-answer.ts';
import { EXPORT_SOURCES, type ExportSource } from './sources.ts';
import { MEDIA_TYPES, openExport, type ExportFormat } from './stream.ts';
import { EXPORTS_PER_KEY, takeSharedSlot, takeSlot } from './slots.ts';

export const EVENTS_CURSOR_HEADER = 'Merx-Events-Cursor';

const DESCRIPTION =
  "Streams every record that following the list route's pages would return, in the list's order and with its filters (limit, offset and " +
  "cursor are not taken: 400), as JSON Lines (format=jsonl, the default: each line byte for byte the record's `data` in its REST read) or " +
  "CSV (format=csv: RFC 4180, a header row, scalar fields in the record's documented order, nested objects with documented fields flattened with a dot, other objects and " +
  'arrays as JSON text, null as an empty cell). The whole stream is one snapshot of the account; the `Merx-Events-Cursor` header is an ' +
  'events-feed cursor at that snapshot: every change committed before it is in the rows, and GET /api/v1/events?cursor=<it> gives exactly ' +
  'the events committed after it. Accept-Encoding: gzip gives a gzipped stream. A stream cut short ends without its final chunk (a client ' +
  'sees an error, never a short file): resume with starting_after and the last record stored (a newer snapshot with its own cursor; ' +
  `following the feed from the first cursor covers both). At most ${EXPORTS_PER_KEY} exports stream per API key at once (a third: 429 ` +
  'rate_limited); an export counts as one request against the rate limit.';

function exportOperation(source: ExportSource): Operation {
  const query = Closed({
    ...source.filters.properties,
    format: Type.Optional(
      Type.Unsafe<ExportFormat>({ type: 'string', enum: ['jsonl', 'csv'], default: 'jsonl', description: 'jsonl (default) or csv.' }),
    ),
    starting_after: Type.Optional(
      Type.Unsafe<string>({
        ...source.key.schema,
        description: `Resume after this record (${source.key.described}; 400 when it is no record of the account).`,
      }),
    ),
  });
  return defineOperation({
    name: `export_${source.resource.replace('-', '_')}`,
    method: 'GET',
    path: `/api/v1/exports/${source.resource}`,
    scope: source.scope,
    feature: source.feature,
    tags: ['Exports'],
    summary: `Export every ${source.resource.replace('-', ' ')} record as JSON Lines or CSV`,
    description: DESCRIPTION,
    query,
    output: Type.String({ description: 'JSON Lines (application/x-ndjson) or CSV (text/csv), streamed.' }),
    streams: [MEDIA_TYPES.jsonl, MEDIA_TYPES.csv],
    answerHeaders: {
      [EVENTS_CURSOR_HEADER]: "An events-feed cursor at the export's snapshot: GET /api/v1/events?cursor=<it> gives the events committed after it.",
    },
    mcp: false,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
    // The snapshot's cursor is the primary's (as the feed's horizon is), and the rows must be of that same snapshot.
    readsFrom: 'primary',
    handler: async (ctx, input) => {
      const { format = 'jsonl', starting_after: startingAfter, ...filters } = input as Record<string, any>;
      const give = takeSlot(ctx.db, ctx.caller.keyId);
      try {
        const opened = await openExport(ctx.db, {
          source,
          accountId: ctx.caller.accountId,
          seal: ctx.cursors.scopedTo(ctx.caller.accountId),
          format,
          filters,
          startingAfter,
          claim: (tx) => takeSharedSlot(ctx.db, tx, ctx.caller.keyId),
        });
        opened.body.once('close', give);
        ctx.answer.headers[EVENTS_CURSOR_HEADER] = opened.eventsCursor;
        return new StreamAnswer(MEDIA_TYPES[format as ExportFormat], opened.body) as never;
      } catch (err) {
        give();
        throw err;
      }
    },
  });
}

export const exportOperations: Operation[] = EXPORT_SOURCES.map(exportOperation);
