// Writing the catalog. Stock is not writable here: it moves only through
// inventory movements (SPEC Products).
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import { getProductText } from './queries.ts';
import type { JsonText } from '../../platform/read-path/index.ts';
import type { CreateProductInput, ProductView, UpdateProductInput } from './schema.ts';

const DEFAULTS = { active: true, block_on_zero_stock: false, catalog_hidden: false, delivery_type: 'physical' };
const NULLABLE_FIELDS = [
  'sku',
  'marketing_name',
  'description',
  'offer_type',
  'language',
  'shipping_short_name',
  'shipping_category',
  'original_price',
  'weight_g',
  'low_stock_threshold',
  'dim_cm',
] as const;

/** Prices are kept in cents (numeric(12, 2)); previews show what will be stored. */
const cents = (value: unknown) => (typeof value === 'number' ? Math.round(value * 100) / 100 : value);

function normalizeField(field: string, value: unknown): unknown {
  if (field === 'sku' && typeof value === 'string') return value.trim() || null;
  if (field === 'price' || field === 'original_price') return cents(value);
  return value;
}

/** The record a create would write, with defaults filled in (the dry-run preview's `changes`). */
export function normalizedNewProduct(input: CreateProductInput): Record<string, unknown> {
  const record: Record<string, unknown> = { ...DEFAULTS, ...input };
  for (const field of NULLABLE_FIELDS) record[field] ??= null;
  for (const field of Object.keys(record)) record[field] = normalizeField(field, record[field]);
  return record;
}

/** The fields a PATCH would change against the current product. */
export function productChanges(current: ProductView, input: UpdateProductInput): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input)) {
    const normalized = normalizeField(field, value);
    if (JSON.stringify(normalized) !== JSON.stringify((current as Record<string, unknown>)[field])) changes[field] = normalized;
  }
  return changes;
}

const column = (field: string, value: unknown) => (field === 'dim_cm' && value !== null ? JSON.stringify(value) : value);

/** Creates the product; answers its stored view. */
export async function createProduct(tx: Sql, accountId: string, input: CreateProductInput): Promise<JsonText> {
  const record = normalizedNewProduct(input);
  const fields = Object.keys(record);
  const id = crypto.randomUUID();
  await tx.query(`INSERT INTO products (id, account_id, ${fields.join(', ')}) VALUES ($1, $2, ${fields.map((_, i) => `$${i + 3}`).join(', ')})`, [
    id,
    accountId,
    ...fields.map((f) => column(f, record[f])),
  ]);
  return getProductText(tx, accountId, id);
}

/** Applies the changes; answers the product's stored view. */
export async function updateProduct(tx: Sql, accountId: string, productId: string, changes: Record<string, unknown>): Promise<JsonText> {
  const fields = Object.keys(changes);
  if (fields.length) {
    await tx.query(
      `UPDATE products SET ${fields.map((f, i) => `${f} = $${i + 3}`).join(', ')}, updated_at = now() WHERE account_id = $1 AND id = $2`,
      [accountId, productId, ...fields.map((f) => column(f, changes[f]))],
    );
  }
  return getProductText(tx, accountId, productId);
}

export interface ProductInput {
  name: string;
  price: number;
  sku?: string | null;
  delivery_type?: 'physical' | 'digital' | 'free';
  weight_g?: number | null;
  stock_quantity?: number | null;
  block_on_zero_stock?: boolean;
  low_stock_threshold?: number | null;
  variants?: Array<{
    type?: string | null;
    name?: string | null;
    value?: string | null;
    price_delta?: number | null;
    stock_quantity?: number | null;
  }>;
}

/**
 * A catalog record as the operator's storefront creates it, with its
 * variants. Stock starts untracked (null) or at 0: what it starts with is
 * recorded as inventory movements (inventory's recordInitialStock), so the
 * ledger explains every unit.
 */
export async function insertProduct(tx: Sql, accountId: string, input: ProductInput) {
  const id = crypto.randomUUID();
  await tx.query(
    `INSERT INTO products (id, account_id, name, price, sku, delivery_type, weight_g, stock_quantity, block_on_zero_stock, low_stock_threshold)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      id,
      accountId,
      input.name,
      input.price,
      input.sku ?? null,
      input.delivery_type ?? 'physical',
      input.weight_g ?? null,
      input.stock_quantity == null ? null : 0,
      input.block_on_zero_stock ?? false,
      input.low_stock_threshold ?? null,
    ],
  );
  const variants = [];
  for (const [position, v] of (input.variants ?? []).entries()) {
    const variantId = crypto.randomUUID();
    await tx.query(
      `INSERT INTO product_variants (id, account_id, product_id, type, name, value, price_delta, stock_quantity, position)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        variantId,
        accountId,
        id,
        v.type ?? null,
        v.name ?? null,
        v.value ?? null,
        v.price_delta ?? null,
        v.stock_quantity == null ? null : 0,
        position,
      ],
    );
    variants.push({ id: variantId, ...v, position });
  }
  return { id, name: input.name, sku: input.sku ?? null, price: input.price, delivery_type: input.delivery_type ?? 'physical', variants };
}
