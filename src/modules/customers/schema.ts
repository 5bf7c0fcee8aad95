// The customers room's schemas: the Customer, Segment and Note views, the
// computed segment filters and the inputs of its operations.
import { Type } from 'typebox';
import { Closed, DateTime, Nullable, StrictDate, Uuid } from '../../platform/schema.ts';
import { MAX_MEMBERS_PER_CALL } from './segments.ts';

const Count = () => Type.Optional(Type.Integer({ minimum: 0 }));
export const SegmentFilters = Closed(
  {
    minTotal: Type.Optional(Type.Number({ description: 'total_spent >= minTotal' })),
    maxTotal: Type.Optional(Type.Number({ description: 'total_spent <= maxTotal' })),
    minOrders: Count(),
    maxOrders: Count(),
    lastOrderBeforeDaysAgo: Type.Optional(Type.Integer({ minimum: 0, description: 'last order more than N days ago' })),
    lastOrderAfterDate: Type.Optional(StrictDate('last order at or after this date')),
    lastOrderBeforeDate: Type.Optional(StrictDate('last order before this date')),
    productId: Type.Optional(Uuid({ description: 'bought this product (line items or its page)' })),
    pageId: Type.Optional(Uuid({ description: 'ordered from this page' })),
    inSegment: Type.Optional(Uuid({ description: 'member of that segment; {inSegment: own id} alone: membership segment' })),
    hasEmail: Type.Optional(Type.Boolean()),
    hasPhone: Type.Optional(Type.Boolean()),
    hasAbandonedCart: Type.Optional(Type.Boolean()),
  },
  { $id: 'SegmentFilters', description: 'Computed segment filters; unknown keys give 400.' },
);
export const Customer = Closed(
  {
    key: Type.String({ description: 'Lower-cased email, else phone.' }),
    name: Nullable('string'),
    email: Nullable('string'),
    phone: Nullable('string'),
    orders_count: Type.Integer(),
    total_spent: Type.Number(),
    first_order_at: DateTime(),
    last_order_at: DateTime(),
  },
  { $id: 'Customer' },
);

export const Segment = Closed(
  {
    id: Uuid(),
    name: Type.String(),
    filters: Type.Record(Type.String(), Type.Unknown()),
    kind: Type.Unsafe<'membership' | 'computed'>({ type: 'string', enum: ['membership', 'computed'] }),
    customer_count: Type.Integer(),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'Segment' },
);

/** SPEC: a note has customer_key, text, created_at (and its id). Inline in OpenAPI, as it always was. */
export const Note = Closed({ id: Uuid(), customer_key: Type.String(), text: Type.String(), created_at: DateTime() });

export const SegmentIdParams = Closed({ id: Uuid({ description: 'Segment id.' }) });
export const Members = Closed({
  customers: Type.Array(
    Closed({ email: Type.Optional(Type.String({ maxLength: 200 })), phone: Type.Optional(Type.String({ maxLength: 200 })) }),
    { minItems: 1, maxItems: MAX_MEMBERS_PER_CALL, description: `1..${MAX_MEMBERS_PER_CALL} customers, each {email} or {phone} (email wins).` },
  ),
});
export const SegmentName = Type.String({ minLength: 1, maxLength: 200 });
