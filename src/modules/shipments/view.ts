// SPEC Shipment view, declared once (issue 29): each field's SQL and schema
// side by side. It is stored: the row keeps its JSON and ETag, written by the
// database with every change. Its statuses are declared with the summary an
// order shows of its latest waybill (orders/latest-shipment.ts).
import { Type } from 'typebox';
import { DateTime, Nullable, NullableDateTime, Uuid } from '../../platform/contract/schema.ts';
import { defineView, field } from '../../platform/read-path/index.ts';
import { ShipmentStatus } from '../orders/latest-shipment.ts';

const StringOrInteger = Type.Unsafe<string | number | null>({ type: ['string', 'integer', 'null'] });
const JsonObject = Type.Unsafe<object | null>({ type: ['object', 'null'], additionalProperties: true });

export const StatusEvent = Type.Object(
  {
    at: Type.String(),
    code: Type.Unsafe<string | number | null>({ type: ['string', 'integer', 'null'] }),
    label: Nullable('string'),
  },
  { additionalProperties: true, $id: 'StatusEvent', description: 'A raw courier event; extra properties allowed.' },
);

const { value, number, time, document } = field;

export const shipmentView = defineView({
  name: 'shipment',
  table: 'shipments',
  alias: 's',
  schema: { $id: 'Shipment' },
  stored: {},
  fields: {
    id: value('s.id', Uuid()),
    order_id: value('s.order_id', Uuid()),
    courier_slug: value('s.courier_slug', Nullable('string')),
    tracking_number: value('s.tracking_number', Nullable('string')),
    status: value('s.status', ShipmentStatus),
    last_status_label: value('s.last_status_label', Nullable('string')),
    last_status_at: time('s.last_status_at', NullableDateTime()),
    status_events: document('s.status_events', Type.Array(StatusEvent)),
    delivery_mode: value('s.delivery_mode', Nullable('string', { description: 'office or home' })),
    office_id: value('s.office_id', StringOrInteger),
    recipient_address: document(
      's.recipient_address',
      Type.Unsafe<object | string | null>({ type: ['object', 'string', 'null'], additionalProperties: true }),
    ),
    cod_amount: number('s.cod_amount', Nullable('number')),
    shipping_cost: number('s.shipping_cost', Nullable('number')),
    parcel_weight_g: value('s.parcel_weight_g', Nullable('integer')),
    parcel_dim_cm: document('s.parcel_dim_cm', JsonObject),
    sender_origin: document('s.sender_origin', JsonObject),
    shipment_terms: document('s.shipment_terms', JsonObject),
    created_at: time('s.created_at', DateTime()),
    updated_at: time('s.updated_at', NullableDateTime()),
  },
});
