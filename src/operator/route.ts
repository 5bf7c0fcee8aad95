// The operator API's routes (OPERATOR_API.md): declared like public
// operations (schemas + handler), served under /admin/api with the admin
// token, and described by their own OpenAPI document.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TObject, TSchema, Static } from 'typebox';
import { bearerToken } from '../platform/edge/auth.ts';
import { AppError, WWW_AUTHENTICATE } from '../platform/contract/errors.ts';
import type { HttpMethod } from '../platform/operations/operation.ts';
import type { Services } from '../platform/services.ts';
import { compileOptional } from '../platform/contract/validation.ts';
import { JsonText } from '../platform/read-path/index.ts';
import { sendJsonText } from '../transports/json-answer.ts';
import { registerPaths } from '../transports/http-paths.ts';
import { serializableSchema } from '../transports/schema-refs.ts';
import { EVERY_ACCOUNT } from '../platform/db/read-routing.ts';
import { StreamAnswer } from '../platform/operations/stream-answer.ts';

export const OPERATOR_BASE = '/admin/api';

export interface OperatorServices extends Services {
  /** The operator token's SHA-256 (issue 27: requests are checked against the hash, the database keeps no token). */
  adminTokenSha256: Buffer;
}

/** A handler's answer that is a file (a PDF label), sent as such instead of JSON. */
export class FileAnswer {
  readonly type: string;
  readonly filename: string;
  readonly body: Buffer;
  constructor(type: string, filename: string, body: Buffer) {
    this.type = type;
    this.filename = filename;
    this.body = body;
  }
}

export interface AdminRoute {
  name: string;
  method: HttpMethod;
  /** Relative to /admin/api, Fastify style. */
  path: string;
  summary: string;
  description: string;
  tags: string[];
  params?: TObject;
  query?: TObject;
  body?: TObject;
  output: TSchema;
  successStatus?: 200 | 201;
  handler: (services: OperatorServices, input: any) => Promise<unknown>;
}

/** Identity with inference for the handler's input. */
export function adminRoute<P extends TObject | undefined = undefined, B extends TObject | undefined = undefined, O extends TSchema = TSchema>(
  spec: Omit<AdminRoute, 'handler' | 'params' | 'body' | 'output'> & {
    params?: P;
    body?: B;
    output: O;
    handler: (services: OperatorServices, input: (P extends TObject ? Static<P> : {}) & (B extends TObject ? Static<B> : {})) => Promise<Static<O>>;
  },
): AdminRoute {
  return spec;
}

/** The presented token's SHA-256 against the one kept (issue 27: the token itself is stored nowhere), in constant time. */
export function checkAdminToken(request: FastifyRequest, expectedSha256: Buffer): void {
  const token = bearerToken(request.headers.authorization);
  const given = crypto
    .createHash('sha256')
    .update(token ?? '', 'utf8')
    .digest();
  if (!token || !crypto.timingSafeEqual(given, expectedSha256)) {
    throw new AppError('unauthorized', 'missing or wrong operator token', undefined, { headers: { 'WWW-Authenticate': WWW_AUTHENTICATE } });
  }
}

/**
 * The operator token check with the failed-authentication limit (issue 27):
 * a wrong token counts against the client address, and past the limit the
 * answer is 429. The right token is admitted from any address (comparing it
 * costs nothing); a request without a token guesses nothing and is not counted.
 */
export async function checkOperatorToken(request: FastifyRequest, services: OperatorServices): Promise<void> {
  try {
    checkAdminToken(request, services.adminTokenSha256);
  } catch (refusal) {
    if (!request.headers.authorization) throw refusal;
    await services.rateLimits.authFailures.failed(`operator:${request.ip}`, refusal);
  }
}

/**
 * Issue 32, read your writes: an operator's change (a checkout, a seed, a
 * key, an order's status) is seen by the next reads even when read replicas
 * serve them, as a write operation's is (platform/db/read-routing.ts): marked for
 * the account its path names, else for every account (operator changes are few).
 */
async function noteAccountWrite<T>(
  services: OperatorServices,
  route: AdminRoute,
  params: Record<string, unknown>,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } finally {
    if (route.method !== 'GET' && services.reads) {
      await services.reads.noteWrite(route.path.startsWith('/accounts/:id') ? String(params.id) : EVERY_ACCOUNT);
    }
  }
}

export function registerAdminRoutes(app: FastifyInstance, services: OperatorServices, routes: AdminRoute[]): void {
  for (const route of routes) {
    const validateParams = compileOptional(route.params, 'path');
    const validateQuery = compileOptional(route.query, 'query');
    const validateBody = compileOptional(route.body, 'body');
    const status = route.successStatus ?? 200;
    app.route({
      method: route.method,
      url: OPERATOR_BASE + route.path,
      schema: { response: { [status]: serializableSchema(route.output) } },
      onRequest: async (request) => checkOperatorToken(request, services),
      handler: async (request, reply) => {
        const params = { ...(request.params as object) };
        const query = { ...(request.query as object) };
        const body = request.body ?? {};
        if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('validation_failed', 'the body must be a JSON object');
        validateParams(params);
        validateQuery(query);
        validateBody(body);
        const answer = await noteAccountWrite(services, route, params, () => route.handler(services, { ...body, ...query, ...params }));
        // An export run from the console (EXTENSIONS 8): the stream as it is read.
        if (answer instanceof StreamAnswer) return reply.type(answer.contentType).send(answer.body);
        if (answer instanceof FileAnswer) {
          return reply.type(answer.type).header('Content-Disposition', `attachment; filename="${answer.filename}"`).send(answer.body);
        }
        reply.code(status);
        // A public operation's answer written by PostgreSQL (issue 12) is sent as it is.
        if (answer instanceof JsonText) return sendJsonText(reply, answer, services.answerBuffers);
        return answer;
      },
    });
  }
  registerPaths(
    app,
    routes.map((r) => ({ path: OPERATOR_BASE + r.path, method: r.method })),
  );
}
