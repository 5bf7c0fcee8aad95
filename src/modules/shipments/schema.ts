// SPEC Shipment and ShipmentSummary views.
import { Type } from 'typebox';
import { Closed, DateTime, Nullable, NullableDateTime, Uuid } from '../../platform/schema.ts';
import { COURIER_SLUGS } from '../../couriers/providers.ts';

/** A registered courier's slug: the enum is the registry's own (live) list. */
export const CourierSlugSchema = Type.Unsafe<string>({ type: 'string', enum: COURIER_SLUGS });

export const SHIPMENT_STATUSES = ['pending', 'picked_up', 'in_transit', 'delivered', 'cancelled', 'refused', 'returned'] as const;
export const ShipmentStatus = Type.Unsafe<(typeof SHIPMENT_STATUSES)[number]>({
  type: 'string',
  enum: [...SHIPMENT_STATUSES],
  description: 'Normalized courier status; raw courier text is in status_events.',
});

const StringOrInteger = Type.Unsafe<string | number | null>({ type: ['string', 'integer', 'null'] });

export const ShipmentSummary = Closed(
  {
    id: Uuid(),
    courier_slug: Nullable('string'),
    tracking_number: Nullable('string'),
    status: ShipmentStatus,
    last_status_label: Nullable('string'),
    last_status_at: NullableDateTime(),
  },
  { $id: 'ShipmentSummary' },
);

export const StatusEvent = Type.Object(
  {
    at: Type.String(),
    code: Type.Unsafe<string | number | null>({ type: ['string', 'integer', 'null'] }),
    label: Nullable('string'),
  },
  { additionalProperties: true, $id: 'StatusEvent', description: 'A raw courier event; extra properties allowed.' },
);

export const Shipment = Closed(
  {
    id: Uuid(),
    order_id: Uuid(),
    courier_slug: Nullable('string'),
    tracking_number: Nullable('string'),
    status: ShipmentStatus,
    last_status_label: Nullable('string'),
    last_status_at: NullableDateTime(),
    status_events: Type.Array(StatusEvent),
    delivery_mode: Nullable('string', { description: 'office or home' }),
    office_id: StringOrInteger,
    recipient_address: Type.Unsafe<object | string | null>({ type: ['object', 'string', 'null'], additionalProperties: true }),
    cod_amount: Nullable('number'),
    shipping_cost: Nullable('number'),
    parcel_weight_g: Nullable('integer'),
    parcel_dim_cm: Type.Unsafe<object | null>({ type: ['object', 'null'], additionalProperties: true }),
    sender_origin: Type.Unsafe<object | null>({ type: ['object', 'null'], additionalProperties: true }),
    shipment_terms: Type.Unsafe<object | null>({ type: ['object', 'null'], additionalProperties: true }),
    created_at: DateTime(),
    updated_at: NullableDateTime(),
  },
  { $id: 'Shipment' },
);
