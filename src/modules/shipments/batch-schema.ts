// EXTENSIONS 8: the Batch and its items as the API shows them.
import { Type, type Static } from 'typebox';
import { Closed, DateTime, NullableDateTime, NullableUuid, Uuid, ErrorBody } from '../../platform/contract/schema.ts';
import type { CreateShipmentInput } from './create.ts';

export const BATCH_STATES = ['running', 'done', 'cancelled'] as const;
export const ITEM_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const Batch = Closed(
  {
    id: Uuid(),
    state: Type.Unsafe<(typeof BATCH_STATES)[number]>({ type: 'string', enum: [...BATCH_STATES] }),
    total: Type.Integer({ minimum: 1, maximum: 1000 }),
    succeeded: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
    pending: Type.Integer({ minimum: 0, description: 'Items not finished: not started yet, or in flight.' }),
    created_at: DateTime(),
    finished_at: NullableDateTime({ description: 'Null while items are pending or in flight.' }),
  },
  { $id: 'ShipmentBatch' },
);
export type BatchView = Static<typeof Batch>;

/** The error object the single route would have answered: `{code, message, details?}`. */
const ItemError = Type.Unsafe<{ code: string; message: string; details?: unknown } | null>({
  anyOf: [ErrorBody.properties.error, { type: 'null' }],
});

export const BatchItem = Closed(
  {
    index: Type.Integer({ minimum: 0, description: '0-based position in the request.' }),
    order_id: Uuid(),
    status: Type.Unsafe<(typeof ITEM_STATUSES)[number]>({ type: 'string', enum: [...ITEM_STATUSES] }),
    shipment_id: NullableUuid(),
    error: ItemError,
  },
  { $id: 'ShipmentBatchItem' },
);
export type BatchItemView = Static<typeof BatchItem>;

/** One item: exactly the body of POST /api/v1/shipments (only order_id is checked with the envelope). */
export type BatchItemBody = CreateShipmentInput & Record<string, unknown>;
