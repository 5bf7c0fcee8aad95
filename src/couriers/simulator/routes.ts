// The courier simulator: a real HTTP server speaking the protocol of each
// courier it plays (each courier's routes are in its simulator/<slug>.ts).
// Mounted under /courier-sim in dev and tests, or standalone with
// `npx merx courier-sim`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { NormalizedStatus } from '../adapter.ts';
import type { CourierStandIn } from '../adapters.ts';
import type { Parcel, SimulatorKit } from './simulated-courier.ts';
import type { SimulatorState } from './state.ts';
import { renderLabel } from './label.ts';

const PREFIX = '/courier-sim';

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

export function registerCourierSimulator(app: FastifyInstance, state: SimulatorState, prefix = PREFIX): void {
  const kit: SimulatorKit = {
    state,
    async gate(slug, operation, authorised, deny, req: FastifyRequest, reply: FastifyReply) {
      const done = await state.logCall(slug, operation);
      // A held call is closed by the caller giving up: no status.
      reply.raw.on('close', () => done(reply.raw.writableFinished ? reply.raw.statusCode : null));
      const mode = await state.takeMode(slug);
      if (mode === 'down') {
        hold(reply);
        return null;
      }
      if (mode === 'throttle') {
        void reply.code(429).header('Retry-After', '1').send({ error: 'too many requests' });
        return null;
      }
      if (mode === 'error') {
        void reply.code(500).send({ error: 'internal error' });
        return null;
      }
      if (!authorised(req)) {
        void reply.code(deny.status).send(deny.body);
        return null;
      }
      return mode;
    },
    async parcelOf(slug, tracking) {
      const parcel = await state.parcel(tracking);
      return parcel && parcel.slug === slug ? parcel : null;
    },
    async parcelsOf(slug, numbers) {
      return (await state.parcels(numbers)).filter((parcel) => parcel.slug === slug);
    },
    lastCode: (parcel) => parcel.events[parcel.events.length - 1]?.code,
    label,
  };
  for (const [slug, courier] of state.couriers) courier.routes(app, `${prefix}/${slug}`, kit);
}

/** The simulator mounted in the service, as its adapters reach it (adapters.ts): at the service's own origin. */
export function simulatorStandIn(state: SimulatorState): CourierStandIn {
  return {
    baseUrl: (slug, selfOrigin) => (state.couriers.has(slug) ? `${selfOrigin}${PREFIX}/${slug}` : null),
    demoCredentials: (slug) => state.couriers.get(slug)?.demoCredentials ?? {},
  };
}

/** OPERATOR_API courier-events: records a raw event; a pushing courier pushes it at once. */
export async function recordCourierEvent(
  state: SimulatorState,
  trackingNumber: string,
  status: NormalizedStatus,
  code?: string | number,
  text?: string,
) {
  const event = await state.record(trackingNumber, status, code, text);
  const parcel = event && (await state.parcel(trackingNumber));
  const push = parcel && state.couriers.get(parcel.slug)?.push;
  if (event && parcel && push) await push(parcel, event);
  return event !== null;
}
