// Registry -> Fastify routes. Knows HTTP, not the domain: it authenticates,
// checks scope, plan and rate limit in SPEC's order, validates, and hands the
// input to the operation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requirePlan, requireScope } from '../platform/auth.ts';
import { AppError } from '../platform/errors.ts';
import { admittingScopes, answersWithEtag, isWrite, noExtras, type AnswerExtras, type Caller, type Operation } from '../platform/operation.ts';
import {
  checkIdempotencyKey, claimIdempotencyKey, IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER, REPLAYED_RESPONSE_HEADERS, requestFingerprint,
  type Claim, type IdempotentRun, type RequestParts, type StoredAnswer,
} from '../platform/idempotency.ts';
import { compileOptional } from '../platform/validation.ts';
import { execute } from '../platform/execute.ts';
import { dataOf, JsonText } from '../platform/json-text.ts';
import { sendJsonText } from '../platform/answer-bytes.ts';
import { ETAG_HEADER, etagOfAnswer, etagOfData, storedAnswerEtag, IF_MATCH_HEADER, IF_NONE_MATCH_HEADER, ifNoneMatchHits } from '../platform/etag.ts';
import type { Services } from '../platform/services.ts';
import type { AuthenticatedKey } from '../platform/auth.ts';
import { APPROVAL_HEADER, ApprovalAnswer } from '../platform/approvals.ts';
import { concretePath, namedResources, RequestTrace } from '../platform/request-log.ts';
import { registerPaths } from './http-paths.ts';
import { serializableSchema } from './schema-refs.ts';

export const DRY_RUN_HEADER = 'x-merx-dry-run';
const DRY_RUN_VALUES = new Set(['1', 'true', 'yes']);

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
    /** The idempotency key this request holds while it runs (EXTENSIONS 2). */
    idempotentRun?: IdempotentRun;
    /** EXTENSIONS 7: the valid key of this request (set before scope, plan and rate limit are checked) and what it did, for the request log. */
    loggedKey?: AuthenticatedKey;
    trace?: RequestTrace;
    /** The error code of a refusal, read as it is sent. */
    errorCode?: string;
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
 * comes after the 403s (docs/ARCHITECTURE.md).
 */
async function admit(services: Services, op: Operation, request: FastifyRequest, reply: FastifyReply): Promise<Caller> {
  const key = await services.keys.authenticate(request.headers.authorization, request.ip);
  // EXTENSIONS 7: from here on the request is logged, whatever its answer.
  request.loggedKey = key;
  request.trace = new RequestTrace(request.id, new Date(Date.now() - reply.elapsedTime));
  const outcome = await services.rateLimits.rest.consume(key.keyId);
  reply.header('X-RateLimit-Limit', outcome.limit).header('X-RateLimit-Remaining', outcome.remaining);
  requireScope(key, admittingScopes(op));
  requirePlan(key.plan, services.faults);
  if (!outcome.allowed) {
    throw new AppError('rate_limited', `rate limit of ${outcome.limit} requests per minute exceeded`, { retry_after_sec: outcome.retryAfterSec }, {
      headers: { 'Retry-After': String(outcome.retryAfterSec) },
    });
  }
  return key;
}

/**
 * EXTENSIONS 2: a write with an Idempotency-Key claims the key before
 * anything else is checked (so a 400 or 404 is stored and replayed too); a
 * dry run neither claims nor stores one.
 */
