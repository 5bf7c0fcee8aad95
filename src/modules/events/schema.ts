// EXTENSIONS 1, the events feed: the same envelopes webhooks deliver.
import { Type } from 'typebox';
import { Closed, DateTime, Limit, Nullable, StrictDate, Uuid } from '../../platform/contract/schema.ts';
import { SUBSCRIBABLE_EVENTS } from '../../platform/db/outbox.ts';

export const Envelope = Closed(
  {
    id: Uuid({ description: 'The event id: the same id a webhook delivery of this event carries (X-Merx-Event-Id, webhook-id).' }),
    event: Type.String({ description: `One of ${SUBSCRIBABLE_EVENTS.join(', ')}.` }),
    created_at: DateTime({ description: 'When the event happened.' }),
    account_id: Uuid(),
    api_version: Type.String({ description: 'Currently 2026-09-01.' }),
    data: Type.Object({}, { additionalProperties: true, description: 'Event-specific, byte for byte what webhooks deliver (SPEC Events).' }),
  },
  { $id: 'EventEnvelope' },
);

export const EventsQuery = Closed({
  limit: Type.Optional(Limit(50)),
  // An export's cursor (EXTENSIONS 8) carries its snapshot's running transactions: longer than a list's.
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 8192,
      description: "Opaque cursor: the previous page's `next_cursor`, or an export's `Merx-Events-Cursor`.",
    }),
  ),
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Event names, comma-separated.' })),
  since: Type.Optional(StrictDate('created_at >= since.')),
  order_id: Type.Optional(Uuid({ description: "Only events about this order, its shipments' events included." })),
});

export const EventFeedPage = Closed({
  data: Type.Array(Envelope),
  has_more: Type.Boolean(),
  next_cursor: Nullable('string', {
    description:
      'Where the next poll starts. Non-null once the feed has moved past at least one event, even when has_more is false: store it and poll ' +
      'with it for newer events; a poll with nothing newer gives it back unchanged. Null only on a first page with no events.',
  }),
});
