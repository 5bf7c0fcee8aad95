// The courier simulator: a real HTTP server speaking the three couriers'
// protocols (see the adapters for each wire format). Mounted under
// /courier-sim in dev and tests, or standalone with `npx merx courier-sim`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CourierSlug, NormalizedStatus } from '../adapter.ts';
import { DEMO_CREDENTIALS, type Parcel, type SimulatorState } from './state.ts';
import { renderLabel } from './label.ts';

/** OPERATOR_API: "down" means the courier does not answer; the request is held until the caller gives up. */
const HOLD_MS = 120_000;

function hold(reply: FastifyReply): void {
  reply.hijack();
  const timer = setTimeout(() => reply.raw.destroy(), HOLD_MS);
  reply.raw.on('close', () => clearTimeout(timer));
}

function label(parcel: Parcel) {
  return renderLabel({
    courier: parcel.slug.replace('_', ' '),
    trackingNumber: parcel.trackingNumber,
    reference: parcel.reference,
    recipient: parcel.recipient,
    codAmount: parcel.codAmount,
    weightKg: parcel.weightKg,
  });
}

/** Sends a courier_c parcel's new event to the notify_url given at creation. */
export async function pushCourierC(parcel: Parcel, event: { at: string; code: string | number; label: string }): Promise<void> {
  if (!parcel.notify?.url) return;
  await fetch(parcel.notify.url, {
    method: 'POST',
    headers: { authorization: `Token ${parcel.notify.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ barcode: parcel.trackingNumber, events: [{ occurred_at: event.at, state: event.code, note: event.label }] }),
    signal: AbortSignal.timeout(10_000),
  });
}

export function registerCourierSimulator(app: FastifyInstance, state: SimulatorState, prefix = '/courier-sim'): void {
  /** Mode and credentials first, as a courier's gateway would; returns false when it already answered. */
  const gate = (slug: CourierSlug, authorised: (req: FastifyRequest) => boolean, deny: { status: number; body: unknown }, req: FastifyRequest, reply: FastifyReply) => {
    if (state.modes[slug] === 'down') {
      hold(reply);
      return false;
    }
    if (!authorised(req)) {
      void reply.code(deny.status).send(deny.body);
      return false;
    }
    return true;
  };
  const parcelOf = (slug: CourierSlug, tracking: string) => {
    const parcel = state.parcels.get(tracking);
    return parcel && parcel.slug === slug ? parcel : null;
  };
  const lastCode = (parcel: Parcel) => parcel.events[parcel.events.length - 1]?.code;

  // courier_a: bearer token, HTTP statuses, camelCase.
  const a = DEMO_CREDENTIALS.courier_a;
  const aAuth = (req: FastifyRequest) => req.headers.authorization === `Bearer ${a.api_token}`;
  const aDeny = { status: 401, body: { error: { code: 'UNAUTHORIZED', message: 'invalid API token' } } };
  app.post(`${prefix}/courier_a/v1/shipments`, async (req, reply) => {
    if (!gate('courier_a', aAuth, aDeny, req, reply)) return reply;
    if (state.modes.courier_a === 'refuse') return reply.code(422).send({ error: { code: 'REJECTED', message: 'address not serviceable' } });
    const body = req.body as any;
    const parcel = state.register({
      slug: 'courier_a',
      trackingNumber: state.newTrackingNumber('courier_a'),
      reference: String(body?.reference ?? ''),
      recipient: [body?.recipient?.fullName, body?.recipient?.address?.line1, body?.recipient?.address?.city, body?.recipient?.phoneNumber],
      codAmount: Number(body?.cashOnDelivery?.amount ?? 0),
      weightKg: Number(body?.parcel?.weightKg ?? 0),
      notify: null,
    });
    return reply.code(201).send({ shipmentNumber: parcel.trackingNumber, price: { amount: 4.5 + parcel.weightKg * 0.5, currency: 'EUR' } });
  });
  app.post(`${prefix}/courier_a/v1/shipments/:n/cancel`, async (req, reply) => {
    if (!gate('courier_a', aAuth, aDeny, req, reply)) return reply;
    if (state.modes.courier_a === 'refuse') return reply.code(409).send({ error: { code: 'NOT_CANCELLABLE', message: 'cancellation refused' } });
    const parcel = parcelOf('courier_a', (req.params as { n: string }).n);
    if (!parcel) return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'unknown shipment' } });
    if (['DELIVERED', 'RETURNED', 'REFUSED'].includes(String(lastCode(parcel)))) {
      return reply.code(409).send({ error: { code: 'NOT_CANCELLABLE', message: 'shipment already finished' } });
    }
    state.record(parcel.trackingNumber, 'cancelled');
    return { cancelled: true };
  });
  app.get(`${prefix}/courier_a/v1/shipments/:n/label`, async (req, reply) => {
    if (!gate('courier_a', aAuth, aDeny, req, reply)) return reply;
    if (state.modes.courier_a === 'refuse') return reply.code(422).send({ error: { code: 'REJECTED', message: 'label unavailable' } });
    const parcel = parcelOf('courier_a', (req.params as { n: string }).n);
    if (!parcel) return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'unknown shipment' } });
    return reply.type('application/pdf').send(await label(parcel));
  });
  app.post(`${prefix}/courier_a/v1/tracking`, async (req, reply) => {
    if (!gate('courier_a', aAuth, aDeny, req, reply)) return reply;
    const numbers: string[] = (req.body as any)?.shipmentNumbers ?? [];
    return {
      results: numbers.map((n) => parcelOf('courier_a', n)).filter((p): p is Parcel => p !== null).map((p) => ({
        shipmentNumber: p.trackingNumber,
        events: p.events.map((e) => ({ timestamp: e.at, statusCode: e.code, description: e.label })),
      })),
    };
  });

  // courier_b: key + client headers, always HTTP 200 with {ok, error}, numeric codes, Unix seconds.
  const b = DEMO_CREDENTIALS.courier_b;
  const bAuth = (req: FastifyRequest) => req.headers['x-api-key'] === b.api_key && req.headers['x-client-id'] === b.client_id;
  const bDeny = { status: 200, body: { ok: false, error: 'invalid api key or client id' } };
  const bRefused = () => ({ ok: false, error: 'receiver address rejected by the network' });
  app.post(`${prefix}/courier_b/api/waybill/create`, async (req, reply) => {
    if (!gate('courier_b', bAuth, bDeny, req, reply)) return reply;
    if (state.modes.courier_b === 'refuse') return bRefused();
    const body = req.body as any;
    const parcel = state.register({
      slug: 'courier_b',
      trackingNumber: state.newTrackingNumber('courier_b'),
      reference: String(body?.client_ref ?? ''),
      recipient: [body?.receiver_name, body?.receiver_street, body?.receiver_city, body?.receiver_phone],
      codAmount: Number(body?.cod_cents ?? 0) / 100,
      weightKg: Number(body?.weight_grams ?? 0) / 1000,
      notify: null,
    });
    return { ok: true, waybill: { awb: parcel.trackingNumber, price_cents: 390 + Math.round(parcel.weightKg * 40) } };
  });
  app.delete(`${prefix}/courier_b/api/waybill/:awb`, async (req, reply) => {
    if (!gate('courier_b', bAuth, bDeny, req, reply)) return reply;
    if (state.modes.courier_b === 'refuse') return { ok: false, error: 'cancellation not possible' };
    const parcel = parcelOf('courier_b', (req.params as { awb: string }).awb);
    if (!parcel) return { ok: false, error: 'unknown awb' };
    if ([40, 50, 60].includes(Number(lastCode(parcel)))) return { ok: false, error: 'waybill already finished' };
    state.record(parcel.trackingNumber, 'cancelled');
    return { ok: true };
  });
  app.get(`${prefix}/courier_b/api/waybill/:awb/pdf`, async (req, reply) => {
    if (!gate('courier_b', bAuth, bDeny, req, reply)) return reply;
    if (state.modes.courier_b === 'refuse') return { ok: false, error: 'label service unavailable for this waybill' };
    const parcel = parcelOf('courier_b', (req.params as { awb: string }).awb);
    if (!parcel) return { ok: false, error: 'unknown awb' };
    return reply.type('application/pdf').send(await label(parcel));
  });
  app.get(`${prefix}/courier_b/api/tracking`, async (req, reply) => {
    if (!gate('courier_b', bAuth, bDeny, req, reply)) return reply;
    const awbs = String((req.query as { awb?: string }).awb ?? '').split(',').filter(Boolean);
    return {
      ok: true,
      items: awbs.map((n) => parcelOf('courier_b', n)).filter((p): p is Parcel => p !== null).map((p) => ({
        awb: p.trackingNumber,
        history: p.events.map((e) => ({ ts: Math.floor(Date.parse(e.at) / 1000), code: e.code, text: e.label })),
      })),
    };
  });

  // courier_c: HTTP Basic, parcels and barcodes, no cancel, pushes to notify_url.
  const c = DEMO_CREDENTIALS.courier_c;
  const cAuth = (req: FastifyRequest) => req.headers.authorization === `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
  const cDeny = { status: 401, body: { message: 'bad credentials' } };
  app.post(`${prefix}/courier_c/parcels`, async (req, reply) => {
    if (!gate('courier_c', cAuth, cDeny, req, reply)) return reply;
    if (state.modes.courier_c === 'refuse') return reply.code(422).send({ message: 'consignee address invalid' });
    const body = req.body as any;
    const parcel = state.register({
      slug: 'courier_c',
      trackingNumber: state.newTrackingNumber('courier_c'),
      reference: String(body?.sender_ref ?? ''),
      recipient: [body?.consignee?.name, body?.consignee?.street, body?.consignee?.town, body?.consignee?.phone],
      codAmount: Number(body?.cash_on_delivery ?? 0),
      weightKg: Number(body?.mass_kg ?? 0),
      notify: body?.notify_url ? { url: String(body.notify_url), token: String(body.notify_token ?? '') } : null,
    });
    return reply.code(201).send({ parcel: { barcode: parcel.trackingNumber, tariff: 3.9 } });
  });
  app.get(`${prefix}/courier_c/parcels/:barcode/sticker`, async (req, reply) => {
    if (!gate('courier_c', cAuth, cDeny, req, reply)) return reply;
    if (state.modes.courier_c === 'refuse') return reply.code(422).send({ message: 'sticker unavailable' });
    const parcel = parcelOf('courier_c', (req.params as { barcode: string }).barcode);
    if (!parcel) return reply.code(404).send({ message: 'unknown parcel' });
    return reply.type('application/pdf').send(await label(parcel));
  });
}

/** OPERATOR_API courier-events: records a raw event; courier_c pushes it at once. */
export async function recordCourierEvent(state: SimulatorState, trackingNumber: string, status: NormalizedStatus, code?: string | number, text?: string) {
  const event = state.record(trackingNumber, status, code, text);
  const parcel = state.parcels.get(trackingNumber);
  if (event && parcel?.slug === 'courier_c') await pushCourierC(parcel, event);
  return event !== null;
}
