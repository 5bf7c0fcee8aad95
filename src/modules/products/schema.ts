// SPEC Product and Variant views; GAPS "Inventory and products" field types.
import { Type, type Static } from 'typebox';
import { Closed, Cursor, DateTime, Limit, ListOf, Nullable, NullableDateTime, Uuid } from '../../platform/schema.ts';

export const DELIVERY_TYPES = ['physical', 'digital', 'free'] as const;

export const Variant = Closed(
  {
    id: Uuid(),
    type: Nullable('string'),
    name: Nullable('string'),
    value: Nullable('string'),
    price_delta: Nullable('number'),
    stock_quantity: Nullable('integer'),
    image_url: Nullable('string'),
    position: Nullable('integer'),
  },
  { $id: 'Variant' },
);

const Dimensions = Type.Unsafe<{ l: number; w: number; h: number } | null>({
  type: ['object', 'null'],
  properties: { l: { type: 'number', minimum: 0 }, w: { type: 'number', minimum: 0 }, h: { type: 'number', minimum: 0 } },
  required: ['l', 'w', 'h'],
  additionalProperties: false,
});

export const Product = Closed(
  {
    id: Uuid(),
    name: Type.String(),
    marketing_name: Nullable('string'),
    sku: Nullable('string'),
    price: Type.Number(),
    original_price: Nullable('number'),
    active: Type.Boolean(),
    delivery_type: Type.String({ description: 'physical, digital or free' }),
    offer_type: Nullable('string'),
    description: Nullable('string'),
    images: Type.Array(Type.String()),
    stock_quantity: Nullable('integer', { description: 'null: stock is not tracked.' }),
    block_on_zero_stock: Type.Boolean(),
    low_stock_threshold: Nullable('integer'),
    weight_g: Nullable('integer'),
    dim_cm: Dimensions,
    shipping_short_name: Nullable('string'),
    shipping_category: Nullable('string'),
    catalog_hidden: Type.Boolean(),
    language: Nullable('string'),
    variants: Type.Array(Variant),
    created_at: DateTime(),
    updated_at: NullableDateTime(),
  },
  { $id: 'Product' },
);
export type ProductView = Static<typeof Product>;

export const ProductIdParams = Closed({ id: Uuid({ description: 'Product id.' }) });

export const ListProductsQuery = Closed({
  limit: Type.Optional(Limit()),
  cursor: Type.Optional(Cursor()),
  status: Type.Optional(Type.Unsafe<'active' | 'all'>({ type: 'string', enum: ['active', 'all'], description: 'active (default) or all, including deactivated.' })),
  delivery_type: Type.Optional(Type.Unsafe<'physical' | 'digital'>({ type: 'string', enum: ['physical', 'digital'] })),
  sku: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Exact SKU.' })),
});
export type ListProductsInput = Static<typeof ListProductsQuery>;

const optionalText = (max: number) => Type.Optional(Nullable('string', { maxLength: max }));

/** GAPS: the writable fields and their types; stock, cost, images, files and bundles are not among them. */
export const writableFields = {
  name: Type.String({ minLength: 1, maxLength: 500 }),
  price: Type.Number({ minimum: 0 }),
  sku: optionalText(200),
  marketing_name: optionalText(500),
  description: optionalText(20000),
  offer_type: optionalText(100),
  language: optionalText(20),
  shipping_short_name: optionalText(200),
  shipping_category: optionalText(200),
  original_price: Type.Optional(Nullable('number', { minimum: 0 })),
  active: Type.Optional(Type.Boolean()),
  block_on_zero_stock: Type.Optional(Type.Boolean()),
  catalog_hidden: Type.Optional(Type.Boolean()),
  delivery_type: Type.Optional(Type.Unsafe<(typeof DELIVERY_TYPES)[number]>({ type: 'string', enum: [...DELIVERY_TYPES] })),
  weight_g: Type.Optional(Nullable('integer', { minimum: 0 })),
  low_stock_threshold: Type.Optional(Nullable('integer', { minimum: 0 })),
  dim_cm: Type.Optional(Dimensions),
};

export const CreateProductBody = Closed(writableFields);
export type CreateProductInput = Static<typeof CreateProductBody>;
export const UpdateProductBody = Closed({ ...writableFields, name: Type.Optional(writableFields.name), price: Type.Optional(writableFields.price) });
export type UpdateProductInput = Static<typeof UpdateProductBody>;

export const ProductEnvelope = Closed({ data: Product });
export const ProductList = ListOf(Product);
export const Changes = Type.Record(Type.String(), Type.Unknown(), { description: 'The normalized fields.' });
