// The product operations' inputs and answers around the SPEC Product view
// (declared with its SQL in view.ts); GAPS "Inventory and products" field types.
import { Type, type Static } from 'typebox';
import { Closed, Cursor, Limit, ListOf, Nullable, Uuid } from '../../platform/contract/schema.ts';
import { Dimensions, productView } from './view.ts';

export const DELIVERY_TYPES = ['physical', 'digital', 'free'] as const;

export const Product = productView.schema;
export type ProductView = Static<typeof Product>;

export const ProductIdParams = Closed({ id: Uuid({ description: 'Product id.' }) });

export const ListProductsQuery = Closed({
  limit: Type.Optional(Limit()),
  cursor: Type.Optional(Cursor()),
  status: Type.Optional(Type.Unsafe<'active' | 'all'>({ type: 'string', enum: ['active', 'all'] })),
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
