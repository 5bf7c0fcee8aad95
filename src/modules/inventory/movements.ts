// The movement ledger. A movement and the stock level it changes are written
// in one transaction under the product's row lock, so concurrent movements
// never lose an update and the ledger always sums to the stock.
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import { AppError, notFound } from '../../platform/contract/errors.ts';
import { parseStrictDate } from '../../platform/contract/dates.ts';
import { sqlParameters } from '../../platform/contract/paging.ts';
import { writeProductStock, writeVariantStock } from '../products/stock-levels.ts';
import { isoTime, jsonObject, type JsonView, readPage, type Filter, type JsonText } from '../../platform/read-path/index.ts';
import type { CursorSeal } from '../../platform/contract/cursor-seal.ts';

export type MovementType = 'sale' | 'release' | 'return' | 'delivery' | 'correction';

export interface MovementInput {
  productId: string;
  variantId?: string | null;
  type: MovementType;
  qty: number;
  unitCost?: number | null;
  note?: string | null;
  orderId?: string | null;
}

export interface MovementPlan {
  tracked: boolean;
  enablesTracking: boolean;
  newStock: number;
  newVariantStock: number | null;
  newCost: number | null;
}

/** GAPS: weighted average cost; with no prior stock or cost, the delivery's unit cost. */
export function weightedAverageCost(oldQty: number, oldCost: number | null, qty: number, unitCost: number): number {
  // Costs are kept to 4 decimals (numeric(14, 4)): answer what is stored.
  const round = (value: number) => Math.round(value * 10000) / 10000;
  if (oldQty <= 0 || oldCost === null) return round(unitCost);
  return round((oldQty * oldCost + qty * unitCost) / (oldQty + qty));
}

/** What a movement would do; `lock` takes the row locks a real write needs (not possible in a dry run). */
export async function planMovement(sql: Sql, accountId: string, m: MovementInput, options: { lock: boolean }): Promise<MovementPlan> {
  const lock = options.lock ? 'FOR UPDATE' : '';
  const { rows } = await sql.query<{ stock_quantity: number | null; avg_cost: number | null }>(
    `SELECT stock_quantity, avg_cost FROM products WHERE account_id = $1 AND id = $2 ${lock}`,
    [accountId, m.productId],
  );
  const product = rows[0];
  if (!product) throw notFound('product');
  let variantStock: number | null = null;
  if (m.variantId) {
    const { rows: variants } = await sql.query<{ stock_quantity: number | null }>(
      `SELECT stock_quantity FROM product_variants WHERE account_id = $1 AND product_id = $2 AND id = $3 ${lock}`,
      [accountId, m.productId, m.variantId],
    );
    if (!variants[0]) throw new AppError('validation_failed', 'variant_id is not a variant of that product');
    variantStock = variants[0].stock_quantity ?? 0;
  }
  const tracked = product.stock_quantity !== null;
  const newStock = (product.stock_quantity ?? 0) + m.qty;
  const newVariantStock = variantStock === null ? null : variantStock + m.qty;
  // A correction may not take stock below zero; one that moves negative stock toward zero is fine.
  if (m.type === 'correction' && m.qty < 0 && (newStock < 0 || (newVariantStock !== null && newVariantStock < 0))) {
    throw new AppError('conflict', `this correction would take stock below zero (to ${Math.min(newStock, newVariantStock ?? newStock)})`, {
      kind: 'negative_stock',
    });
  }
  const newCost =
    m.type === 'delivery' && m.unitCost != null
      ? weightedAverageCost(product.stock_quantity ?? 0, product.avg_cost, m.qty, m.unitCost)
      : product.avg_cost;
  return { tracked, enablesTracking: !tracked && (m.type === 'delivery' || m.type === 'correction'), newStock, newVariantStock, newCost };
}

/** Writes one movement and the stock it changes. Call inside a transaction. */
export async function applyMovement(tx: Sql, accountId: string, m: MovementInput): Promise<MovementPlan & { id: string }> {
  const plan = await planMovement(tx, accountId, m, { lock: true });
  await writeProductStock(tx, accountId, m.productId, plan.newStock, plan.newCost);
  if (m.variantId) await writeVariantStock(tx, accountId, m.variantId, plan.newVariantStock);
  const id = crypto.randomUUID();
  await tx.query(
    `INSERT INTO stock_movements (id, account_id, product_id, variant_id, order_id, type, qty, unit_cost, note)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [id, accountId, m.productId, m.variantId ?? null, m.orderId ?? null, m.type, m.qty, m.unitCost ?? null, m.note ?? null],
  );
  return { ...plan, id };
}

/**
 * The stock a new catalog record starts with (products' insertProduct), as
 * corrections noted 'initial stock': each variant's, then the product's rest.
 */
export async function recordInitialStock(
  tx: Sql,
  accountId: string,
  product: { id: string; stock_quantity?: number | null; variants: Array<{ id: string; stock_quantity?: number | null }> },
): Promise<void> {
  for (const variant of product.variants) {
    if (variant.stock_quantity) {
      await applyMovement(tx, accountId, {
        productId: product.id,
        variantId: variant.id,
        type: 'correction',
        qty: variant.stock_quantity,
        note: 'initial stock',
      });
    }
  }
  const rest = (product.stock_quantity ?? 0) - product.variants.reduce((sum, v) => sum + (v.stock_quantity ?? 0), 0);
  if (product.stock_quantity != null && rest !== 0) {
    await applyMovement(tx, accountId, { productId: product.id, type: 'correction', qty: rest, note: 'initial stock' });
  }
}

export interface ListMovementsInput {
  limit?: number;
  cursor?: string;
  product_id?: string;
  order_id?: string;
  type?: MovementType;
  from?: string;
  to?: string;
}

/** SPEC Stock movement view, written by PostgreSQL (issue 12). */
export const MOVEMENT_VIEW: JsonView = {
  from: 'stock_movements m',
  alias: 'm',
  json: jsonObject({
    id: 'm.id',
    product_id: 'm.product_id',
    variant_id: 'm.variant_id',
    order_id: 'm.order_id',
    type: 'm.type',
    qty: 'm.qty',
    note: 'm.note',
    created_at: isoTime('m.created_at'),
  }),
};

export function listMovements(sql: Sql, accountId: string, input: ListMovementsInput, cursors: CursorSeal): Promise<JsonText> {
  return readPage(sql, MOVEMENT_VIEW, movementListFilter(accountId, input), {
    limit: input.limit ?? 50,
    cursor: input.cursor,
    seal: cursors.scopedTo(accountId),
  });
}

/** The ledger list's filters (its page and export's), newest first on (created_at, id). */
export function movementListFilter(accountId: string, input: Omit<ListMovementsInput, 'limit' | 'cursor'>): Filter {
  const { values, bind } = sqlParameters(accountId);
  const where = ['m.account_id = $1'];
  if (input.product_id) where.push(`m.product_id = ${bind(input.product_id)}`);
  if (input.order_id) where.push(`m.order_id = ${bind(input.order_id)}`);
  if (input.type) where.push(`m.type = ${bind(input.type)}`);
  if (input.from) where.push(`m.created_at >= ${bind(parseStrictDate('from', input.from, 'start'))}`);
  if (input.to) where.push(`m.created_at <= ${bind(parseStrictDate('to', input.to, 'end'))}`);
  return { where, values, bind };
}
