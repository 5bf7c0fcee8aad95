// The debug sink (SPEC Debug sink): POST /api/webhooks/sink?id=<webhook id>
// stores what it receives for an active subscription; the operator API lists it.
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';
import type { Limiter } from '../../platform/rate-limit.ts';
import { SINK_PATH } from './url-policy.ts';
import { Type } from 'typebox';
import { Closed, Uuid } from '../../platform/schema.ts';
import { registerPaths } from '../../transports/http-paths.ts';
import type { DescribedRoute } from '../../transports/openapi.ts';

export const SINK_MAX_BYTES = 64 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function registerSink(app: FastifyInstance, deps: { db: Sql; limiter: Limiter }): void {
  app.register(async (scope) => {
    // Raw text, whatever the content type: the sink keeps the exact bytes a receiver would verify.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: SINK_MAX_BYTES }, (_request, body, done) => done(null, body));
    registerPaths(scope, [{ path: SINK_PATH, method: 'POST' }]);
    scope.post(SINK_PATH, { bodyLimit: SINK_MAX_BYTES }, async (request, reply) => {
      const id = (request.query as Record<string, unknown>).id;
      if (typeof id !== 'string' || !UUID.test(id)) throw new AppError('validation_failed', 'id must be a webhook subscription id (UUID)');
      const outcome = await deps.limiter.consume(id);
      if (!outcome.allowed) {
        throw new AppError('rate_limited', 'the debug sink takes at most 120 deliveries per minute per subscription', { retry_after_sec: outcome.retryAfterSec }, {
          headers: { 'Retry-After': String(outcome.retryAfterSec) },
        });
      }
      const { rows } = await deps.db.query<{ account_id: string }>('SELECT account_id FROM webhook_subscriptions WHERE id = $1 AND active', [id]);
      if (!rows[0]) throw new AppError('not_found', 'no active webhook subscription with this id');
      await deps.db.query('INSERT INTO webhook_sink_captures (id, account_id, webhook_id, headers, body) VALUES ($1, $2, $3, $4, $5)', [
        crypto.randomUUID(),
        rows[0].account_id,
        id,
        JSON.stringify(request.headers),
        typeof request.body === 'string' ? request.body : '',
      ]);
      return reply.code(200).send({ ok: true });
    });
  });
}

/** The sink in the public OpenAPI document (it takes no API key). */
export const sinkRoute: DescribedRoute = {
  name: 'webhook_debug_sink',
  method: 'POST',
  path: SINK_PATH,
  summary: 'Debug sink: point a subscription here to capture its deliveries',
  description:
    'Accepts deliveries for an active subscription id only (404 otherwise), stores headers and the raw body (at most 64 KB; 413 beyond), ' +
    'answers 200, and is rate limited (120 per minute per subscription). Needs no API key; the operator API lists what it stored.',
  tags: ['Webhooks'],
  query: Closed({ id: Uuid({ description: 'The webhook subscription id.' }) }),
  output: Closed({ ok: Type.Literal(true) }),
  public: true,
};

export async function listSinkCaptures(sql: Sql, webhookId: string) {
  const { rows } = await sql.query(
    'SELECT id, headers, body, received_at FROM webhook_sink_captures WHERE webhook_id = $1 ORDER BY received_at DESC, id DESC LIMIT 200',
    [webhookId],
  );
  return rows;
}
