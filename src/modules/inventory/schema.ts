// The inventory room's schemas: stock levels and the movement ledger.
import { Type } from 'typebox';
import { Closed, DateTime, Nullable, NullableUuid, Uuid } from '../../platform/contract/schema.ts';
import type { MovementType } from './movements.ts';

export const MOVEMENT_TYPES = ['sale', 'release', 'return', 'delivery', 'correction'] as const;

export const StockItem = Closed(
  {
    product_id: Uuid(),
    name: Type.String(),
    sku: Nullable('string'),
    tracked: Type.Boolean({ description: 'false: stock is not tracked (stock_quantity shows 0).' }),
    stock_quantity: Type.Integer(),
    low_stock_threshold: Nullable('integer'),
    effective_threshold: Type.Integer({ description: "low_stock_threshold, else the account's default_threshold." }),
    low: Type.Boolean(),
    block_on_zero_stock: Type.Boolean(),
    variants: Type.Array(
      Closed({ id: Uuid(), name: Nullable('string'), value: Nullable('string'), stock_quantity: Type.Integer(), tracked: Type.Boolean() }),
    ),
  },
  { $id: 'StockItem' },
);

export const Movement = Closed(
  {
    id: Uuid(),
    product_id: Uuid(),
    variant_id: NullableUuid(),
    order_id: NullableUuid(),
    type: Type.Unsafe<MovementType>({ type: 'string', enum: [...MOVEMENT_TYPES] }),
    qty: Type.Integer({ description: 'Signed.' }),
    note: Nullable('string'),
    created_at: DateTime(),
  },
  { $id: 'StockMovement' },
);
