// SPEC Shipment view (declared with its SQL in view.ts), its statuses and the courier slugs.
import { Type } from 'typebox';
import { COURIER_SLUGS } from '../../couriers/catalog.ts';
import { shipmentView } from './view.ts';

export { SHIPMENT_STATUSES } from '../orders/latest-shipment.ts';

/** A registered courier's slug: the enum is the courier catalog's own (live) list. */
export const CourierSlugSchema = Type.Unsafe<string>({ type: 'string', enum: COURIER_SLUGS });

export const Shipment = shipmentView.schema;
