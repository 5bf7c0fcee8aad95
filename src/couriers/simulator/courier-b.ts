// The simulated courier_b: key + client headers, always HTTP 200 with
// {ok, error}, numeric codes, Unix seconds (see providers/courier-b.ts).
import type { FastifyRequest } from 'fastify';
import { courierB } from '../providers/courier-b.ts';
import type { SimulatedCourier } from './simulated-courier.ts';
import { digits } from './courier-a.ts';

const SLUG = 'courier_b';
const CREDENTIALS = { api_key: 'sim_b_demo_key', client_id: 'sim_b_demo_client' };

export const simulatedCourierB: SimulatedCourier = {
  slug: SLUG,
  demoCredentials: CREDENTIALS,
  statuses: courierB.statuses,
  usualCodes: { pending: 10, picked_up: 20, in_transit: 30, delivered: 40, refused: 50, returned: 60, cancelled: 90 },
  newTrackingNumber: () => `6${digits(11)}`,
  routes(app, base, { state, gate, parcelOf, parcelsOf, lastCode, label }) {
    const bAuth = (req: FastifyRequest) => req.headers['x-api-key'] === CREDENTIALS.api_key && req.headers['x-client-id'] === CREDENTIALS.client_id;
    const bDeny = { status: 200, body: { ok: false, error: 'invalid api key or client id' } };
    const bRefused = () => ({ ok: false, error: 'receiver address rejected by the network' });
    app.post(`${base}/api/waybill/create`, async (req, reply) => {
      const mode = await gate(SLUG, 'create', bAuth, bDeny, req, reply);
      if (!mode) return reply;
      if (mode === 'refuse') return bRefused();
      const body = req.body as any;
      const parcel = await state.register({
        slug: SLUG,
        trackingNumber: state.newTrackingNumber(SLUG),
        reference: String(body?.client_ref ?? ''),
        recipient: [body?.receiver_name, body?.receiver_street, body?.receiver_city, body?.receiver_phone],
        codAmount: Number(body?.cod_cents ?? 0) / 100,
        weightKg: Number(body?.weight_grams ?? 0) / 1000,
        notify: null,
      });
      return { ok: true, waybill: { awb: parcel.trackingNumber, price_cents: 390 + Math.round(parcel.weightKg * 40) } };
    });
    app.delete(`${base}/api/waybill/:awb`, async (req, reply) => {
      const mode = await gate(SLUG, 'cancel', bAuth, bDeny, req, reply);
      if (!mode) return reply;
      if (mode === 'refuse') return { ok: false, error: 'cancellation not possible' };
      const parcel = await parcelOf(SLUG, (req.params as { awb: string }).awb);
      if (!parcel) return { ok: false, error: 'unknown awb' };
      if ([40, 50, 60].includes(Number(lastCode(parcel)))) return { ok: false, error: 'waybill already finished' };
      await state.record(parcel.trackingNumber, 'cancelled');
      return { ok: true };
    });
    app.get(`${base}/api/waybill/:awb/pdf`, async (req, reply) => {
      const mode = await gate(SLUG, 'label', bAuth, bDeny, req, reply);
      if (!mode) return reply;
      if (mode === 'refuse') return { ok: false, error: 'label service unavailable for this waybill' };
      const parcel = await parcelOf(SLUG, (req.params as { awb: string }).awb);
      if (!parcel) return { ok: false, error: 'unknown awb' };
      return reply.type('application/pdf').send(await label(parcel));
    });
    app.get(`${base}/api/tracking`, async (req, reply) => {
      const mode = await gate(SLUG, 'track', bAuth, bDeny, req, reply);
      if (!mode) return reply;
      const awbs = String((req.query as { awb?: string }).awb ?? '')
        .split(',')
        .filter(Boolean);
      return {
        ok: true,
        items: (await parcelsOf(SLUG, awbs)).map((p) => ({
          awb: p.trackingNumber,
          history: p.events.map((e) => ({ ts: Math.floor(Date.parse(e.at) / 1000), code: e.code, text: e.label })),
        })),
      };
    });
  },
};
