// The courier simulator's memory: parcels, their raw events in each
// courier's own vocabulary, and the operator-set mode of each courier.
import type { NormalizedStatus } from '../adapter.ts';
import type { SimulatedCourier } from '../provider.ts';
import { courierProvider, courierProviders } from '../catalog.ts';

export type SimMode = 'ok' | 'refuse' | 'down';

/** The simulated half of a registered courier; throws for a courier the simulator does not play. */
function simulated(slug: string): SimulatedCourier {
  const simulator = courierProvider(slug)?.simulator;
  if (!simulator) throw new Error(`the simulator does not play ${slug}`);
  return simulator;
}

/** The simulator's demo credentials for a courier (GAPS: an integration enabled without credentials gets them in simulator mode). */
export function demoCredentials(slug: string): Record<string, string> {
  return courierProvider(slug)?.simulator?.demoCredentials ?? {};
}

export interface RawEvent {
  at: string;
  code: string | number;
  label: string;
}

export interface Parcel {
  slug: string;
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
  /** One mode per courier the simulator plays. */
  readonly modes: Record<string, SimMode> = Object.fromEntries(courierProviders().filter((p) => p.simulator).map((p) => [p.slug, 'ok']));
  readonly parcels = new Map<string, Parcel>();

  newTrackingNumber(slug: string): string {
    return simulated(slug).newTrackingNumber();
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
    const own = courierProvider(parcel.slug)!.statuses.find(([c, meaning]) => meaning === status && String(c) === String(code))?.[0];
    const event = { at: new Date().toISOString(), code: own ?? simulated(parcel.slug).usualCodes[status], label: label ?? LABELS[status] };
    parcel.events.push(event);
    return event;
  }
}
