// EXTENSIONS 7: reading the request log. A key reads its own entries (the
// API and MCP); the operator reads every key's of an account. Newest first,
// keyset pages on (at, id), cursors sealed to the key or the account.
import type { Sql } from '../../../platform/db/db.ts';
import { AppError } from '../../../platform/contract/errors.ts';
import { isoTime } from '../../../platform/read-path/index.ts';
import type { CursorSeal } from '../../../platform/contract/cursor-seal.ts';
import { decodeCursor, pageOf, sqlParameters } from '../../../platform/contract/paging.ts';
import { writeOperationNames } from '../../../platform/operations/write-operations.ts';

export interface RequestLogFilter {
  limit?: number;
  cursor?: string;
  operation?: string;
  /** An exact status (`404`) or a class (`4xx`). */
  status?: string;
  since?: string;
  until?: string;
  key_prefix?: string;
  /** Issue 41: only the write operations (true) or only the reads (false). */
  writes?: boolean;
  /** Issue 41: only the answers of status 400 and above (true) or only the others (false). */
  errors?: boolean;
}

const STATUS = /^([1-5])(\d\d|xx)$/i;

export interface RequestLogView {
  id: string;
  at: string;
  key_prefix: string;
  transport: 'rest' | 'mcp';
  operation: string;
  method: string;
  path: string;
  status: number;
  error_code: string | null;
  dry_run: boolean;
  idempotency_key: string | null;
  replayed: boolean;
  duration_ms: number;
  resource_ids: string[];
  event_ids: string[];
}

const VIEW = `id, ${isoTime('at')} AS at, key_prefix, transport, operation, method, path,
  status, error_code, dry_run, idempotency_key, replayed, duration_ms, to_json(resource_ids) AS resource_ids, to_json(event_ids) AS event_ids`;

/** One page of entries: of one key (`keyId`) or of every key of an account. */
export async function listRequestLogs(sql: Sql, cursors: CursorSeal, owner: { accountId: string; keyId?: string }, filter: RequestLogFilter) {
  const { values, bind } = sqlParameters();
  const where = [`account_id = ${bind(owner.accountId)}`];
  if (owner.keyId) where.push(`key_id = ${bind(owner.keyId)}`);
  if (filter.operation !== undefined) where.push(`operation = ${bind(filter.operation)}`);
  if (filter.key_prefix !== undefined) where.push(`key_prefix = ${bind(filter.key_prefix)}`);
  if (filter.status !== undefined) {
    const match = STATUS.exec(filter.status);
    if (!match) throw new AppError('validation_failed', 'status is a status code (404) or a class (4xx)');
    if (match[2].toLowerCase() === 'xx') where.push(`status BETWEEN ${bind(Number(match[1]) * 100)} AND ${bind(Number(match[1]) * 100 + 99)}`);
    else where.push(`status = ${bind(Number(filter.status))}`);
  }
  if (filter.writes !== undefined) where.push(`${filter.writes ? '' : 'NOT '}(operation = ANY(${bind(writeOperationNames())}::text[]))`);
  if (filter.errors !== undefined) where.push(filter.errors ? 'status >= 400' : 'status < 400');
  if (filter.since !== undefined) where.push(`at >= ${bind(new Date(filter.since).toISOString())}::timestamptz`);
  if (filter.until !== undefined) where.push(`at < ${bind(new Date(filter.until).toISOString())}::timestamptz`);
  const seal = cursors.scopedTo(`request-logs:${owner.keyId ?? owner.accountId}`);
  if (filter.cursor !== undefined) {
    const position = decodeCursor(seal, filter.cursor);
    where.push(`(at, id) < (${bind(position.createdAt)}::timestamptz, ${bind(position.id)}::uuid)`);
  }
  const limit = filter.limit ?? 50;
  const { rows } = await sql.query<RequestLogView>(
    `SELECT ${VIEW} FROM request_logs WHERE ${where.join(' AND ')} ORDER BY at DESC, id DESC LIMIT ${limit + 1}`,
    values,
  );
  return pageOf(rows, limit, seal, (row) => ({ createdAt: row.at, id: row.id }));
}
