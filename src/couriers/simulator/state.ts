// The courier simulator's memory: parcels, their raw events in each
// courier's own vocabulary, and the operator-set mode of each courier.
import crypto from 'node:crypto';
import type { CourierSlug, NormalizedStatus } from '../adapter.ts';
import { COURIER_A_STATUSES } from '../courier-a.ts';
import { COURIER_B_STATUSES } from '../courier-b.ts';
import { COURIER_C_STATES } from '../courier-c.ts';

export type SimMode = 'ok' | 'refuse' | 'down';

/** The simulator's demo credentials: what an integration enabled without credentials gets in simulator mode (GAPS). */
export const DEMO_CREDENTIALS: Record<CourierSlug, Record<string, string>> = {
  courier_a: { api_token: 'sim_a_demo_token' },
  courier_b: { api_key: 'sim_b_demo_key', client_id: 'sim_b_demo_client' },
  courier_c: { username: 'sim_c_demo', password: 'sim_c_demo_pass' },
};

/** How each courier writes a normalised status on the wire. */
export const RAW_CODES: Record<CourierSlug, Record<NormalizedStatus, string | number>> = {
  courier_a: {
    pending: 'REGISTERED', picked_up: 'COLLECTED', in_transit: 'IN_TRANSIT', delivered: 'DELIVERED',
    cancelled: 'CANCELLED', refused: 'REFUSED', returned: 'RETURNED',
  },
  courier_b: { pending: 10, picked_up: 20, in_transit: 30, delivered: 40, refused: 50, returned: 60, cancelled: 90 },
  courier_c: {
    pending: 'accepted', picked_up: 'collected', in_transit: 'on_the_way', delivered: 'handed_over',
    refused: 'declined_by_recipient', returned: 'back_to_sender', cancelled: 'voided',
  },
};

/** Every code each courier uses, with what it means (the adapters map them back the same way). */
const COURIER_CODES: Record<CourierSlug, Array<[string | number, NormalizedStatus]>> = {
  courier_a: Object.entries(COURIER_A_STATUSES),
  courier_b: Object.entries(COURIER_B_STATUSES).map(([c, s]) => [Number(c), s]),
  courier_c: Object.entries(COURIER_C_STATES),
};

export interface RawEvent {
  at: string;
  code: string | number;
  label: string;
}

export interface Parcel {
  slug: CourierSlug;
  trackingNumber: string;
  reference: string;
  recipient: string[];
  codAmount: number;
  weightKg: number;
  events: RawEvent[];
  notify: { url: string; token: string } | null;
}

const LABELS: Record<NormalizedStatus, string> = {
  pending: 'Registered', picked_up: 'Picked up from sender', in_transit: 'In transit', delivered: 'Delivered to recipient',
  cancelled: 'Cancelled', refused: 'Refused by recipient', returned: 'Returned to sender',
};

export class SimulatorState {
  readonly modes: Record<CourierSlug, SimMode> = { courier_a: 'ok', courier_b: 'ok', courier_c: 'ok' };
  readonly parcels = new Map<string, Parcel>();

  newTrackingNumber(slug: CourierSlug): string {
    const digits = (n: number) => Array.from(crypto.randomBytes(n), (b) => String(b % 10)).join('');
    if (slug === 'courier_a') return `A${digits(10)}`;
    if (slug === 'courier_b') return `6${digits(11)}`;
    return `CC${digits(9)}BG`;
  }

  register(parcel: Omit<Parcel, 'events'>): Parcel {
    const stored = { ...parcel, events: [] as RawEvent[] };
    this.parcels.set(parcel.trackingNumber, stored);
    this.record(parcel.trackingNumber, 'pending');
    return stored;
  }

  /**
   * Records a raw event for a waybill in its courier's vocabulary. The code
   * always means `status` to that courier: the caller's `code` when it is one
   * of the courier's own codes for it (courier_a's OUT_FOR_DELIVERY is in
   * transit too), else the courier's usual code, whatever else `code` says.
   * `label` is the courier's free text.
   */
  record(trackingNumber: string, status: NormalizedStatus, code?: string | number, label?: string): RawEvent | null {
    const parcel = this.parcels.get(trackingNumber);
    if (!parcel) return null;
    const own = COURIER_CODES[parcel.slug].find(([c, meaning]) => meaning === status && String(c) === String(code))?.[0];
    const event = { at: new Date().toISOString(), code: own ?? RAW_CODES[parcel.slug][status], label: label ?? LABELS[status] };
    parcel.events.push(event);
    return event;
  }
}
