// EXTENSIONS 7, the request log: one entry per REST request and per MCP
// tool call made with a valid key, whatever its answer. The transports fill
// in an entry from what they already know (the operation, the concrete path,
// the status and error code, the idempotency key) and hand it to record(),
// which never waits: entries are written in batches, one INSERT for many,
// outside any request's transaction (bench/RESULTS-request-log.md).
//
// An entry holds no body, no query value, no header value and no secret: its
// fields are the operation's name, the route's path with only its id
// parameters filled in, numbers, flags, and uuids. Its id, the ids it names
// and the events it committed come from the request's RequestTrace, which the
// operation pipeline carries (src/platform/operations/request-trace.ts).
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Sql } from '../../../platform/db/db.ts';
import { Batcher } from '../../../platform/db/batcher.ts';
import type { AnsweredCall, LoggedKey, RequestTrace } from '../../../platform/operations/request-trace.ts';
import type { RequestLogView } from './queries.ts';

export const REQUEST_LOG_RETENTION_DAYS = 30;

/** The columns of request_logs as json_to_recordset reads a batch's rows (JSON arrays become uuid[]). */
const RECORD = `id uuid, account_id uuid, key_id uuid, key_prefix text, at timestamptz, transport text, operation text, method text,
  path text, status int4, error_code text, dry_run bool, idempotency_key text, replayed bool, duration_ms int4, resource_ids uuid[], event_ids uuid[]`;
const COLUMNS = RECORD.replace(/ [a-z0-9[\]]+(,|$)/g, '$1');

/**
 * Writes entries in batches: one INSERT ... SELECT FROM json_to_recordset() per batch,
 * spaced so that under load the batches grow instead of the statements. A
 * failed batch is logged and dropped: the log must never hold up or fail a
 * request, and the request itself has already been answered.
 */
export class RequestLog {
  private readonly batcher: Batcher<RequestLogRow, void>;

  constructor(db: Db, log: FastifyBaseLogger) {
    const write = (rows: RequestLogRow[]) =>
      writeRows(db, rows).catch((err) => {
        log.warn({ err, entries: rows.length }, 'request log entries were not written');
        return [];
      });
    this.batcher = new Batcher(write, { maxBatch: 500, parallel: 2, spacingMs: 20 });
  }

  /** One entry for a call by `key`: what its trace collected, and what its transport knows of it. */
  record(key: LoggedKey, trace: RequestTrace, call: AnsweredCall): void {
    // Queued as the row it will be, with no promise of its own: nobody waits for an entry.
    this.batcher.enqueue({
      id: trace.id,
      account_id: key.accountId,
      key_id: key.keyId,
      key_prefix: key.keyPrefix,
      at: trace.at.toISOString(),
      transport: call.transport,
      operation: call.operation,
      method: call.method,
      path: call.path,
      status: call.status,
      error_code: call.errorCode,
      dry_run: call.dryRun,
      idempotency_key: call.idempotencyKey,
      replayed: call.replayed,
      duration_ms: call.durationMs,
      resource_ids: [...trace.resourceIds],
      event_ids: trace.eventIds,
    });
  }

  /** Resolves once every entry recorded so far is written (or failed): for a graceful stop. */
  flushed(): Promise<void> {
    return this.batcher.drained();
  }
}

/** An entry as a row of request_logs: what a reader sees of it, and whose it is. */
type RequestLogRow = RequestLogView & { account_id: string; key_id: string };

// One JSON text per batch (JSON.stringify is native; node-postgres serialises 17 arrays of 500 values element by
// element in JavaScript). On the background connections (asynchronous commit): an entry is already held in memory for
// up to a batch's spacing before it is written, so a crash may lose the last moment's entries either way, and the
// batch need not wait for its WAL to reach the disk.
async function writeRows(db: Db, rows: RequestLogRow[]): Promise<void[]> {
  await db
    .background()
    .query(
      `INSERT INTO request_logs (${COLUMNS}) SELECT ${COLUMNS} FROM json_to_recordset($1::json) AS t(${RECORD}) ON CONFLICT (id) DO NOTHING`,
      [JSON.stringify(rows)],
      { prepared: true },
    );
  return [];
}

export async function pruneRequestLogs(sql: Sql, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - REQUEST_LOG_RETENTION_DAYS * 86_400_000).toISOString();
  const { rowCount } = await sql.query('DELETE FROM request_logs WHERE at < $1::timestamptz', [cutoff]);
  return rowCount;
}
