// The customers room's schemas: the Customer, Segment and Note views, the
// computed segment filters and the inputs of its operations.
import { Type } from 'typebox';
import { Closed, DateTime, Nullable, StrictDate, Uuid } from '../../platform/contract/schema.ts';
import { MAX_MEMBERS_PER_CALL } from './segments.ts';

const Count = () => Type.Optional(Type.Integer({ minimum: 0 }));
export const SegmentFilters = Closed(
  {
    minTotal: Type.Optional(Type.Number()),
    maxTotal: Type.Optional(Type.Number()),
    minOrders: Count(),
    maxOrders: Count(),
    lastOrderBeforeDaysAgo: Type.Optional(Type.Integer({ minimum: 0 })),
    lastOrderAfterDate: Type.Optional(StrictDate()),
    lastOrderBeforeDate: Type.Optional(StrictDate()),
    productId: Type.Optional(Uuid()),
    pageId: Type.Optional(Uuid()),
    inSegment: Type.Optional(Uuid()),
    hasEmail: Type.Optional(Type.Boolean()),
    hasPhone: Type.Optional(Type.Boolean()),
    hasAbandonedCart: Type.Optional(Type.Boolean()),
  },
  {
    $id: 'SegmentFilters',
    // One sentence for all of them: a model reads it in create_segment and update_segment (EXTENSIONS 10, token budgets).
    description: 'All must match; min/maxTotal bound total_spent; inSegment alone with its own id: a membership segment. Unknown keys: 400.',
  },
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
  customers: Type.Array(Closed({ email: Type.Optional(Type.String({ maxLength: 200 })), phone: Type.Optional(Type.String({ maxLength: 200 })) }), {
    minItems: 1,
    maxItems: MAX_MEMBERS_PER_CALL,
    description: 'Each {email} or {phone} (email wins).',
  }),
});
export const SegmentName = Type.String({ minLength: 1, maxLength: 200 });
