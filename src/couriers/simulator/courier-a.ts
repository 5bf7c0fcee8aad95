// The simulated courier_a: bearer token, HTTP statuses, camelCase (see
// providers/courier-a.ts for the wire format).
import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { courierA } from '../providers/courier-a.ts';
import type { SimulatedCourier } from './simulated-courier.ts';

const SLUG = 'courier_a';
const CREDENTIALS = { api_token: 'sim_a_demo_token' };

export const simulatedCourierA: SimulatedCourier = {
  slug: SLUG,
  demoCredentials: CREDENTIALS,
  statuses: courierA.statuses,
  usualCodes: {
    pending: 'REGISTERED',
    picked_up: 'COLLECTED',
    in_transit: 'IN_TRANSIT',
    delivered: 'DELIVERED',
    cancelled: 'CANCELLED',
    refused: 'REFUSED',
    returned: 'RETURNED',
  },
  newTrackingNumber: () => `A${digits(10)}`,
  routes(app, base, { state, gate, parcelOf, parcelsOf, lastCode, label }) {
    const aAuth = (req: FastifyRequest) => req.headers.authorization === `Bearer ${CREDENTIALS.api_token}`;
    const aDeny = { status: 401, body: { error: { code: 'UNAUTHORIZED', message: 'invalid API token' } } };
    app.post(`${base}/v1/shipments`, async (req, reply) => {
      const mode = await gate(SLUG, 'create', aAuth, aDeny, req, reply);
      if (!mode) return reply;
      if (mode === 'refuse') return reply.code(422).send({ error: { code: 'REJECTED', message: 'address not serviceable' } });
      const body = req.body as any;
      const parcel = await state.register({
        slug: SLUG,
        trackingNumber: state.newTrackingNumber(SLUG),
        reference: String(body?.reference ?? ''),
        recipient: [body?.recipient?.fullName, body?.recipient?.address?.line1, body?.recipient?.address?.city, body?.recipient?.phoneNumber],
        codAmount: Number(body?.cashOnDelivery?.amount ?? 0),
        weightKg: Number(body?.parcel?.weightKg ?? 0),
        notify: null,
      });
      return reply.code(201).send({ shipmentNumber: parcel.trackingNumber, price: { amount: 4.5 + parcel.weightKg * 0.5, currency: 'EUR' } });
    });
    app.post(`${base}/v1/shipments/:n/cancel`, async (req, reply) => {
      const mode = await gate(SLUG, 'cancel', aAuth, aDeny, req, reply);
      if (!mode) return reply;
      if (mode === 'refuse') return reply.code(409).send({ error: { code: 'NOT_CANCELLABLE', message: 'cancellation refused' } });
      const parcel = await parcelOf(SLUG, (req.params as { n: string }).n);
      if (!parcel) return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'unknown shipment' } });
      if (['DELIVERED', 'RETURNED', 'REFUSED'].includes(String(lastCode(parcel)))) {
        return reply.code(409).send({ error: { code: 'NOT_CANCELLABLE', message: 'shipment already finished' } });
      }
      await state.record(parcel.trackingNumber, 'cancelled');
      return { cancelled: true };
    });
    app.get(`${base}/v1/shipments/:n/label`, async (req, reply) => {
      const mode = await gate(SLUG, 'label', aAuth, aDeny, req, reply);
      if (!mode) return reply;
      if (mode === 'refuse') return reply.code(422).send({ error: { code: 'REJECTED', message: 'label unavailable' } });
      const parcel = await parcelOf(SLUG, (req.params as { n: string }).n);
      if (!parcel) return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'unknown shipment' } });
      return reply.type('application/pdf').send(await label(parcel));
    });
    app.post(`${base}/v1/tracking`, async (req, reply) => {
      const mode = await gate(SLUG, 'track', aAuth, aDeny, req, reply);
      if (!mode) return reply;
      const numbers: string[] = (req.body as any)?.shipmentNumbers ?? [];
      return {
        results: (await parcelsOf(SLUG, numbers)).map((p) => ({
          shipmentNumber: p.trackingNumber,
          events: p.events.map((e) => ({ timestamp: e.at, statusCode: e.code, description: e.label })),
        })),
      };
    });
  },
};

export function digits(n: number): string {
  return Array.from(crypto.randomBytes(n), (b) => String(b % 10)).join('');
}
