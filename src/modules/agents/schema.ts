// EXTENSIONS 7: the request log's entry and its filters.
import { Type } from 'typebox';
import { Closed, Cursor, DateTime, Limit, ListOf, Nullable, StrictDate, Uuid } from '../../platform/contract/schema.ts';

export const RequestLogEntry = Closed(
  {
    id: Uuid({ description: 'The X-Request-Id the request was answered with (MCP: _meta.request_id of the tool result).' }),
    at: DateTime({ description: 'When the request arrived.' }),
    key_prefix: Type.String(),
    transport: Type.Unsafe<'rest' | 'mcp'>({ type: 'string', enum: ['rest', 'mcp'] }),
    operation: Type.String({ description: 'The MCP tool name of the operation, e.g. update_order.' }),
    method: Type.String({ description: 'REST: the HTTP method; MCP: POST.' }),
    path: Type.String({ description: 'REST: the concrete path, no query string; MCP: /api/mcp.' }),
    status: Type.Integer({ description: 'The HTTP status; for MCP the status its REST twin answers (200 for a result).' }),
    error_code: Nullable('string', { description: 'The REST error code (snake_case), also for MCP refusals; null on success.' }),
    dry_run: Type.Boolean(),
    idempotency_key: Nullable('string'),
    replayed: Type.Boolean({ description: 'The answer was an idempotent replay (or the approval an Idempotency-Key had already asked for).' }),
    duration_ms: Type.Integer(),
    resource_ids: Type.Array(Uuid(), { description: 'Ids the request named (path ids, *_id arguments) or created.' }),
    event_ids: Type.Array(Uuid(), { description: 'The events the request committed (GET /api/v1/events lists them).' }),
  },
  { $id: 'RequestLogEntry' },
);

export const RequestLogQueryFields = {
  limit: Type.Optional(Limit(50)),
  cursor: Type.Optional(Cursor()),
  operation: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A tool name.' })),
  status: Type.Optional(Type.String({ pattern: '^[1-5](\\d\\d|xx|XX)$', description: 'A status (404) or a class (4xx).' })),
  writes: Type.Optional(Type.Boolean({ description: 'true: writes only (dry runs too); false: reads only.' })),
  errors: Type.Optional(Type.Boolean({ description: 'true: status >= 400 only; false: the others.' })),
  since: Type.Optional(StrictDate('at or after.')),
  until: Type.Optional(StrictDate('before.')),
};

export const RequestLogQuery = Closed(RequestLogQueryFields);
export const RequestLogPage = ListOf(RequestLogEntry);
