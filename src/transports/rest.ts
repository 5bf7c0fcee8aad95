// Registry -> Fastify routes. Knows HTTP, not the domain: it authenticates,
// checks scope, plan and rate limit in SPEC's order, validates, and hands the
// input to the operation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requirePlan, requireScope } from '../platform/edge/auth.ts';
import { AppError } from '../platform/contract/errors.ts';
import { admittingScopes, answersWithEtag, isWrite, type AnswerExtras, type Operation } from '../platform/operations/operation.ts';
import { checkIdempotencyKey, IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER, type StoredAnswer } from '../platform/operations/idempotency.ts';
import { compileOptional } from '../platform/contract/validation.ts';
import { runOperation } from '../platform/operations/pipeline.ts';
import { dataOf, JsonText } from '../platform/read-path/index.ts';
import { sendJsonText } from './json-answer.ts';
import { ETAG_HEADER, etagOfAnswer, etagOfData, IF_MATCH_HEADER, IF_NONE_MATCH_HEADER, ifNoneMatchHits } from '../platform/contract/etag.ts';
import type { Services } from '../platform/services.ts';
import type { AuthenticatedKey } from '../platform/edge/auth.ts';
import { APPROVAL_HEADER, type ApprovalAnswer } from '../platform/operations/agents-hook.ts';
import { concretePath, RequestTrace } from '../platform/operations/request-trace.ts';
import { registerPaths } from './http-paths.ts';
import { serializableSchema } from './schema-refs.ts';
import { StreamAnswer } from '../platform/operations/stream-answer.ts';
import { pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';

export const DRY_RUN_HEADER = 'x-merx-dry-run';
const DRY_RUN_VALUES = new Set(['1', 'true', 'yes']);

declare module 'fastify' {
  interface FastifyRequest {
    /** The valid key of this request, set before scope, plan and rate limit are checked: the caller, and (EXTENSIONS 7) whose log it goes to. */
    key?: AuthenticatedKey;
    /** EXTENSIONS 7: what the request did, for the request log. */
    trace?: RequestTrace;
    /** The error code of a refusal, read as it is sent. */
    errorCode?: string;
    /** EXTENSIONS 10: the answer was projected by `fields`: it carries no ETag. */
    projected?: boolean;
  }
  interface FastifyContextConfig {
    operation?: Operation;
  }
}

/** SPEC Endpoints: header values 1, true or yes ask for a dry run. */
export function wantsDryRun(request: FastifyRequest): boolean {
  const value = request.headers[DRY_RUN_HEADER];
  return typeof value === 'string' && DRY_RUN_VALUES.has(value.trim().toLowerCase());
}

/**
 * SPEC Authentication 8 and GAPS General: 401, 403 scope, 403 plan, then 429.
 * Every request with a valid key counts toward its limit, refused or not, so
 * that every authenticated answer (a 403 too) carries honest X-RateLimit-*
 * values; the count decides only whether the answer may be a 429, which
 * comes after the 403s (docs/decisions.md, "Rate limits").
 */
async function admit(services: Services, op: Operation, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const key = await services.keys.authenticate(request.headers.authorization, request.ip);
  // EXTENSIONS 7: from here on the request is logged, whatever its answer.
  request.key = key;
  request.trace = new RequestTrace(request.id, new Date(Date.now() - reply.elapsedTime));
  const outcome = await services.rateLimits.rest.consume(key.keyId);
  reply.header('X-RateLimit-Limit', outcome.limit).header('X-RateLimit-Remaining', outcome.remaining);
  requireScope(key, admittingScopes(op));
  requirePlan(key.plan, services.faults);
  if (!outcome.allowed) {
    throw new AppError(
      'rate_limited',
      `rate limit of ${outcome.limit} requests per minute exceeded`,
      { retry_after_sec: outcome.retryAfterSec },
      {
        headers: { 'Retry-After': String(outcome.retryAfterSec) },
      },
    );
  }
}

/** A request header's value, several occurrences joined as one list. */
function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A replay: the first answer's status, headers and bytes. An answer first given over MCP is shaped by this route's serialiser. */
function replay(reply: FastifyReply, answer: StoredAnswer) {
  reply.code(answer.status).headers({ ...answer.headers, [REPLAYED_HEADER]: 'true' });
  if (answer.origin === 'mcp' && answer.status < 300) return JSON.parse(answer.body);
  return sendStored(reply, answer);
}

function operationRoute(services: Services, op: Operation) {
  const validateParams = compileOptional(op.params, 'path');
  const validateQuery = compileOptional(op.query, 'query');
  const validateBody = compileOptional(op.body, 'body');
  const dryRunnable = op.dryRunOutput !== undefined;

  return async (request: FastifyRequest, reply: FastifyReply) => {
    const params = { ...(request.params as object) };
    const query = { ...(request.query as object) };
    const body = request.body === undefined || request.body === null ? {} : request.body;
    const dryRun = dryRunnable && wantsDryRun(request);
    const idempotencyKeyHeader = isWrite(op) ? request.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()] : undefined;
    const outcome = await runOperation(services, {
      transport: 'rest',
      op,
      caller: request.key!,
      sent: { params, query, body },
      dryRun,
      // EXTENSIONS 3: a versioned resource's write honours If-Match (checked by execute on the locked row).
      ifMatch: op.etag && isWrite(op) ? headerValue(request, IF_MATCH_HEADER) : undefined,
      approvalId: isWrite(op) ? headerValue(request, APPROVAL_HEADER) : undefined,
      idempotencyKey: idempotencyKeyHeader === undefined ? undefined : checkIdempotencyKey(idempotencyKeyHeader),
      trace: request.trace!,
      checkedInput: () => {
        if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('validation_failed', 'the body must be a JSON object');
        // Validation fills in defaults and coerces the query's strings: the input is read after it.
        validateParams(params);
        validateQuery(query);
        validateBody(body);
        return { ...body, ...query, ...params };
      },
      answerOf: (result, extras) => answerFor(reply, op, result, extras),
    });
    if (outcome.kind === 'replay') return replay(reply, outcome.answer);
    if (outcome.kind === 'approval') return sendApproval(reply, outcome.answer);
    const { result, etag, extras, stored } = outcome;
    if (outcome.projected) {
      request.projected = true;
      // EXTENSIONS 10: the next page (RFC 8288 Link) of a projected list is asked for with the same fields.
      const fields = (query as { fields?: string }).fields!;
      if (extras.headers.link)
        extras.headers.link = extras.headers.link.replace(/^<([^>]*)>/, (_, url: string) => `<${url}&fields=${encodeURIComponent(fields)}>`);
    }
    // An idempotent write's answer was stored with its effect (issue 27): those very bytes are sent.
    if (stored) return sendStored(reply, stored);
    if (Object.keys(extras.headers).length) reply.headers(extras.headers);
    if (etag) {
      reply.header(ETAG_HEADER, etag);
      const ifNoneMatch = isWrite(op) ? undefined : headerValue(request, IF_NONE_MATCH_HEADER);
      if (ifNoneMatch !== undefined && ifNoneMatchHits(ifNoneMatch, etag)) return reply.code(304).send();
    }
    if (result instanceof StreamAnswer) return sendStream(request, reply, result);
    if (op.produces && !dryRun) {
      const file = result as { body: Buffer; filename: string };
      return reply.type(op.produces).header('Content-Disposition', `attachment; filename="${file.filename}"`).send(file.body);
    }
    // Previews have their own closed shape, assembled by the operation; the route's schema describes the real result.
    // (A preview around a view PostgreSQL wrote is JsonText, sent as it is below.)
    if (dryRun && !(result instanceof JsonText)) reply.type('application/json; charset=utf-8').serializer(JSON.stringify);
    else if (op.location) reply.header('Location', locationOf(op, result));
    reply.code(dryRun ? 200 : (op.successStatus ?? 200));
    // Written by PostgreSQL in the contract's shape (issue 12): its bytes are sent as they are.
    if (result instanceof JsonText) return sendJsonText(reply, result, services.answerBuffers);
    return result;
  };
}

