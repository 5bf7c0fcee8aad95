// EXTENSIONS 8: what a batch request is checked for as a whole (the envelope),
// and its dry run: each item's create_shipment dry-run answer or refusal.
import { AppError, toAppError } from '../../platform/contract/errors.ts';
import type { OperationContext } from '../../platform/operations/operation.ts';
import { compileValidator } from '../../platform/contract/validation.ts';
import { createShipmentOp } from './operations.ts';
import type { BatchItemBody } from './batch-schema.ts';

export const MAX_ITEMS = 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The single route's own input check, so an item's refusal is worded as that route words it. */
export const checkItemBody = compileValidator(createShipmentOp.body!, 'body');

const refuse = (detail: string) => new AppError('validation_failed', `the batch's items are not valid: ${detail}`, { detail });

/**
 * 1..1000 items, each an object with a UUID order_id, no order_id twice; the
 * first offending index is named (for a repeat, the later one). Every other
 * problem is the item's own failure, found when it runs.
 */
export function checkEnvelope(items: unknown[]): BatchItemBody[] {
  if (items.length < 1 || items.length > MAX_ITEMS) refuseCount(items.length);
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    if (!item || typeof item !== 'object' || Array.isArray(item)) throw refuse(`items[${index}] is not an object`);
    const orderId = (item as { order_id?: unknown }).order_id;
    if (typeof orderId !== 'string' || !UUID.test(orderId)) throw refuse(`items[${index}].order_id must be a UUID`);
    const first = seen.get(orderId.toLowerCase());
    if (first !== undefined) throw refuse(`items[${index}].order_id repeats items[${first}]`);
    seen.set(orderId.toLowerCase(), index);
  });
  return items as BatchItemBody[];
}

function refuseCount(n: number): never {
  throw refuse(`items has ${n} item${n === 1 ? '' : 's'}; a batch takes 1..${MAX_ITEMS}`);
}

export interface ItemPreview {
  index: number;
  order_id: string;
  ok: boolean;
  result: Record<string, unknown> | null;
  error: ReturnType<AppError['toBody']>['error'] | null;
}

/**
 * Each item through create_shipment's own dry run, in the batch's read-only
 * transaction; a savepoint per item keeps one item's database error from
 * spoiling the rest.
 */
export async function previewItems(ctx: OperationContext, items: BatchItemBody[]): Promise<ItemPreview[]> {
  const previews: ItemPreview[] = [];
  for (const [index, body] of items.entries()) {
    await ctx.db.query('SAVEPOINT batch_item');
    try {
      checkItemBody(body);
      const result = (await createShipmentOp.handler({ ...ctx, dryRun: true }, body)) as Record<string, unknown>;
      previews.push({ index, order_id: body.order_id, ok: true, result, error: null });
    } catch (err) {
      await ctx.db.query('ROLLBACK TO SAVEPOINT batch_item');
      previews.push({ index, order_id: body.order_id, ok: false, result: null, error: toAppError(err).toBody().error });
    }
  }
  return previews;
}
