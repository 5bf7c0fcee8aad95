// The webhook operations: declared once, exposed on REST, MCP and OpenAPI.
import { Type } from 'typebox';
import { defineOperation, type OperationContext, type Versioned } from '../../platform/operations/operation.ts';
import { Closed, DateTime, Uuid } from '../../platform/contract/schema.ts';
import { emit, SUBSCRIBABLE_EVENTS } from '../../platform/db/outbox.ts';
import { AppError } from '../../platform/contract/errors.ts';
import { etagOf } from '../../platform/contract/etag.ts';
import crypto from 'node:crypto';
import { checkWebhookUrl } from './subscriptions/url-policy.ts';
import { storedWebhookUrl } from './subscriptions/sink-url.ts';
import { getDelivery, getDeliveryText, insertDelivery } from './delivery/deliveries.ts';
import { listDeliveryPage, nextLink } from './delivery/list.ts';
import { getWebhookHealthOp, listDeliveryAttemptsOp } from './attempts/operations.ts';
import { cancelRecoveryOp, getRecoveryOp, recoverDeliveriesOp } from './recovery/operations.ts';
import { getWebhookFlowOp, updateWebhookFlowOp } from './delivery/flow-operations.ts';
import { JsonText } from '../../platform/read-path/index.ts';
import { checkEvents, createSubscription, deleteSubscription, rotateSecret, updateSubscription } from './subscriptions/commands.ts';
import { findSubscription, getSubscription, getSubscriptionText, listSubscriptions } from './subscriptions/queries.ts';
import {
  CreateWebhookBody,
  Delivery,
  DeliveriesQuery,
  DeliveryIdParams,
  RotateSecretBody,
  SecretRotation,
  Subscription,
  UpdateWebhookBody,
  VerifySignatureBody,
  WebhookIdParams,
} from './schema.ts';
import { checkSignature, DIAGNOSES } from './signing/signature-check.ts';

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
const TAGS = ['Webhooks'];

const policyOf = (ctx: OperationContext) => ({ publicBaseUrl: ctx.config.publicBaseUrl, allowHosts: ctx.config.webhookAllowHosts });

/** EXTENSIONS 3: the subscription as GET serves it (never its secret), for ETag and If-Match. */
const subscriptionVersion: Versioned = {
  currentEtag: async (sql, accountId, id, { lock }) => {
    if (lock) await findSubscription(sql, accountId, id, { lock });
    return etagOf(await getSubscription(sql, accountId, id));
  },
};

export const listWebhooksOp = defineOperation({
  name: 'list_webhooks',
  method: 'GET',
  path: '/api/v1/webhooks',
  scope: 'webhooks:read',
  tags: TAGS,
  summary: 'List webhook subscriptions and the subscribable events',
  description: 'Webhook subscriptions (never their secrets) and, in events, the event names one can subscribe to.',
  detail: "Lists the account's webhook subscriptions (never their secrets) and, in `events`, every event name one can subscribe to.",
  output: Closed({ data: Type.Array(Subscription), events: Type.Array(Type.String()) }),
  annotations: READ,
  // Issue 32: from the primary, as the deliveries: the engine deactivates a subscription (a 410) in the background.
  readsFrom: 'primary',
  handler: async (ctx) => JsonText.object({ data: await listSubscriptions(ctx.db, ctx.caller.accountId), events: [...SUBSCRIBABLE_EVENTS] }),
});

export const getWebhookOp = defineOperation({
  name: 'get_webhook',
  method: 'GET',
  path: '/api/v1/webhooks/:id',
  scope: 'webhooks:read',
  tags: TAGS,
  summary: 'Get one webhook subscription',
  description: 'One webhook subscription (never its secret); its version in _meta.etag.',
  detail:
    'Returns one subscription (never its secret) with its ETag; send that ETag as If-Match (MCP: _meta.if_match) on update_webhook ' +
    'so that a change made meanwhile by someone else is refused (412) instead of overwritten.',
  params: WebhookIdParams,
  output: Closed({ data: Subscription }),
  etag: subscriptionVersion,
  annotations: READ,
  // Issue 32: from the primary, as the deliveries: the engine deactivates a subscription (a 410) in the background.
  readsFrom: 'primary',
  handler: async (ctx, { id }) => JsonText.object({ data: await getSubscriptionText(ctx.db, ctx.caller.accountId, id) }),
});

