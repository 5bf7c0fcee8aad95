// The shipment operations: declared once, exposed on REST, MCP and OpenAPI.
import { Type } from 'typebox';
import { defineOperation, type OperationContext } from '../../platform/operations/operation.ts';
import { AppError } from '../../platform/contract/errors.ts';
import { Closed, Nullable, Uuid } from '../../platform/contract/schema.ts';
import type { CourierSlug } from '../../couriers/adapter.ts';
import { getOrder } from '../orders/queries.ts';
import { OrderIdParams } from '../orders/schema.ts';
import { JsonText } from '../../platform/read-path/index.ts';
import { CourierSlugSchema as Courier, Shipment } from './schema.ts';
import { createShipment, planShipment, type ShipmentDeps } from './create.ts';
import { cancelShipment, isCancellable } from './cancel.ts';
import { courierAccountFor } from './integrations.ts';
import { getShipment, getShipmentText, latestShipmentText } from './queries.ts';
import { cancelShipmentEffects, createShipmentEffects } from './approval-descriptions.ts';

const TAGS = ['Shipments'];
const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
const ShipmentIdParams = Closed({ id: Uuid({ description: 'Shipment id.' }) });
const OfficeId = Type.Unsafe<string | number>({ type: ['string', 'integer'] });

const depsOf = (ctx: OperationContext): ShipmentDeps & { notifier: OperationContext['notifier'] } => ({
  db: ctx.db,
  couriers: ctx.couriers,
  notifier: ctx.notifier,
  source: ctx.caller.source,
  failNextCommit: () => {
    if (!ctx.faults?.failNextShipmentCommit) return false;
    ctx.faults.failNextShipmentCommit = false;
    return true;
  },
});

export const getOrderShipmentOp = defineOperation({
  name: 'get_order_shipment',
  method: 'GET',
  path: '/api/v1/orders/:id/shipment',
  scope: 'shipments:read',
  tags: TAGS,
  summary: "Get an order's newest shipment",
  description: 'Returns the newest waybill of the order, or {data: null} when none exists yet.',
  params: OrderIdParams,
  output: Closed({ data: Type.Union([Shipment, Type.Null()]) }),
  // MCP reaches this through get_shipment (by order_id).
  mcp: false,
  mcpVia: 'get_shipment',
  fields: { id: 'id' },
  annotations: READ,
  handler: async (ctx, input) => {
    await getOrder(ctx.db, ctx.caller.accountId, input.id);
    return JsonText.object({ data: await latestShipmentText(ctx.db, ctx.caller.accountId, input.id) });
  },
});

export const createShipmentOp = defineOperation({
  name: 'create_shipment',
  method: 'POST',
  path: '/api/v1/shipments',
  scope: 'shipments:write',
  tags: TAGS,
  summary: 'Create a waybill for an order',
  description:
    'Creates a courier waybill for an order (courier, mode and office from checkout unless given). Dry run: resolves it, calls no courier.',
  detail:
    "Creates a waybill with the order's courier, delivery mode and office from checkout unless overridden. Cash on delivery is the order total " +
    "when payment is cod and not paid; weight is the override, else the products' weights, else 1000 g. An order with a live shipment gives 409 " +
    '(details.shipment); a cancelled, returned, refunded, archived or delivered order gives 409 (details.kind order_status); a courier the account has ' +
    'not enabled gives 400 (details.reason courier_not_enabled); a courier refusal or outage gives 502 courier_error. Orders in new or confirmed move ' +
    'to processing. Dry run resolves everything and calls no courier.',
  body: Closed({
    order_id: Uuid(),
    courier: Type.Optional(Courier),
    delivery_mode: Type.Optional(Type.Unsafe<'office' | 'home'>({ type: 'string', enum: ['office', 'home'] })),
    office_id: Type.Optional(OfficeId),
    weight_g: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    dim_cm: Type.Optional(Type.Record(Type.String(), Type.Number({ minimum: 0 }), { description: '{l, w, h} in cm' })),
  }),
  output: Closed({ data: Shipment }),
  dryRunOutput: Closed({
    dry_run: Type.Literal(true),
    courier: Type.String(),
    delivery_mode: Type.String(),
    office_id: Type.Unsafe<string | number | null>({ type: ['string', 'integer', 'null'] }),
    weight_g: Type.Integer(),
    cod_amount: Type.Number(),
    content_label: Type.String(),
    shipment_terms: Type.Object({}, { additionalProperties: true }),
  }),
  successStatus: 201,
  location: '/api/v1/shipments/:id',
  // Undo on partial failure: a waybill the courier issued whose commit then fails is cancelled or recorded after the rollback.
  ownTransactions: true,
  effects: createShipmentEffects,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (ctx, input) => {
    const accountId = ctx.caller.accountId;
    if (ctx.dryRun) {
      const order = await getOrder(ctx.db, accountId, input.order_id);
      const plan = await planShipment(ctx.db, ctx.couriers, accountId, input, order);
      return {
        dry_run: true as const,
        courier: plan.courier,
        delivery_mode: plan.delivery_mode,
        office_id: plan.office_id,
        weight_g: plan.weight_g,
        cod_amount: plan.cod_amount,
        content_label: plan.content_label,
        shipment_terms: plan.shipment_terms,
      };
    }
    return { data: await createShipment(depsOf(ctx), accountId, input) };
  },
});

