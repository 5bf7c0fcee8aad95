// The events feed, declared once for REST, MCP and OpenAPI (EXTENSIONS 1).
import { defineOperation } from '../../platform/operations/operation.ts';
import { EventFeedPage, EventsQuery } from './schema.ts';
import { FEED_SCOPES, readFeed, visibleTypes } from './feed.ts';
import { EVENT_RETENTION_DAYS } from './retention.ts';

export const listEventsOp = defineOperation({
  name: 'list_events',
  method: 'GET',
  path: '/api/v1/events',
  // A key with any of the three read scopes may read the feed; it sees the events its scopes cover.
  scope: FEED_SCOPES[0],
  alsoAdmittedBy: FEED_SCOPES.slice(1),
  tags: ['Events'],
  summary: "The account's events, oldest first: reconcile without webhooks",
  description: 'Events as webhooks deliver them, each once in a stable order; follow next_cursor, then poll with it. Kept 30 days.',
  detail:
    'The envelopes webhooks deliver ({id, event, created_at, account_id, api_version, data}, data byte for byte the same), whether or not ' +
    'any subscription exists; test events are not listed. A key sees order.* events with orders:read, shipment.* with shipments:read and ' +
    'inventory.low_stock with inventory:read. Filters: type (comma-separated names), since (created_at >=), order_id (events about that ' +
    "order, its shipments' included). Follow next_cursor from the first page and you see every event exactly once, in a stable order, even " +
    'when events commit concurrently and out of created_at order: a page only holds events no running transaction can still precede. ' +
    'next_cursor stays non-null on the last page: store it and poll with it; a poll with nothing newer returns it unchanged. ' +
    `Events are kept ${EVENT_RETENTION_DAYS} days; an older cursor gives 400 with details.reason cursor_expired.`,
  query: EventsQuery,
  output: EventFeedPage,
  fields: { id: 'id' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  // Issue 32: never from a read replica. A page's fence is the oldest transaction still running on the primary; a
  // replica's snapshot knows only those its replay has reached, and consumers poll right after they write.
  readsFrom: 'primary',
  handler: async (ctx, { limit, cursor, type, since, order_id }) =>
    readFeed(ctx.db, ctx.caller.accountId, ctx.cursors, {
      limit: limit ?? 50,
      cursor,
      types: visibleTypes(ctx.caller.scopes, type),
      since,
      order_id,
    }),
});

export const eventOperations = [listEventsOp];