export const createWebhookOp = defineOperation({
  name: 'create_webhook',
  method: 'POST',
  path: '/api/v1/webhooks',
  scope: 'webhooks:write',
  tags: TAGS,
  summary: 'Subscribe an HTTPS endpoint to events',
  description: 'Subscribes a public https URL to events; the answer shows the signing secret once. Dry run: checks, creates nothing.',
  detail:
    'Creates a subscription; the answer carries the signing secret (64 hex characters) once, never again. The url must be https on a public host ' +
    '(details.reason says why one is refused: characters (whitespace or control characters anywhere in it), scheme, credentials, host_blocked, private_ip, self_target, dns_private, dns_failed). ' +
    "The service's own debug sink (`<base>/api/webhooks/sink`) is the exception: give it without `?id=` and the answer's url carries " +
    "the new subscription's id; an id naming another subscription is refused (reason sink_foreign_id, sink_malformed_id or sink_query). " +
    'At most 20 subscriptions per account (409). Deliveries are signed: X-Merx-Signature t=<ts>,v1=<HMAC-SHA256 of "<ts>.<raw body>">. ' +
    'Dry run checks the url and events and returns what would be created.',
  body: CreateWebhookBody,
  output: Closed({ data: Subscription, secret: Type.String({ description: 'The signing secret, shown only here.' }) }),
  dryRunOutput: Closed({
    dry_run: Type.Literal(true),
    data: Closed({
      url: Type.String(),
      events: Type.Array(Type.String()),
      description: Type.Union([Type.String(), Type.Null()]),
      active: Type.Boolean(),
    }),
  }),
  successStatus: 201,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  handler: async (ctx, input) => {
    const events = checkEvents(input.events);
    const id = crypto.randomUUID();
    const url = storedWebhookUrl(input.url, await checkWebhookUrl(input.url, policyOf(ctx)), id);
    if (ctx.dryRun) {
      // The url as given: a debug-sink url gets its id only when the subscription exists (a dry run draws none).
      return { dry_run: true as const, data: { url: input.url, events, description: input.description ?? null, active: true } };
    }
    return ctx.db.tx((tx) => createSubscription(tx, ctx.caller.accountId, { ...input, id, url, events }));
  },
});

export const updateWebhookOp = defineOperation({
  name: 'update_webhook',
  method: 'PATCH',
  path: '/api/v1/webhooks/:id',
  scope: 'webhooks:write',
  tags: TAGS,
  summary: 'Change a webhook subscription',
  description: "Changes a subscription's url, events, description or active. Dry run: the current subscription and the changes.",
  detail:
    "Changes url, events, description or active. A debug-sink url without `?id=` gets this subscription's id; one naming another subscription is refused (400). " +
    'active: true re-activates and clears dead_notified_at, so the next dead delivery emails again. ' +
    'Dry run returns the current subscription and the changes.',
  params: WebhookIdParams,
  body: UpdateWebhookBody,
  output: Closed({ data: Subscription }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Subscription, changes: Type.Record(Type.String(), Type.Unknown()) }),
  etag: subscriptionVersion,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  handler: async (ctx, { id, ...changes }) => {
    if (changes.events) changes.events = checkEvents(changes.events);
    if (changes.url !== undefined) changes.url = storedWebhookUrl(changes.url, await checkWebhookUrl(changes.url, policyOf(ctx)), id);
    if (ctx.dryRun) {
      return JsonText.object({ dry_run: true, data: await getSubscriptionText(ctx.db, ctx.caller.accountId, id), changes });
    }
    return JsonText.object({ data: await ctx.db.tx((tx) => updateSubscription(tx, ctx.caller.accountId, id, changes)) });
  },
});

export const deleteWebhookOp = defineOperation({
  name: 'delete_webhook',
  method: 'DELETE',
  path: '/api/v1/webhooks/:id',
  scope: 'webhooks:write',
  tags: TAGS,
  summary: 'Delete a webhook subscription',
  description: 'Deletes a subscription and its deliveries. Dry run: what would be deleted.',
  detail: 'Deletes the subscription and its deliveries; pending deliveries stop at once. Dry run returns what would be deleted.',
  params: WebhookIdParams,
  output: Closed({ data: Closed({ id: Uuid(), deleted: Type.Literal(true) }) }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Subscription }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  handler: async (ctx, { id }) => {
    if (ctx.dryRun) return JsonText.object({ dry_run: true, data: await getSubscriptionText(ctx.db, ctx.caller.accountId, id) });
    return { data: await ctx.db.tx((tx) => deleteSubscription(tx, ctx.caller.accountId, id)) };
  },
});