export const getShipmentByIdOp = defineOperation({
  name: 'get_shipment_by_id',
  method: 'GET',
  path: '/api/v1/shipments/:id',
  scope: 'shipments:read',
  tags: TAGS,
  summary: 'Get one shipment',
  description: 'Returns a waybill with its normalized status and the raw courier events.',
  params: ShipmentIdParams,
  output: Closed({ data: Shipment }),
  mcp: false,
  mcpVia: 'get_shipment',
  fields: { id: 'id' },
  annotations: READ,
  handler: async (ctx, { id }) => JsonText.object({ data: await getShipmentText(ctx.db, ctx.caller.accountId, id) }),
});

export const getShipmentToolOp = defineOperation({
  name: 'get_shipment',
  method: 'GET',
  path: '/api/v1/shipments/:id',
  scope: 'shipments:read',
  tags: TAGS,
  summary: 'Get a shipment by its id, or the newest shipment of an order',
  description: 'A shipment by id, or the newest of an order by order_id ({data: null} if it has none).',
  detail:
    'Give id (a shipment id) or order_id. By order_id the answer is the newest waybill of the order, or {data: null} when it has none. ' +
    'REST: GET /api/v1/shipments/{id} and GET /api/v1/orders/{id}/shipment.',
  query: Closed({ id: Type.Optional(Uuid({ description: 'Shipment id.' })), order_id: Type.Optional(Uuid({ description: 'Order id.' })) }),
  output: Closed({ data: Type.Union([Shipment, Type.Null()]) }),
  rest: false,
  fields: { id: 'id' },
  annotations: READ,
  handler: async (ctx, { id, order_id }) => {
    if ((id === undefined) === (order_id === undefined)) throw new AppError('validation_failed', 'give exactly one of id and order_id');
    if (id) return JsonText.object({ data: await getShipmentText(ctx.db, ctx.caller.accountId, id) });
    await getOrder(ctx.db, ctx.caller.accountId, order_id!);
    return JsonText.object({ data: await latestShipmentText(ctx.db, ctx.caller.accountId, order_id!) });
  },
});

export const getLabelOp = defineOperation({
  name: 'get_shipment_label',
  method: 'GET',
  path: '/api/v1/shipments/:id/label',
  scope: 'shipments:read',
  tags: TAGS,
  summary: "Download a shipment's label (PDF)",
  description: 'Fetched from the courier on every call, never cached. 502 courier_error when the courier fails. Not an MCP tool (SPEC).',
  params: ShipmentIdParams,
  output: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }),
  produces: 'application/pdf',
  mcp: false,
  annotations: READ,
  handler: async (ctx, { id }) => {
    const shipment = await getShipment(ctx.db, ctx.caller.accountId, id);
    if (!shipment.tracking_number) throw new AppError('not_found', 'this shipment has no waybill number, so no label');
    const slug = shipment.courier_slug as CourierSlug;
    const account = await courierAccountFor(ctx.db, ctx.couriers, ctx.caller.accountId, slug);
    const body = await ctx.couriers.adapter(slug).fetchLabel(account, shipment.tracking_number);
    return { body, filename: `label_${String(shipment.tracking_number).replace(/[^A-Za-z0-9_-]/g, '_')}.pdf` } as never;
  },
});

export const cancelShipmentOp = defineOperation({
  name: 'cancel_shipment',
  method: 'POST',
  path: '/api/v1/shipments/:id/cancel',
  scope: 'shipments:write',
  tags: TAGS,
  summary: 'Cancel a waybill',
  description: 'Cancels a waybill, at the courier if it can, else locally. Dry run: whether it can be cancelled.',
  detail:
    'A courier with a cancel API confirms the cancellation (courier_cancelled and courier_confirmed true; courier_a and courier_b); one ' +
    'without (courier_c) has the waybill cancelled locally with an explanatory note. A cancelled, delivered, refused or returned shipment gives 409. A shipped order goes back ' +
    'to processing when no live shipment remains. Dry run says whether it is cancellable.',
  params: ShipmentIdParams,
  body: Closed({ reason: Type.Optional(Type.String({ maxLength: 500 })) }),
  output: Closed({ data: Shipment, courier_cancelled: Type.Boolean(), courier_confirmed: Type.Boolean(), note: Nullable('string') }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Shipment, cancellable: Type.Boolean() }),
  effects: cancelShipmentEffects,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  handler: async (ctx, { id, reason }) => {
    if (ctx.dryRun) {
      const shipment = await getShipment(ctx.db, ctx.caller.accountId, id);
      return { dry_run: true as const, data: shipment, cancellable: isCancellable(shipment) };
    }
    return cancelShipment(depsOf(ctx), ctx.caller.accountId, id, reason ?? null);
  },
});

export const shipmentOperations = [getOrderShipmentOp, createShipmentOp, getShipmentByIdOp, getShipmentToolOp, getLabelOp, cancelShipmentOp];
