// EXTENSIONS 7: what a stock movement would do, in sentences, for an approval.
import type { OperationContext } from '../../platform/operations/operation.ts';

export async function movementEffects(ctx: OperationContext, _input: unknown, preview: { product_id: string; qty: number }): Promise<string[]> {
  const { rows } = await ctx.db.query<{ sku: string | null; name: string }>('SELECT sku, name FROM products WHERE id = $1 AND account_id = $2', [
    preview.product_id,
    ctx.caller.accountId,
  ]);
  const label = rows[0]?.sku ?? rows[0]?.name ?? preview.product_id;
  return [`stock of ${label}: ${preview.qty > 0 ? '+' : ''}${preview.qty}`];
}
