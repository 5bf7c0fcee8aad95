// EXTENSIONS 7: what creating or cancelling a shipment would do, in sentences, for an approval.
import type { OperationContext } from '../../platform/operation.ts';
import { eventEffect } from '../webhooks/effects.ts';

export async function createShipmentEffects(ctx: OperationContext, _input: unknown, preview: { courier: string; cod_amount: number }): Promise<string[]> {
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