export const listWebhookDeliveriesOp = defineOperation({
  name: 'list_webhook_deliveries',
  method: 'GET',
  path: '/api/v1/webhooks/:id/deliveries',
  scope: 'webhooks:read',
  tags: TAGS,
  summary: "List a subscription's deliveries, newest first",
  description: "A subscription's deliveries with status, attempts and last answer, newest first.",
  detail:
    'Each delivery shows its status (pending, delivered, failed, dead), attempts, next attempt, last status code, error and response body (first 1000 characters). ' +
    'Filter by status and event (a subscribable event or test; another gives 400 with details.allowed). When more deliveries exist the answer ' +
    'carries `Link: <...&cursor=...>; rel="next"` (RFC 8288) with the same filters and limit (MCP: `_meta.next_cursor`, passed back as cursor); ' +
    'the last page has none. Every attempt of one delivery: list_delivery_attempts.',
  params: WebhookIdParams,
  query: DeliveriesQuery,
  output: Closed({ data: Type.Array(Delivery) }),
  answerHeaders: { Link: 'The next page: `</api/v1/webhooks/{id}/deliveries?...&cursor=...>; rel="next"`; absent on the last page.' },
  fields: { id: 'id' },
  annotations: READ,
  // Issue 32: never from a read replica. Delivery state is written by the engine in the background, after the
  // request that caused it, with no read-your-writes mark and asynchronous commit: a replica may show it late.
  readsFrom: 'primary',
  handler: async (ctx, { id, limit, status, event, cursor }) => {
    const accountId = ctx.caller.accountId;
    if (event !== undefined && event !== 'test' && !(SUBSCRIBABLE_EVENTS as readonly string[]).includes(event)) {
      throw new AppError('validation_failed', `event must be one of: ${[...SUBSCRIBABLE_EVENTS, 'test'].join(', ')}`, {
        allowed: [...SUBSCRIBABLE_EVENTS, 'test'],
      });
    }
    await findSubscription(ctx.db, accountId, id);
    const filters = { limit: limit ?? 30, status, event, cursor };
    const page = await listDeliveryPage(ctx.db, ctx.cursors.scopedTo(accountId), accountId, id, filters);
    if (page.nextCursor) {
      ctx.answer.headers.link = nextLink(id, filters, page.nextCursor);
      ctx.answer.meta.next_cursor = page.nextCursor;
    }
    return page.answer;
  },
});

export const testWebhookOp = defineOperation({
  name: 'test_webhook',
  method: 'POST',
  path: '/api/v1/webhooks/:id/test',
  scope: 'webhooks:write',
  tags: TAGS,
  summary: 'Send a test event to one subscription',
  description: 'Sends a test event and waits up to 10 s for the first attempt. Dry run: whether it would be sent.',
  detail:
    'Sends a `test` event to this subscription only and waits (up to 10 s) for the first attempt; the answer is that delivery. ' +
    'An inactive subscription gives 409. Limited to 30 per minute per account. Dry run tells whether a test would be sent.',
  params: WebhookIdParams,
  output: Closed({ data: Delivery, event_id: Uuid() }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Subscription, would_send: Type.Boolean() }),
  accountLimit: { name: 'webhook_test', perMinute: 30 },
  // The test delivery is committed before it is sent, so that the sender (another connection) sees it.
  ownTransactions: true,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (ctx, { id }) => {
    const accountId = ctx.caller.accountId;
    if (ctx.dryRun) {
      const subscription = await getSubscription(ctx.db, accountId, id);
      return { dry_run: true as const, data: subscription, would_send: subscription.active };
    }
    const { eventId, deliveryId } = await ctx.db.tx(async (tx) => {
      const subscription = await findSubscription(tx, accountId, id, { lock: true });
      if (!subscription.active) throw new AppError('conflict', 'the subscription is inactive; activate it first');
      const event = await emit(tx, accountId, 'test', { message: 'A test event from Merx.', webhook_id: id });
      return { eventId: event.id, deliveryId: await insertDelivery(tx, accountId, id, event) };
    });
    await ctx.deliveries.attemptFirst(deliveryId, 'test');
    return JsonText.object({ data: await getDeliveryText(ctx.db, accountId, deliveryId), event_id: eventId });
  },
});

export const retryDeliveryOp = defineOperation({
  name: 'retry_webhook_delivery',
  method: 'POST',
  path: '/api/v1/webhook-deliveries/:id/retry',
  scope: 'webhooks:write',
  tags: TAGS,
  summary: 'Retry a delivery now',
  description:
    'Attempts the delivery again at once with the same event id and a fresh timestamp and signature. A delivered delivery gives 409. ' +
    'Limited to 30 per minute per account. Not an MCP tool (SPEC).',
  params: DeliveryIdParams,
  output: Closed({
    data: Delivery,
    ok: Type.Boolean(),
    status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status of the attempt; null when none came back.' }),
  }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Delivery, would_retry: Type.Boolean() }),
  accountLimit: { name: 'webhook_retry', perMinute: 30 },
  // The attempt goes out to the subscriber's endpoint and records its outcome on its own.
  ownTransactions: true,
  mcp: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  handler: async (ctx, { id }) => {
    const delivery = await getDelivery(ctx.db, ctx.caller.accountId, id);
    if (ctx.dryRun) return { dry_run: true as const, data: delivery, would_retry: delivery.status !== 'delivered' };
    if (delivery.status === 'delivered') throw new AppError('conflict', 'this delivery was already delivered');
    const result = await ctx.deliveries.retry(id);
    const code = result.outcome.statusCode;
    return JsonText.object({
      data: await getDeliveryText(ctx.db, ctx.caller.accountId, id),
      ok: code !== null && code >= 200 && code < 300,
      status: code,
    });
  },
});

