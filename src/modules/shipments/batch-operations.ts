// EXTENSIONS 8: shipment batches, declared once for REST, MCP and OpenAPI.
// The items run on every instance's batch runner (batch-runner.ts); these
// operations store a batch, show it, cancel it and merge its labels.
import { Type } from 'typebox';
import { defineOperation } from '../../platform/operations/operation.ts';
import { Closed, Cursor, Limit, ListOf, Uuid } from '../../platform/contract/schema.ts';
import { Batch, BatchItem, ITEM_STATUSES, type BatchItemBody } from './batch-schema.ts';
import { announce, cancelBatch, getBatch, insertBatch, listItems } from './batch-store.ts';
import { checkEnvelope, previewItems } from './batch-envelope.ts';
import { createBatchEffects } from './approval-descriptions.ts';
import { batchLabels } from './batch-labels.ts';

// Shipment operations, listed with the single ones in the reference.
const TAGS = ['Shipments'];
const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
const BatchIdParams = Closed({ id: Uuid({ description: 'Shipment batch id.' }) });

export const createShipmentBatchOp = defineOperation({
  name: 'create_shipment_batch',
  method: 'POST',
  path: '/api/v1/shipment-batches',
  scope: 'shipments:write',
  tags: TAGS,
  summary: 'Create waybills for up to 1,000 orders at once',
  description: "Creates waybills for up to 1,000 orders in the background, each as create_shipment would. Dry run: each item's preview or error.",
  detail:
    'Each item is exactly the body of POST /api/v1/shipments and is run exactly as that route runs it (the same checks, courier call, order ' +
    'transition, shipment.created event and errors), in the background, on any instance. Answers 202 at once with the batch running; follow it ' +
    'with get_shipment_batch and list_shipment_batch_items. Only the envelope is checked with the request: 1..1000 items, each an object with a ' +
    'UUID order_id, no order_id twice (400 validation_failed, details.detail naming the first offending index); any other problem is that ' +
    "item's failure. Items start in request order, at most 4 courier calls per courier in flight for one batch; a courier's 429 or 5xx (or a " +
    'refused connection) is tried again up to 3 times with backoff (0.5, 1, 2 s) before the item fails courier_error; a timeout is not (the ' +
    'courier may have made the waybill). At most 2 running batches per account: a third gives 429 rate_limited with details.retry_after_sec. ' +
    "Dry run: each item's create_shipment dry-run answer or error; no courier call, nothing stored. Under a key whose writes wait for " +
    'approval the batch asks once, its effects counted per courier.',
  body: Closed({
    items: Type.Array(
      // Any JSON value is taken here, so that the batch's own check names the first item that is no object (details.detail).
      Type.Unsafe<BatchItemBody>({
        type: ['object', 'array', 'string', 'number', 'boolean', 'null'],
        additionalProperties: true,
        description: 'A create_shipment body.',
      }),
      { description: '1..1000 items.' },
    ),
  }),
  output: Closed({ data: Batch }),
  dryRunOutput: Closed({
    dry_run: Type.Literal(true),
    items: Type.Array(
      Closed({
        index: Type.Integer(),
        order_id: Uuid(),
        ok: Type.Boolean(),
        result: Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'], description: "create_shipment's dry-run answer" }),
        error: BatchItem.properties.error,
      }),
    ),
  }),
  successStatus: 202,
  location: '/api/v1/shipment-batches/:id',
  effects: createBatchEffects,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (ctx, { items }) => {
    const checked = checkEnvelope(items);
    if (ctx.dryRun) return { dry_run: true as const, items: await previewItems(ctx, checked) };
    const id = await ctx.db.tx(async (tx) => {
      const stored = await insertBatch(tx, ctx.caller, checked);
      await announce(tx);
      return stored;
    });
    return { data: await getBatch(ctx.db, ctx.caller.accountId, id) };
  },
});

