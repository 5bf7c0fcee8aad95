// EXTENSIONS 6, the webhook operations over attempts: a delivery's attempt
// log and an endpoint's health (computed from its attempts). Declared once,
// exposed on REST, MCP and OpenAPI; the room's operations.ts adds them to its
// list.
import { Type } from 'typebox';
import { defineOperation } from '../../../platform/operations/operation.ts';
import { Closed } from '../../../platform/contract/schema.ts';
import { findSubscription } from '../subscriptions/queries.ts';
import { DeliveryIdParams, WebhookIdParams } from '../schema.ts';
import { Attempt, listAttempts } from './view.ts';
import { Health, readHealth } from './health-view.ts';

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
const TAGS = ['Webhooks'];

export const listDeliveryAttemptsOp = defineOperation({
  name: 'list_delivery_attempts',
  method: 'GET',
  path: '/api/v1/webhook-deliveries/:id/attempts',
  scope: 'webhooks:read',
  tags: TAGS,
  summary: 'List every attempt of a delivery, oldest first',
  description: 'Every attempt of one delivery: when, how long, the headers sent and the answer (or why none came).',
  detail:
    'Every attempt ever made for the delivery, whatever made it (trigger: automatic, retry, recovery, test), kept as long as the delivery: ' +
    'when it started, how long it took, the request headers as sent (signatures included), the answer (status, at most 20 headers of 200 ' +
    'characters, the first 1000 characters of the body) or, when none came, one sentence saying why. A delivery of another account: 404.',
  params: DeliveryIdParams,
  output: Closed({ data: Type.Array(Attempt) }),
  annotations: READ,
  // Issue 32: never from a read replica. Delivery state is written by the engine in the background, after the
  // request that caused it, with no read-your-writes mark and asynchronous commit: a replica may show it late.
  readsFrom: 'primary',
  handler: async (ctx, { id }) => ({ data: await listAttempts(ctx.db, ctx.caller.accountId, id) }),
});

export const getWebhookHealthOp = defineOperation({
  name: 'get_webhook_health',
  method: 'GET',
  path: '/api/v1/webhooks/:id/health',
  scope: 'webhooks:read',
  tags: TAGS,
  summary: "An endpoint's health over the last hour and day",
  description: 'Delivery health over the last hour and day: success rate, latency, failures, pending, dead.',
  detail:
    'From the attempt log of this subscription: per window (last hour, last day) the attempts, how many succeeded (2xx) and failed, the ' +
    'success rate, latency percentiles, and outcomes by status code or failure kind (timeout, connection_error, tls_error, dns_error, ' +
    'policy_refused, not_sent); the failures since the last success, when the last success and failure were, and how many of its ' +
    'deliveries are pending and dead now.',
  params: WebhookIdParams,
  output: Closed({ data: Health }),
  annotations: READ,
  // Issue 32: never from a read replica. Delivery state is written by the engine in the background, after the
  // request that caused it, with no read-your-writes mark and asynchronous commit: a replica may show it late.
  readsFrom: 'primary',
  handler: async (ctx, { id }) => {
    await findSubscription(ctx.db, ctx.caller.accountId, id);
    return { data: await readHealth(ctx.db, ctx.caller.accountId, id) };
  },
});
