// EXTENSIONS 7, the request log: one entry per REST request and per MCP
// tool call made with a valid key, whatever its answer. The transports fill
// in an entry from what they already know (the operation, the concrete path,
// the status and error code, the idempotency key) and hand it to record(),
// which never waits: entries are written in batches, one INSERT for many,
// outside any request's transaction (bench/RESULTS-request-log.md).
//
// The events a request committed are collected through the request's async
// context (RequestTrace): emit() notes each event id after its transaction
// commits, so a rolled-back event is never listed.
//
// An entry holds no body, no query value, no header value and no secret: its
// fields are the operation's name, the route's path with only its id
// parameters filled in, numbers, flags, and uuids.
import crypto from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { v7 as uuidv7 } from 'uuid';
import type { Db, Sql } from '../db/db.ts';
import { Batcher } from '../db/batcher.ts';
import type { RequestLogView } from './queries.ts';

export const REQUEST_LOG_RETENTION_DAYS = 30;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// The uuid package asks the system for 16 random bytes per id (crypto.getRandomValues, ~5% of a GET's CPU when
// profiled); ids take them from a pool refilled 256 ids at a time, as crypto.randomUUID does.
const entropy = Buffer.alloc(16 * 256);
let entropyUsed = entropy.length;
const clock = { msecs: -Infinity, seq: 0 };

/**
 * The id of a request (X-Request-Id) or an MCP tool call (`_meta.request_id`),
 * and of its log entry: a time-ordered UUID (version 7), so the entries'
 * primary key takes each new id at its right-hand end instead of a random
 * page of the index (bench/RESULTS-request-log.md).
 */
export function newRequestId(): string {
  if (entropyUsed === entropy.length) {
    crypto.randomFillSync(entropy);
    entropyUsed = 0;
  }
  const random = entropy.subarray(entropyUsed, (entropyUsed += 16));
  // RFC 9562's monotonic counter, kept here because the package's own state only runs with its per-call entropy.
  const now = Date.now();
  if (now > clock.msecs) {
    clock.msecs = now;
    clock.seq = random.readUInt32BE(6) & 0x7fffffff;
  } else {
    clock.seq = (clock.seq + 1) & 0x7fffffff;
    if (clock.seq === 0) clock.msecs++; // the counter ran out within one millisecond: borrow the next
  }
  return uuidv7({ random, msecs: clock.msecs, seq: clock.seq });
}

/** What one request (or one MCP tool call) did, collected while it runs. */
export class RequestTrace {
  readonly id: string;
  readonly at: Date;
  readonly started = performance.now();
  readonly eventIds: string[] = [];
  readonly resourceIds = new Set<string>();
  constructor(id: string, at = new Date()) {
    this.id = id;
    this.at = at;
  }

  /** Ids the request named or created (path ids, *_id body fields, the answer's data.id): uuids only. */
  addResource(value: unknown): void {
    if (typeof value === 'string' && UUID.test(value)) this.resourceIds.add(value.toLowerCase());
  }
}

const traces = new AsyncLocalStorage<RequestTrace>();

/** Runs `fn` as part of `trace`: the events it commits are listed in the trace. */
export function withTrace<T>(trace: RequestTrace | undefined, fn: () => T): T {
  return trace ? traces.run(trace, fn) : fn();
}

/** Called by emit(): the event counts for the running request once its transaction commits. */
export function noteEvent(tx: Sql, eventId: string): void {
  const trace = traces.getStore();
  if (trace) tx.afterCommit(() => trace.eventIds.push(eventId));
}

/** The key a call was made with, as the log names it. */
export interface LoggedKey {
  accountId: string;
  keyId: string;
  keyPrefix: string;
}

/** What the transport knows of a call once it is answered. */
export interface AnsweredCall {
  transport: 'rest' | 'mcp';
  operation: string;
  method: string;
  path: string;
  status: number;
  errorCode: string | null;
  dryRun: boolean;
  idempotencyKey: string | null;
  replayed: boolean;
  durationMs: number;
}

/** The concrete path of a route: its `:name` parameters filled in (path ids only, never a query). */
export function concretePath(routePath: string, params: Record<string, unknown>): string {
  let template = routeTemplates.get(routePath);
  if (!template) routeTemplates.set(routePath, (template = routePath.split(/:([A-Za-z_]+)/)));
  // Split on the parameters, the template alternates text and parameter names: text, name, text, ...
  let path = template[0];
  for (let i = 1; i < template.length; i += 2) path += encodeURIComponent(String(params[template[i]] ?? '')) + template[i + 1];
  return path;
}
const routeTemplates = new Map<string, string[]>();

/** Ids of the resources a call names: uuid-valued path parameters and top-level *_id arguments. */
export function namedResources(trace: RequestTrace, input: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(input)) if (name === 'id' || name.endsWith('_id')) trace.addResource(value);
}

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