export const rotateSecretOp = defineOperation({
  name: 'rotate_webhook_secret',
  method: 'POST',
  path: '/api/v1/webhooks/:id/rotate-secret',
  scope: 'webhooks:write',
  tags: TAGS,
  summary: "Rotate a subscription's signing secret without dropping deliveries",
  description: 'Issues a new signing secret, shown once; the old one also signs for a while. Dry run: when it would expire.',
  detail:
    'Issues a new secret, shown once in the answer (also as standard_secret, whsec_..., for Standard Webhooks libraries). Until ' +
    'previous_secret_expires_at (previous_secret_ttl_sec after now, default one day) every delivery is signed with both secrets: two v1 ' +
    'values in X-Merx-Signature (new first) and two entries in webhook-signature, so receivers can switch secrets at leisure. Rotating again ' +
    'while an old secret is still live replaces it. Dry run shows when the replaced secret would expire.',
  params: WebhookIdParams,
  body: RotateSecretBody,
  output: SecretRotation,
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Subscription, previous_secret_expires_at: DateTime() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  handler: async (ctx, { id, previous_secret_ttl_sec: ttl = 86400 }) => {
    const accountId = ctx.caller.accountId;
    if (ctx.dryRun) {
      return JsonText.object({
        dry_run: true,
        data: await getSubscriptionText(ctx.db, accountId, id),
        previous_secret_expires_at: new Date(Date.now() + ttl * 1000).toISOString(),
      });
    }
    return ctx.db.tx((tx) => rotateSecret(tx, accountId, id, ttl));
  },
});

export const verifySignatureOp = defineOperation({
  name: 'verify_webhook_signature',
  method: 'POST',
  path: '/api/v1/webhooks/:id/verify-signature',
  scope: 'webhooks:read',
  tags: TAGS,
  summary: 'Say why a delivery fails signature verification',
  description: 'Says whether a delivery your receiver got verifies, and if not, why; never send your secret.',
  detail:
    'Takes what your receiver saw (headers and the raw body, as text or base64) and says whether it verifies and, if not, why: the first of ' +
    'missing_headers, malformed_signature, timestamp_out_of_tolerance (over 300 s), unknown_delivery, body_modified (the message says whether ' +
    'the bytes still parse to the same JSON: a framework re-serialised the body), signed_with_expired_secret, signature_mismatch, else ok. ' +
    'scheme is merx (X-Merx-* headers), standard (webhook-* headers only) or null. You never send your secret.',
  params: WebhookIdParams,
  body: VerifySignatureBody,
  output: Closed({
    data: Closed({
      valid: Type.Boolean({ description: 'True exactly when diagnosis is ok.' }),
      scheme: Type.Unsafe<'merx' | 'standard' | null>({ type: ['string', 'null'], enum: ['merx', 'standard', null] }),
      diagnosis: Type.Unsafe<(typeof DIAGNOSES)[number]>({ type: 'string', enum: [...DIAGNOSES] }),
      message: Type.String({ description: 'One English sentence for a person.' }),
    }),
  }),
  annotations: READ,
  handler: async (ctx, { id, headers, body, body_base64 }) => {
    if ((body === undefined) === (body_base64 === undefined)) {
      throw new AppError('validation_failed', 'give the raw body as exactly one of body or body_base64', { allowed: ['body', 'body_base64'] });
    }
    const raw = body !== undefined ? Buffer.from(body, 'utf8') : Buffer.from(body_base64!, 'base64');
    return { data: await checkSignature(ctx.db, ctx.caller.accountId, id, { headers, body: raw }) };
  },
});

/** The room's operations, its subfolders' included (attempts, recovery, the flow in delivery). */
export const webhookOperations = [
  listWebhooksOp,
  getWebhookOp,
  createWebhookOp,
  updateWebhookOp,
  deleteWebhookOp,
  listWebhookDeliveriesOp,
  testWebhookOp,
  retryDeliveryOp,
  rotateSecretOp,
  verifySignatureOp,
  listDeliveryAttemptsOp,
  recoverDeliveriesOp,
  getRecoveryOp,
  cancelRecoveryOp,
  getWebhookHealthOp,
  getWebhookFlowOp,
  updateWebhookFlowOp,
];