/**
 * A streamed answer, gzipped when the client accepts gzip (EXTENSIONS 8). An
 * error of the body after the headers went out makes Fastify destroy the
 * socket: the chunked response ends without its last chunk, so the client
 * sees a broken transfer.
 */
function sendStream(request: FastifyRequest, reply: FastifyReply, answer: StreamAnswer) {
  reply.type(answer.contentType).header('Vary', 'Accept-Encoding');
  if (!acceptsGzip(headerValue(request, 'accept-encoding'))) return reply.send(answer.body);
  // pipeline: an error or a close on either side destroys the other (the body's transaction then ends).
  return reply.header('Content-Encoding', 'gzip').send(pipeline(answer.body, createGzip(), () => {}));
}

/** Accept-Encoding names gzip (or *) with a weight above zero. */
export function acceptsGzip(header: string | undefined): boolean {
  return (header ?? '').split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === 'x-gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** EXTENSIONS 7: the write was not performed; it waits for a person (202, Location of the approval). */
function sendApproval(reply: FastifyReply, answer: ApprovalAnswer) {
  reply.code(202).header('Location', answer.location).type('application/json; charset=utf-8').serializer(JSON.stringify);
  if (answer.replayed) reply.header(REPLAYED_HEADER, 'true');
  return reply.send(answer.body);
}

const locationOf = (op: Operation, result: unknown) => op.location!.replace(':id', (dataOf(result) as { id: string }).id);

/** A write's answer as REST sends it (status, Location, ETag, the bytes its route's schema serialises), to store with its effect. */
function answerFor(reply: FastifyReply, op: Operation, result: unknown, answer: AnswerExtras): StoredAnswer {
  const status = op.successStatus ?? 200;
  const headers: Record<string, string> = { ...answer.headers };
  if (op.location) headers.location = locationOf(op, result);
  if (op.etag) headers.etag = etagOfData(result);
  const body = result instanceof JsonText ? result.text : (reply.serializeInput(result as Record<string, unknown>, String(status)) as string);
  return { status, headers, body, origin: 'rest' };
}

/** Sends a stored answer as it was stored (the first answer to an idempotent write). */
function sendStored(reply: FastifyReply, answer: StoredAnswer) {
  return reply
    .code(answer.status)
    .headers(answer.headers)
    .type('application/json; charset=utf-8')
    .serializer((payload: unknown) => payload as string)
    .send(answer.body);
}

/**
 * A read that is not a versioned resource (a list): its ETag is the hash of
 * the bytes about to be sent, and a poller that already holds them gets a 304
 * with no body (issue 12).
 */
async function tagAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  if (reply.statusCode !== 200 || request.projected || !(typeof payload === 'string' || Buffer.isBuffer(payload))) return payload;
  // Tagged by the handler from stored views' tags (issue 29); a 304 was answered there.
  if (reply.hasHeader(ETAG_HEADER)) return payload;
  const etag = etagOfAnswer(payload);
  reply.header(ETAG_HEADER, etag);
  const ifNoneMatch = headerValue(request, IF_NONE_MATCH_HEADER);
  if (ifNoneMatch === undefined || !ifNoneMatchHits(ifNoneMatch, etag)) return payload;
  reply.code(304).removeHeader('content-type');
  return '';
}