async function claimKey(
  services: Services, op: Operation, request: FastifyRequest, parts: RequestParts, dryRun: boolean, asksApproval: boolean,
): Promise<Claim | null> {
  const header = request.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
  if (!isWrite(op) || header === undefined) return null;
  const key = checkIdempotencyKey(header);
  // EXTENSIONS 7: a write that asks for approval performs nothing; its key finds the same approval again (approvals.ts).
  if (dryRun || asksApproval) return null;
  return claimIdempotencyKey(services.db, request.caller!.accountId, key, requestFingerprint(op, parts));
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
    const caller = request.caller!;
    const params = { ...(request.params as object) };
    const query = { ...(request.query as object) };
    const body = request.body === undefined || request.body === null ? {} : request.body;
    const dryRun = dryRunnable && wantsDryRun(request);
    const approvalId = isWrite(op) ? headerValue(request, APPROVAL_HEADER) : undefined;
    const asksApproval = isWrite(op) && !dryRun && approvalId === undefined && caller.writes === 'approval';
    const claim = await claimKey(services, op, request, { params, query, body }, dryRun, asksApproval);
    if (claim && 'replay' in claim) return replay(reply, claim.replay);
    request.idempotentRun = claim?.run;
    if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('validation_failed', 'the body must be a JSON object');
    validateParams(params);
    validateQuery(query);
    validateBody(body);
    // EXTENSIONS 3: a versioned resource's write honours If-Match (checked by execute on the locked row).
    const ifMatch = op.etag && isWrite(op) ? headerValue(request, IF_MATCH_HEADER) : undefined;
    const run = claim?.run;
    // Issue 27: an idempotent write's answer is written with its effect, in its transaction, and those very bytes are sent.
    let stored: StoredAnswer | undefined;
    const answer = noExtras();
    const idempotent = run && { run, answerOf: (result: unknown) => (stored = answerFor(reply, op, result, answer)) };
    const input = { ...body, ...query, ...params };
    if (request.trace) namedResources(request.trace, input);
    const idempotencyKey = asksApproval ? headerValue(request, IDEMPOTENCY_KEY_HEADER) : undefined;
    const result = await execute(services, op, caller, input, { dryRun, ifMatch, idempotent, approvalId, idempotencyKey, trace: request.trace, answer });
    if (result instanceof ApprovalAnswer) return sendApproval(reply, result);
    // A create names what it made (an update's target is in its path already; its answer is not parsed again for this).
    if (op.successStatus === 201 && !dryRun) request.trace?.addResource((dataOf(result) as { id?: unknown } | null)?.id);
    if (stored) return sendStored(reply, stored);
    if (Object.keys(answer.headers).length) reply.headers(answer.headers);
    // The tag If-Match checks (a stored view's own, else the hash of the view), or a read made of stored views' tags.
    const etag = op.etag ? etagOfData(result) : answersWithEtag(op) ? storedAnswerEtag(result) : null;
    if (etag) {
      reply.header(ETAG_HEADER, etag);
      const ifNoneMatch = isWrite(op) ? undefined : headerValue(request, IF_NONE_MATCH_HEADER);
      if (ifNoneMatch !== undefined && ifNoneMatchHits(ifNoneMatch, etag)) return reply.code(304).send();
    }
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
    if (result instanceof JsonText) return sendJsonText(reply, result);
    return result;
  };
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

/** The answer as sent (status, bytes, Location/ETag), stored under the request's idempotency key. */
async function storeAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  const run = request.idempotentRun;
  if (!run) return payload;
  request.idempotentRun = undefined;
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_RESPONSE_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  // A no-op when the answer was stored with the effect; never throws (an error here would answer in Fastify's shape, not ours).
  await run.finish({ status: reply.statusCode, headers, body: Buffer.isBuffer(payload) ? payload.toString('utf8') : String(payload ?? ''), origin: 'rest' });
  return payload;
}

/**
 * A read that is not a versioned resource (a list): its ETag is the hash of
 * the bytes about to be sent, and a poller that already holds them gets a 304
 * with no body (issue 12).
 */
async function tagAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  if (reply.statusCode !== 200 || !(typeof payload === 'string' || Buffer.isBuffer(payload))) return payload;
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
  if (reply.statusCode >= 400 && request.loggedKey && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
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
  const key = request.loggedKey;
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
  services.requestLog.record({
    id: trace.id,
    accountId: key.accountId,
    keyId: key.keyId,
    keyPrefix: key.keyPrefix,
    at: trace.at,
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
    resourceIds: [...trace.resourceIds],
    eventIds: trace.eventIds,
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
      onRequest: async (request, reply) => {
        request.caller = await admit(services, op, request, reply);
      },
      schema: op.produces ? {} : { response: { [status]: serializableSchema(op.output) } },
      handler: operationRoute(services, op),
      onSend: [answersWithEtag(op) && !op.etag ? tagAnswer : storeAnswer, noteErrorCode],
      // A request that ended without sending (the client went away) frees its key.
      onResponse: async (request, reply) => {
        logRequest(services, op, request, reply);
        await request.idempotentRun?.abandon();
      },
    });
  }
  registerPaths(app, routes.map((op) => ({ path: op.path, method: op.method })));
}
