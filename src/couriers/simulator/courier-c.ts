// The simulated courier_c: HTTP Basic, parcels and barcodes, no cancel,
// pushes to the notify_url given at creation (see providers/courier-c.ts).
import type { FastifyRequest } from 'fastify';
import { courierC } from '../providers/courier-c.ts';
import type { SimulatedCourier } from './simulated-courier.ts';
import { digits } from './courier-a.ts';

const SLUG = 'courier_c';
const CREDENTIALS = { username: 'sim_c_demo', password: 'sim_c_demo_pass' };

export const simulatedCourierC: SimulatedCourier = {
  slug: SLUG,
  demoCredentials: CREDENTIALS,
  statuses: courierC.statuses,
  usualCodes: {
    pending: 'accepted',
    picked_up: 'collected',
    in_transit: 'on_the_way',
    delivered: 'handed_over',
    refused: 'declined_by_recipient',
    returned: 'back_to_sender',
    cancelled: 'voided',
  },
  newTrackingNumber: () => `CC${digits(9)}BG`,
  routes(app, base, { state, gate, parcelOf, label }) {
    const cAuth = (req: FastifyRequest) =>
      req.headers.authorization === `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString('base64')}`;
    const cDeny = { status: 401, body: { message: 'bad credentials' } };
    app.post(`${base}/parcels`, async (req, reply) => {
      const mode = await gate(SLUG, 'create', cAuth, cDeny, req, reply);
      if (!mode) return reply;
      if (mode === 'refuse') return reply.code(422).send({ message: 'consignee address invalid' });
      const body = req.body as any;
      const parcel = await state.register({
        slug: SLUG,
        trackingNumber: state.newTrackingNumber(SLUG),
        reference: String(body?.sender_ref ?? ''),
        recipient: [body?.consignee?.name, body?.consignee?.street, body?.consignee?.town, body?.consignee?.phone],
        codAmount: Number(body?.cash_on_delivery ?? 0),
        weightKg: Number(body?.mass_kg ?? 0),
        notify: body?.notify_url ? { url: String(body.notify_url), token: String(body.notify_token ?? '') } : null,
      });
      return reply.code(201).send({ parcel: { barcode: parcel.trackingNumber, tariff: 3.9 } });
    });
    app.get(`${base}/parcels/:barcode/sticker`, async (req, reply) => {
      const mode = await gate(SLUG, 'label', cAuth, cDeny, req, reply);
      if (!mode) return reply;
      if (mode === 'refuse') return reply.code(422).send({ message: 'sticker unavailable' });
      const parcel = await parcelOf(SLUG, (req.params as { barcode: string }).barcode);
      if (!parcel) return reply.code(404).send({ message: 'unknown parcel' });
      return reply.type('application/pdf').send(await label(parcel));
    });
  },
  /** Sends a parcel's new event to the notify_url given at creation. */
  async push(parcel, event) {
    if (!parcel.notify?.url) return;
    await fetch(parcel.notify.url, {
      method: 'POST',
      headers: { authorization: `Token ${parcel.notify.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ barcode: parcel.trackingNumber, events: [{ occurred_at: event.at, state: event.code, note: event.label }] }),
      signal: AbortSignal.timeout(10_000),
    });
  },
};
