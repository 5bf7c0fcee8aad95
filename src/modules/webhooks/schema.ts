// SPEC Webhook subscription and Webhook delivery views, and the inputs.
import { Type } from 'typebox';
import { Closed, DateTime, Nullable, NullableDateTime, Uuid } from '../../platform/contract/schema.ts';
import { SUBSCRIBABLE_EVENTS } from '../../platform/db/outbox.ts';

export const MAX_SUBSCRIPTIONS = 20;

export const Subscription = Closed(
  {
    id: Uuid(),
    url: Type.String(),
    description: Nullable('string'),
    events: Type.Array(Type.String()),
    active: Type.Boolean(),
    secret_prefix: Type.String({ description: 'The first 8 characters of the secret followed by an ellipsis.' }),
    last_triggered_at: NullableDateTime(),
    last_status_code: Nullable('integer'),
    dead_notified_at: NullableDateTime(),
    created_at: DateTime(),
    updated_at: NullableDateTime(),
  },
  { $id: 'WebhookSubscription' },
);

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'dead'] as const;

export const Delivery = Closed(
  {
    id: Uuid(),
    webhook_id: Uuid(),
    event_id: Uuid(),
    event: Type.String(),
    status: Type.Unsafe<(typeof DELIVERY_STATUSES)[number]>({ type: 'string', enum: [...DELIVERY_STATUSES] }),
    attempt: Type.Integer({ description: 'Attempts made so far.' }),
    next_attempt_at: DateTime({ description: 'While pending: when the next attempt is due.' }),
    last_status_code: Nullable('integer'),
    last_error: Nullable('string'),
    response_body: Nullable('string', { description: 'The last response body, cut to 1000 characters.' }),
    delivered_at: NullableDateTime(),
    created_at: DateTime(),
  },
  { $id: 'WebhookDelivery' },
);

const Url = Type.String({ minLength: 1, maxLength: 2000, description: 'https URL of a public host.' });
const Events = Type.Array(Type.String({ maxLength: 100 }), {
  minItems: 1,
  maxItems: SUBSCRIBABLE_EVENTS.length,
  description: `Any of: ${SUBSCRIBABLE_EVENTS.join(', ')}.`,
});

export const WebhookIdParams = Closed({ id: Uuid({ description: 'Webhook subscription id.' }) });
export const DeliveryIdParams = Closed({ id: Uuid({ description: 'Webhook delivery id.' }) });

export const CreateWebhookBody = Closed({
  url: Url,
  events: Events,
  description: Type.Optional(Nullable('string', { maxLength: 500 })),
});

export const UpdateWebhookBody = Closed({
  url: Type.Optional(Url),
  events: Type.Optional(Events),
  description: Type.Optional(Nullable('string', { maxLength: 500 })),
  active: Type.Optional(Type.Boolean({ description: 'true also clears dead_notified_at.' })),
});

export const DeliveriesQuery = Closed({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 30 })),
  // EXTENSIONS 6: filters and a cursor.
  status: Type.Optional(Type.Unsafe<(typeof DELIVERY_STATUSES)[number]>({ type: 'string', enum: [...DELIVERY_STATUSES] })),
  event: Type.Optional(Type.String({ maxLength: 100, description: 'An event name, or test.' })),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: '_meta.next_cursor of the previous page (REST: from its Link rel="next").' }),
  ),
});

/** EXTENSIONS 4: how long the replaced secret keeps signing, 0..7 days (default 1 day). */
export const RotateSecretBody = Closed({
  previous_secret_ttl_sec: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 604800,
      default: 86400,
      description: 'Seconds the old secret keeps signing (default 86400; 0: none).',
    }),
  ),
});

export const SecretRotation = Closed({
  data: Subscription,
  secret: Type.String({ description: 'The new signing secret (64 hex characters), shown only here.' }),
  standard_secret: Type.String({ description: 'The same secret for Standard Webhooks libraries: whsec_ followed by the base64 of its UTF-8 bytes.' }),
  previous_secret_expires_at: DateTime({
    description: 'Until then deliveries are signed with both secrets (new first); the rotation time itself when the ttl is 0.',
  }),
});

/** EXTENSIONS 5: what a receiver saw. */
export const VerifySignatureBody = Closed({
  headers: Type.Record(Type.String(), Type.String({ maxLength: 4096 }), {
    maxProperties: 200,
    description: 'As received.',
  }),
  body: Type.Optional(Type.String({ description: 'The raw body as text (or body_base64).' })),
  body_base64: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]*={0,2}$', description: 'The raw body, base64.' })),
});

/** EXTENSIONS 9: a subscription's flow settings and state. */
export const Flow = Closed(
  {
    webhook_id: Uuid(),
    paused: Type.Boolean({
      description: 'While true no first, automatic or recovery attempt starts; events still create pending deliveries, and no attempt is spent.',
    }),
    paused_at: NullableDateTime({ description: 'When the pause began; null when not paused.' }),
    rate_per_second: Nullable('integer', {
      description: 'At most this many attempts start per second, across every instance; null: no limit (the default).',
    }),
    circuit_breaker: Type.Boolean({ description: 'Opt-in circuit breaker (default false).' }),
    circuit: Type.Unsafe<'closed' | 'open'>({ type: 'string', enum: ['closed', 'open'] }),
    circuit_opened_at: NullableDateTime({ description: 'Null while the circuit is closed.' }),
    next_probe_at: NullableDateTime({ description: 'Null while the circuit is closed.' }),
    retry_after_until: NullableDateTime({ description: 'No attempt starts before this time (Retry-After of a 429 or 503); null once passed.' }),
    held: Type.Integer({
      description: 'Deliveries due but held (by the pause, the rate, back-pressure or the circuit); not those still waiting for their backoff.',
    }),
  },
  { $id: 'WebhookFlow' },
);

/** The flow's settings a PATCH takes (any of them; others give 400 with details.allowed). */
export const UpdateFlowBody = Closed({
  paused: Type.Optional(Type.Boolean({ description: 'true pauses; false resumes (held deliveries start at once, oldest event first).' })),
  rate_per_second: Type.Optional(Nullable('integer', { minimum: 1, maximum: 1000 })),
  circuit_breaker: Type.Optional(Type.Boolean()),
});