/** A refusal's code, read off the body as it is sent (EXTENSIONS 7: the request log's error_code). */
async function noteErrorCode(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  if (reply.statusCode >= 400 && request.key && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
    try {
      request.errorCode = JSON.parse(payload.toString()).error?.code;
    } catch {
      // Not our error shape: the entry says only the status.
    }
  }
  return payload;
}

/** EXTENSIONS 7: one entry per request made with a valid key, whatever the answer; never a body, query value or header value. */
function logRequest(services: Services, op: Operation, request: FastifyRequest, reply: FastifyReply): void {
  const key = request.key;
  const trace = request.trace;
  if (!key || !trace) return;
  let idempotencyKey: string | null = null;
  if (isWrite(op)) {
    try {
      const header = request.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
      if (header !== undefined) idempotencyKey = checkIdempotencyKey(header);
    } catch {
      // A malformed key was refused (400); it is not recorded.
    }
  }
  services.agents.record(key, trace, {
    transport: 'rest',
    operation: op.name,
    method: request.method,
    path: concretePath(op.path, (request.params ?? {}) as Record<string, unknown>),
    status: reply.statusCode,
    errorCode: reply.statusCode >= 400 ? (request.errorCode ?? null) : null,
    dryRun: op.dryRunOutput !== undefined && wantsDryRun(request),
    idempotencyKey,
    replayed: reply.getHeader(REPLAYED_HEADER) === 'true',
    durationMs: Math.round(reply.elapsedTime),
  });
}

export function registerOperations(app: FastifyInstance, services: Services, operations: Operation[]): void {
  const routes = operations.filter((op) => op.rest !== false);
  for (const op of routes) {
    const status = op.successStatus ?? 200;
    app.route({
      method: op.method,
      url: op.path,
      config: { operation: op },
      // In onRequest, before the body is read: a bad key is a 401 even when the body is malformed.
      onRequest: (request, reply) => admit(services, op, request, reply),
      schema: op.produces || op.streams ? {} : { response: { [status]: serializableSchema(op.output) } },
      handler: operationRoute(services, op),
      onSend: answersWithEtag(op) && !op.etag ? [tagAnswer, noteErrorCode] : [noteErrorCode],
      onResponse: async (request, reply) => logRequest(services, op, request, reply),
    });
  }
  registerPaths(
    app,
    routes.map((op) => ({ path: op.path, method: op.method })),
  );
}
