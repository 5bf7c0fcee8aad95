// The courier simulator: a real HTTP server speaking each registered
// courier's protocol (each courier's routes are in its simulator/<slug>.ts).
// Mounted under /courier-sim in dev and tests, or standalone with
// `npx merx courier-sim`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { NormalizedStatus } from '../adapter.ts';
import type { SimulatorKit } from '../provider.ts';
import { courierProvider, courierProviders } from '../catalog.ts';
import type { Parcel, SimulatorState } from './state.ts';
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

export function registerCourierSimulator(app: FastifyInstance, state: SimulatorState, prefix = '/courier-sim'): void {
  const kit: SimulatorKit = {
    state,
    gate(slug, authorised, deny, req: FastifyRequest, reply: FastifyReply) {
      if (state.modes[slug] === 'down') {
        hold(reply);
        return false;
      }
      if (!authorised(req)) {
        void reply.code(deny.status).send(deny.body);
        return false;
      }
      return true;
    },
    parcelOf(slug, tracking) {
      const parcel = state.parcels.get(tracking);
      return parcel && parcel.slug === slug ? parcel : null;
    },
    lastCode: (parcel) => parcel.events[parcel.events.length - 1]?.code,
    label,
  };
  for (const provider of courierProviders()) provider.simulator?.routes(app, `${prefix}/${provider.slug}`, kit);
}

/** OPERATOR_API courier-events: records a raw event; a pushing courier pushes it at once. */
export async function recordCourierEvent(state: SimulatorState, trackingNumber: string, status: NormalizedStatus, code?: string | number, text?: string) {
  const event = state.record(trackingNumber, status, code, text);
  const parcel = state.parcels.get(trackingNumber);
  const push = parcel && courierProvider(parcel.slug)?.simulator?.push;
  if (event && parcel && push) await push(parcel, event);
  return event !== null;
}
