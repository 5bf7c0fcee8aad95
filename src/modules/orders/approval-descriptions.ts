// EXTENSIONS 7: what an order update would do, in sentences, for an approval.
import type { OperationContext } from '../../platform/operations/operation.ts';
import { eventEffect } from '../webhooks/approval-descriptions.ts';

interface UpdatePreview {
  changes: Record<string, unknown>;
  status_would_change: boolean;
  would_notify_customer: boolean;
}

const STOCK_BACK: Record<string, string> = {
  cancelled: "the order's reserved stock is released",
  returned: "the order's items go back into stock",
  refunded: "the order's items go back into stock",
};

export async function updateOrderEffects(ctx: OperationContext, _input: unknown, preview: UpdatePreview): Promise<string[]> {
  const accountId = ctx.caller.accountId;
  const effects: string[] = [];
  if (preview.status_would_change) effects.push(await eventEffect(ctx.db, accountId, 'order.status_changed'));
  if (Object.keys(preview.changes).some((field) => field !== 'status')) effects.push(await eventEffect(ctx.db, accountId, 'order.updated'));
  if (preview.would_notify_customer) effects.push('email to the customer');
  const status = preview.changes.status;
  if (typeof status === 'string' && STOCK_BACK[status]) effects.push(STOCK_BACK[status]);
  if (effects.length === 0) effects.push('nothing changes');
  return effects;
}
