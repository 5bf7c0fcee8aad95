// What an MCP tool call reads from params._meta or, issue 41, its arguments
// (if_match, idempotency_key, approval_id) and the tool results it answers: success with _meta (etag,
// request_id, the operation's own), a refusal, an approval, a stored answer.
import { AppError, mcpRefusalCode, type ErrorCode } from '../platform/contract/errors.ts';
import { isWrite, type Operation } from '../platform/operations/operation.ts';
import { checkIdempotencyKey, type StoredAnswer } from '../platform/operations/idempotency.ts';
import { JsonText } from '../platform/read-path/index.ts';
import { etagOfData } from '../platform/contract/etag.ts';
import type { ApprovalAnswer } from '../platform/operations/agents-hook.ts';

export interface ToolResult {
  content: Array<{ type: string; text: string }>;
  structuredContent: unknown;
  isError: boolean;
  _meta?: Record<string, unknown>;
}

export const lowerCased = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

/** A result with the request log entry's id in _meta.request_id. */
export function withRequestId(result: ToolResult | JsonText, requestId: string): ToolResult | JsonText {
  if (result instanceof JsonText) return result;
  return { ...result, _meta: { ...result._meta, request_id: requestId } };
}

/**
 * A write's control value: params._meta.<name> or the argument <name> (a model
 * can set arguments, not _meta). Both given and different: 400.
 */
function controlOf(params: Record<string, unknown>, args: Record<string, unknown>, name: string): unknown {
  const meta = params._meta;
  const fromMeta = meta && typeof meta === 'object' ? (meta as Record<string, unknown>)[name] : undefined;
  const fromArgs = args[name];
  if (fromMeta !== undefined && fromArgs !== undefined && fromMeta !== fromArgs) {
    throw new AppError('validation_failed', `_meta.${name} and the argument ${name} differ: give one of them, or the same value`);
  }
  return fromArgs ?? fromMeta;
}

/** EXTENSIONS 7 on MCP: approval_id (argument or _meta) names the approval a write runs under (as REST's Merx-Approval). */
export function approvalIdOf(op: Operation, params: Record<string, unknown>, args: Record<string, unknown>): unknown {
  return isWrite(op) ? controlOf(params, args, 'approval_id') : undefined;
}

/** EXTENSIONS 7: the write was not performed; the result is the approval (REST's 202 body), its id in _meta.approval_id. */
export function approvalResult(answer: ApprovalAnswer, requestId: string): ToolResult {
  const body = answer.body;
  const meta: Record<string, unknown> = { approval_id: answer.approval.id, request_id: requestId };
  if (answer.replayed) meta.idempotent_replayed = true;
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: false, _meta: meta };
}

/** EXTENSIONS 3 on MCP: if_match (argument or _meta) on the update tool of a versioned resource (an ETag, or *). */
export function ifMatchOf(op: Operation, params: Record<string, unknown>, args: Record<string, unknown>): string | undefined {
  if (!op.etag || !isWrite(op)) return undefined;
  const value = controlOf(params, args, 'if_match');
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new AppError('validation_failed', 'if_match must be the ETag a read returned in _meta.etag, or *');
  }
  return value;
}

/** The answer headers REST would send for this result (ETag), kept with a stored answer. */
export function versionHeaders(op: Operation, output: unknown): Record<string, string> {
  return op.etag ? { etag: etagOfData(output) } : {};
}

/** EXTENSIONS 2 on MCP: params._meta.idempotency_key on a write tool (checked), or undefined. */
export function idempotencyKeyOf(op: Operation, params: Record<string, unknown>, args: Record<string, unknown>): string | undefined {
  if (!isWrite(op)) return undefined;
  const value = controlOf(params, args, 'idempotency_key');
  if (value === undefined) return undefined;
  return checkIdempotencyKey(value);
}

/** A stored answer (from either transport) as a tool result. */
export function resultOf(answer: StoredAnswer, requestId: string) {
  const body = JSON.parse(answer.body);
  const etag = answer.headers.etag;
  // A stored body is parsed: never JsonText here.
  if (answer.status < 400) return successOf(body, etag, requestId) as ToolResult;
  return refusalOf(new AppError(body.error.code as ErrorCode, body.error.message, undefined, { headers: etag ? { ETag: etag } : {} }));
}

/** `etag`: the version of a versioned resource, in _meta (EXTENSIONS 3: no field inside the resource); `request_id`: EXTENSIONS 7; `extra`: the operation's own _meta (a next cursor). */
export function successOf(output: unknown, etag: string | undefined, requestId: string, extra: Record<string, unknown> = {}): ToolResult | JsonText {
  const meta = { ...extra, ...(etag ? { etag } : {}), request_id: requestId };
  // Issue 12: JSON PostgreSQL wrote goes in twice as it is, as structuredContent and (escaped) as the text content.
  if (output instanceof JsonText) {
    return JsonText.concat([
      '{"content":[{"type":"text","text":',
      JsonText.quoted(output),
      '}],"structuredContent":',
      output,
      `,"isError":false,"_meta":${JSON.stringify(meta)}}`,
    ]);
  }
  return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output, isError: false, _meta: meta };
}

/** A 412 refusal carries the current version in _meta.etag, as REST sends it in ETag. */
export function refusalOf(error: AppError): ToolResult {
  const body = { error: mcpRefusalCode(error.code), reason: error.message };
  const result = { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true };
  const etag = lowerCased(error.headers).etag;
  return etag ? { ...result, _meta: { etag } } : result;
}
