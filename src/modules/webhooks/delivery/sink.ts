// The debug sink (SPEC Debug sink): POST /api/webhooks/sink?id=<webhook id>
// stores what it receives for an active subscription; the operator API lists it.
import crypto from 'node:crypto';
import type { Sql } from '../../../platform/db/db.ts';
import { AppError } from '../../../platform/contract/errors.ts';
import type { PublicRoute } from '../../../platform/operations/public-route.ts';
import { SINK_PATH } from '../subscriptions/url-policy.ts';
import { Type } from 'typebox';
import { Closed, Uuid } from '../../../platform/contract/schema.ts';

export const SINK_MAX_BYTES = 64 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The sink, mounted by the transport layer and listed in the public OpenAPI document (it takes no API key). */
export const sinkRoute: PublicRoute = {
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
  documented: true,
  // Raw text, whatever the content type: the sink keeps the exact bytes a receiver would verify.
  rawBody: true,
  bodyLimit: SINK_MAX_BYTES,
  async handler(services, request) {
    const id = request.query.id;
    if (typeof id !== 'string' || !UUID.test(id)) throw new AppError('validation_failed', 'id must be a webhook subscription id (UUID)');
    const outcome = await services.rateLimits.named('webhook_sink', 120).consume(id);
    if (!outcome.allowed) {
      throw new AppError(
        'rate_limited',
        'the debug sink takes at most 120 deliveries per minute per subscription',
        { retry_after_sec: outcome.retryAfterSec },
        {
          headers: { 'Retry-After': String(outcome.retryAfterSec) },
        },
      );
    }
    const { rows } = await services.db.query<{ account_id: string }>('SELECT account_id FROM webhook_subscriptions WHERE id = $1 AND active', [id]);
    if (!rows[0]) throw new AppError('not_found', 'no active webhook subscription with this id');
    await services.db.query('INSERT INTO webhook_sink_captures (id, account_id, webhook_id, headers, body) VALUES ($1, $2, $3, $4, $5)', [
      crypto.randomUUID(),
      rows[0].account_id,
      id,
      JSON.stringify(request.headers),
      typeof request.body === 'string' ? request.body : '',
    ]);
    return { status: 200, body: { ok: true } };
  },
};

export async function listSinkCaptures(sql: Sql, webhookId: string) {
  const { rows } = await sql.query(
    'SELECT id, headers, body, received_at FROM webhook_sink_captures WHERE webhook_id = $1 ORDER BY received_at DESC, id DESC LIMIT 200',
    [webhookId],
  );
  return rows;
}