export const getShipmentBatchOp = defineOperation({
  name: 'get_shipment_batch',
  method: 'GET',
  path: '/api/v1/shipment-batches/:id',
  scope: 'shipments:read',
  tags: TAGS,
  summary: 'Get a shipment batch and its counts',
  description: 'Reads a batch: its state and counts of succeeded, failed and pending items.',
  detail:
    'state running, done or cancelled; succeeded, failed and pending (not started or in flight) counts; finished_at null while items are pending.',
  params: BatchIdParams,
  output: Closed({ data: Batch }),
  // The runner writes items in the background with no read-your-writes mark: counts are read where they are written.
  readsFrom: 'primary',
  annotations: READ,
  handler: async (ctx, { id }) => ({ data: await getBatch(ctx.db, ctx.caller.accountId, id) }),
});

export const listShipmentBatchItemsOp = defineOperation({
  name: 'list_shipment_batch_items',
  method: 'GET',
  path: '/api/v1/shipment-batches/:id/items',
  scope: 'shipments:read',
  tags: TAGS,
  summary: "List a shipment batch's items",
  description: "Lists a batch's items in order, each with its shipment_id or error.",
  detail:
    'In item order. status filters: pending (not started or in flight), succeeded (shipment_id set) or failed (error is the error the single ' +
    'route would have answered). Paged with limit and cursor.',
  params: BatchIdParams,
  query: Closed({
    status: Type.Optional(Type.Unsafe<(typeof ITEM_STATUSES)[number]>({ type: 'string', enum: [...ITEM_STATUSES] })),
    limit: Type.Optional(Limit(50)),
    cursor: Type.Optional(Cursor()),
  }),
  output: ListOf(BatchItem),
  readsFrom: 'primary',
  annotations: READ,
  handler: async (ctx, { id, status, limit, cursor }) =>
    listItems(ctx.db, ctx.cursors.scopedTo(ctx.caller.accountId), ctx.caller.accountId, id, { status, limit: limit ?? 50, cursor }),
});

export const cancelShipmentBatchOp = defineOperation({
  name: 'cancel_shipment_batch',
  method: 'POST',
  path: '/api/v1/shipment-batches/:id/cancel',
  scope: 'shipments:write',
  tags: TAGS,
  summary: 'Cancel a shipment batch',
  description: 'Cancels a batch: items not started fail, items in flight finish. Dry run: the batch as it is.',
  detail:
    'Items not yet started fail with conflict (details.reason batch_cancelled); items in flight finish, so pending in the answer counts only ' +
    'those. Answers the batch with state cancelled; a finished batch is answered unchanged. Waybills already made stay (cancel_shipment ' +
    'cancels one).',
  params: BatchIdParams,
  body: Closed({}),
  output: Closed({ data: Batch }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Batch }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  handler: async (ctx, { id }) => {
    if (ctx.dryRun) return { dry_run: true as const, data: await getBatch(ctx.db, ctx.caller.accountId, id) };
    await ctx.db.tx((tx) => cancelBatch(tx, ctx.caller.accountId, id));
    return { data: await getBatch(ctx.db, ctx.caller.accountId, id) };
  },
});

export const getShipmentBatchLabelsOp = defineOperation({
  name: 'get_shipment_batch_labels',
  method: 'GET',
  path: '/api/v1/shipment-batches/:id/labels',
  scope: 'shipments:read',
  tags: TAGS,
  summary: 'Download every label of a batch as one PDF',
  description:
    "Every succeeded item's label, the same PDF GET /api/v1/shipments/{id}/label gives (fetched from the courier now), its pages unchanged, " +
    'in item order. 409 conflict with details.reason batch_running while items are pending, no_labels when no item succeeded; 502 ' +
    'courier_error when a courier fails a label. Not an MCP tool (SPEC has none for labels).',
  params: BatchIdParams,
  output: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }),
  produces: 'application/pdf',
  mcp: false,
  readsFrom: 'primary',
  annotations: READ,
  handler: async (ctx, { id }) => ({ body: await batchLabels(ctx, id), filename: `batch-${id}.pdf` }) as never,
});

export const shipmentBatchOperations = [
  createShipmentBatchOp,
  getShipmentBatchOp,
  listShipmentBatchItemsOp,
  cancelShipmentBatchOp,
  getShipmentBatchLabelsOp,
];
