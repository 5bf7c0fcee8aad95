// EXTENSIONS 7: what creating or cancelling a shipment would do, in sentences, for an approval.
import type { OperationContext } from '../../platform/operations/operation.ts';
import { eventEffect } from '../webhooks/approval-descriptions.ts';

export async function createShipmentEffects(
  ctx: OperationContext,
  _input: unknown,
  preview: { courier: string; cod_amount: number },
): Promise<string[]> {
  return [
    `${preview.courier} creates a waybill${preview.cod_amount > 0 ? ` (cash on delivery ${preview.cod_amount})` : ''}`,
    await eventEffect(ctx.db, ctx.caller.accountId, 'shipment.created'),
  ];
}

export async function cancelShipmentEffects(
  ctx: OperationContext,
  _input: unknown,
  preview: { data: { courier: string }; cancellable: boolean },
): Promise<string[]> {
  if (!preview.cancellable) return ['nothing: the shipment cannot be cancelled (the request will be refused)'];
  return [`${preview.data.courier} cancels the waybill`, await eventEffect(ctx.db, ctx.caller.accountId, 'shipment.cancelled')];
}

/** EXTENSIONS 8: a batch asks once; its effects are counted per courier ("courier_a creates 212 waybills"). */
export async function createBatchEffects(
  ctx: OperationContext,
  _input: unknown,
  preview: { items: Array<{ ok: boolean; result: { courier?: string; cod_amount?: number } | null }> },
): Promise<string[]> {
  const perCourier = new Map<string, number>();
  for (const item of preview.items) {
    if (item.ok && item.result?.courier) perCourier.set(item.result.courier, (perCourier.get(item.result.courier) ?? 0) + 1);
  }
  const effects = [...perCourier]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([courier, n]) => `${courier} creates ${n} waybill${n === 1 ? '' : 's'}`);
  const failing = preview.items.filter((item) => !item.ok).length;
  if (failing) effects.push(`${failing} item${failing === 1 ? '' : 's'} would fail as create_shipment refuses them (see the dry run)`);
  if (perCourier.size) effects.push(await eventEffect(ctx.db, ctx.caller.accountId, 'shipment.created'));
  return effects;
}
