// SPEC Product and Variant views (GAPS "Inventory and products" field types),
// declared once (issue 29): each field's SQL and schema side by side. The
// Product view is stored: the row keeps its JSON and ETag, written by the
// database whenever the product or one of its variants changes.
import { Type } from 'typebox';
import { DateTime, Nullable, NullableDateTime, Uuid } from '../../platform/contract/schema.ts';
import { defineView, field } from '../../platform/read-path/index.ts';

export const Dimensions = Type.Unsafe<{ l: number; w: number; h: number } | null>({
  type: ['object', 'null'],
  properties: { l: { type: 'number', minimum: 0 }, w: { type: 'number', minimum: 0 }, h: { type: 'number', minimum: 0 } },
  required: ['l', 'w', 'h'],
  additionalProperties: false,
});

const { value, number, time, document, object, array } = field;

const variant = object(
  {
    id: value('pv.id', Uuid()),
    type: value('pv.type', Nullable('string')),
    name: value('pv.name', Nullable('string')),
    value: value('pv.value', Nullable('string')),
    price_delta: number('pv.price_delta', Nullable('number')),
    stock_quantity: value('pv.stock_quantity', Nullable('integer')),
    image_url: value('pv.image_url', Nullable('string')),
    position: value('pv.position', Nullable('integer')),
  },
  { $id: 'Variant' },
);

export const productView = defineView({
  name: 'product',
  table: 'products',
  alias: 'p',
  schema: { $id: 'Product' },
  stored: {
    sources: [
      {
        table: 'product_variants',
        match: { account_id: 'account_id', id: 'product_id' },
        columns: ['id', 'type', 'name', 'value', 'price_delta', 'stock_quantity', 'image_url', 'position'],
      },
    ],
  },
  fields: {
    id: value('p.id', Uuid()),
    name: value('p.name', Type.String()),
    marketing_name: value('p.marketing_name', Nullable('string')),
    sku: value('p.sku', Nullable('string')),
    price: number('p.price', Type.Number()),
    original_price: number('p.original_price', Nullable('number')),
    active: value('p.active', Type.Boolean()),
    delivery_type: value('p.delivery_type', Type.String({ description: 'physical, digital or free' })),
    offer_type: value('p.offer_type', Nullable('string')),
    description: value('p.description', Nullable('string')),
    images: value('p.images', Type.Array(Type.String())),
    stock_quantity: value('p.stock_quantity', Nullable('integer', { description: 'null: stock is not tracked.' })),
    block_on_zero_stock: value('p.block_on_zero_stock', Type.Boolean()),
    low_stock_threshold: value('p.low_stock_threshold', Nullable('integer')),
    weight_g: value('p.weight_g', Nullable('integer')),
    dim_cm: document('p.dim_cm', Dimensions),
    shipping_short_name: value('p.shipping_short_name', Nullable('string')),
    shipping_category: value('p.shipping_category', Nullable('string')),
    catalog_hidden: value('p.catalog_hidden', Type.Boolean()),
    language: value('p.language', Nullable('string')),
    created_at: time('p.created_at', DateTime()),
    updated_at: time('p.updated_at', NullableDateTime()),
    variants: array(
      variant,
      'product_variants pv WHERE pv.account_id = p.account_id AND pv.product_id = p.id',
      'pv.position NULLS LAST, pv.id',
      Type.Array(variant.schema),
    ),
  },
});
