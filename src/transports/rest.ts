// Registry -> Fastify routes. Knows HTTP, not the domain: it authenticates,
// checks scope, plan and rate limit in SPEC's order, validates, and hands the
// input to the operation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate, requirePlan, requireScope } from '../platform/auth.ts';
import { AppError } from '../platform/errors.ts';
import type { Caller, Operation } from '../platform/operation.ts';
import { compileOptional } from '../platform/validation.ts';
import { execute } from '../platform/execute.ts';
import type { Services } from '../platform/services.ts';
import { registerPaths } from './http-paths.ts';
import { serializableSchema } from './schema-refs.ts';

export const DRY_RUN_HEADER = 'x-merx-dry-run';
const DRY_RUN_VALUES = new Set(['1', 'true', 'yes']);

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
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

/** SPEC Authentication 8 and GAPS General: 401, 403 scope, 403 plan, then 429. */
async function admit(services: Services, op: Operation, request: FastifyRequest, reply: FastifyReply): Promise<Caller> {
  const key = await authenticate(services.db, request.headers.authorization);
  requireScope(key, op.scope);
  requirePlan(key.plan, services.faults);
  const outcome = await services.rateLimits.rest.consume(key.keyId);
  reply.header('X-RateLimit-Limit', outcome.limit).header('X-RateLimit-Remaining', outcome.remaining);
  if (!outcome.allowed) {
    throw new AppError('rate_limited', `rate limit of ${outcome.limit} requests per minute exceeded`, { retry_after_sec: outcome.retryAfterSec }, {
      headers: { 'Retry-After': String(outcome.retryAfterSec) },
    });
  }
  return key;
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
    if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('validation_failed', 'the body must be a JSON object');
    validateParams(params);
    validateQuery(query);
    validateBody(body);
    const dryRun = dryRunnable && wantsDryRun(request);
    const result = await execute(services, op, caller, { ...body, ...query, ...params }, dryRun);
    if (op.produces && !dryRun) {
      const file = result as { body: Buffer; filename: string };
      return reply.type(op.produces).header('Content-Disposition', `attachment; filename="${file.filename}"`).send(file.body);
    }
    // Previews have their own closed shape, assembled by the operation; the route's schema describes the real result.
    if (dryRun) reply.type('application/json; charset=utf-8').serializer(JSON.stringify);
    reply.code(dryRun ? 200 : (op.successStatus ?? 200));
    return result;
  };
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
    });
  }
  registerPaths(app, routes.map((op) => ({ path: op.path, method: op.method })));
}
