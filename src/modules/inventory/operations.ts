// The inventory operations: stock levels and the movement ledger.
import { Type } from 'typebox';
import { defineOperation, type FeatureGate } from '../../platform/operations/operation.ts';
import { AppError } from '../../platform/contract/errors.ts';
import { Closed, Cursor, Limit, ListOf, Nullable, NullableUuid, StrictDate, Uuid } from '../../platform/contract/schema.ts';
import { applyMovement, listMovements, planMovement, type MovementType } from './movements.ts';
import { stockLevels } from './stock.ts';
import { Movement, MOVEMENT_TYPES, StockItem } from './schema.ts';
import { movementEffects } from './approval-descriptions.ts';

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
const TAGS = ['Inventory'];
/** SPEC Inventory: 503 migration_pending where the feature is not enabled on this deployment (execute() enforces it). */
const INVENTORY: FeatureGate = { name: 'inventory', enabled: (config) => config.inventoryEnabled };

export const getStockOp = defineOperation({
  name: 'get_inventory_stock',
  method: 'GET',
  path: '/api/v1/inventory/stock',
  scope: 'inventory:read',
  feature: INVENTORY,
  tags: TAGS,
  summary: 'Stock levels of active physical products',
  description: 'Stock of active physical products (or one) with variants and whether it is low.',
  detail:
    'Stock of every active physical product (or one, with product_id), with its variants, effective low-stock threshold and whether it is low. ' +
    'tracked: false means stock is not tracked for the product.',
  query: Closed({ product_id: Type.Optional(Uuid()) }),
  output: Closed({ data: Type.Array(StockItem), default_threshold: Type.Integer() }),
  fields: { id: 'product_id' },
  annotations: READ,
  handler: async (ctx, { product_id }) => {
    return stockLevels(ctx.db, ctx.caller.accountId, product_id);
  },
});

export const listMovementsOp = defineOperation({
  name: 'list_stock_movements',
  method: 'GET',
  path: '/api/v1/inventory/movements',
  scope: 'inventory:read',
  feature: INVENTORY,
  tags: TAGS,
  summary: 'The stock movement ledger, newest first',
  description: 'The stock ledger: sale, release and return (written by orders), delivery and correction.',
  detail: 'Every stock change: sale, release, return (written by orders), delivery and correction. Filter by product_id, order_id, type, from/to.',
  query: Closed({
    limit: Type.Optional(Limit()),
    cursor: Type.Optional(Cursor()),
    product_id: Type.Optional(Uuid()),
    order_id: Type.Optional(Uuid()),
    type: Type.Optional(Type.Unsafe<MovementType>({ type: 'string', enum: [...MOVEMENT_TYPES] })),
    from: Type.Optional(StrictDate('created_at >= from (inclusive).')),
    to: Type.Optional(StrictDate('created_at <= to (inclusive).')),
  }),
  output: ListOf(Movement),
  fields: { id: 'id' },
  annotations: READ,
  handler: async (ctx, input) => {
    return listMovements(ctx.db, ctx.caller.accountId, input, ctx.cursors);
  },
});

export const recordMovementOp = defineOperation({
  name: 'record_stock_movement',
  method: 'POST',
  path: '/api/v1/inventory/movements',
  scope: 'inventory:write',
  feature: INVENTORY,
  tags: TAGS,
  summary: 'Record a delivery or a stock correction',
  description: 'Records a delivery (qty > 0) or a correction (signed qty); the first starts tracking. Dry run: the preview.',
  detail:
    'type delivery (qty > 0, optional unit_cost updating the weighted average cost) or correction (signed qty; below zero is a 409 negative_stock). ' +
    'The first delivery on an untracked product enables stock tracking (so does a correction: a first stock count). sale, release and return are written by orders only. ' +
    'With variant_id, the variant and the product change by the same qty. Dry run previews, including enables_tracking.',
  body: Closed({
    product_id: Uuid(),
    variant_id: Type.Optional(Uuid()),
    type: Type.Unsafe<'delivery' | 'correction'>({ type: 'string', enum: ['delivery', 'correction'] }),
    qty: Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 }),
    unit_cost: Type.Optional(Type.Number({ minimum: 0 })),
    note: Type.Optional(Type.String({ maxLength: 1000 })),
  }),
  output: Closed({ ok: Type.Literal(true), applied: Type.Integer(), new_cost: Nullable('number') }),
  dryRunOutput: Closed({
    dry_run: Type.Literal(true),
    product_id: Uuid(),
    variant_id: NullableUuid(),
    type: Type.String(),
    qty: Type.Integer(),
    unit_cost: Nullable('number'),
    enables_tracking: Type.Boolean(),
  }),
  successStatus: 201,
  effects: movementEffects,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  handler: async (ctx, input) => {
    if (input.type === 'delivery' && input.qty <= 0) throw new AppError('validation_failed', 'a delivery needs qty > 0');
    if (input.type === 'correction' && input.qty === 0) throw new AppError('validation_failed', 'a correction needs a non-zero qty');
    if (input.type !== 'delivery' && input.unit_cost !== undefined) throw new AppError('validation_failed', 'unit_cost goes with deliveries only');
    const movement = {
      productId: input.product_id,
      variantId: input.variant_id ?? null,
      type: input.type,
      qty: input.qty,
      unitCost: input.unit_cost ?? null,
      note: input.note ?? null,
    };
    const accountId = ctx.caller.accountId;
    if (ctx.dryRun) {
      const plan = await planMovement(ctx.db, accountId, movement, { lock: false });
      return {
        dry_run: true as const,
        product_id: input.product_id,
        variant_id: movement.variantId,
        type: input.type,
        qty: input.qty,
        unit_cost: movement.unitCost,
        enables_tracking: plan.enablesTracking,
      };
    }
    const result = await ctx.db.tx((tx) => applyMovement(tx, accountId, movement));
    return { ok: true as const, applied: input.qty, new_cost: result.newCost };
  },
});

export const inventoryOperations = [getStockOp, listMovementsOp, recordMovementOp];
