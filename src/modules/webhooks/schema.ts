// SPEC Webhook subscription and Webhook delivery views, and the inputs.
import { Type } from 'typebox';
import { Closed, DateTime, Nullable, NullableDateTime, Uuid } from '../../platform/schema.ts';
import { SUBSCRIBABLE_EVENTS } from '../../platform/events.ts';

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
const Events = Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: SUBSCRIBABLE_EVENTS.length, description: `Any of: ${SUBSCRIBABLE_EVENTS.join(', ')}.` });

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
  active: Type.Optional(Type.Boolean({ description: 'true also clears dead_notified_at, so the next death emails again.' })),
});

export const DeliveriesQuery = Closed({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 30, description: 'Page size, 1..200 (default 30).' })),
});
