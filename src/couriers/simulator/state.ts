// The courier simulator's memory: parcels, their raw events in each
// courier's own vocabulary, and the operator-set mode of each courier it
// plays (the couriers it is given, keyed by slug: simulated-couriers.ts).
import type { NormalizedStatus } from '../adapter.ts';
import type { Parcel, ParcelBook, RawEvent, SimCall, SimMode, SimulatedCourier } from './simulated-courier.ts';

/** OPERATOR_API: the call log keeps each courier's last 1,000 calls. */
const CALLS_KEPT = 1000;

const LABELS: Record<NormalizedStatus, string> = {
  pending: 'Registered', picked_up: 'Picked up from sender', in_transit: 'In transit', delivered: 'Delivered to recipient',
  cancelled: 'Cancelled', refused: 'Refused by recipient', returned: 'Returned to sender',
};

export class SimulatorState implements ParcelBook {
  readonly couriers: ReadonlyMap<string, SimulatedCourier>;
  /** One mode per courier the simulator plays. */
  readonly modes: Record<string, SimMode>;
  readonly parcels = new Map<string, Parcel>();
  /** With `times`: how many more calls get the mode before the courier returns to ok (absent: every call). */
  private readonly remaining = new Map<string, number>();
  private readonly calls = new Map<string, SimCall[]>();

  constructor(couriers: ReadonlyMap<string, SimulatedCourier>) {
    this.couriers = couriers;
    this.modes = Object.fromEntries([...couriers.keys()].map((slug) => [slug, 'ok']));
  }

  /** OPERATOR_API courier-sim mode: `times` limits the mode to that many next calls. */
  setMode(slug: string, mode: SimMode, times?: number): void {
    this.courier(slug);
    this.modes[slug] = mode;
    if (times === undefined || mode === 'ok') this.remaining.delete(slug);
    else this.remaining.set(slug, times);
  }

  /** The mode one call gets; a counted mode is used up by it. */
  takeMode(slug: string): SimMode {
    const mode = this.modes[slug];
    const left = this.remaining.get(slug);
    if (left !== undefined) {
      if (left <= 1) this.setMode(slug, 'ok');
      else this.remaining.set(slug, left - 1);
    }
    return mode;
  }

  /** Logs a call as it arrives; the returned function closes it with the status answered (null: no answer). */
  logCall(slug: string, operation: string): (status: number | null) => void {
    const log = this.calls.get(slug) ?? [];
    this.calls.set(slug, log);
    const started = performance.now();
    const call: SimCall = { at: new Date().toISOString(), operation, status: null, duration_ms: null };
    log.push(call);
    if (log.length > CALLS_KEPT) log.splice(0, log.length - CALLS_KEPT);
    return (status) => {
      if (call.duration_ms !== null) return;
      call.status = status;
      call.duration_ms = Math.round((performance.now() - started) * 10) / 10;
    };
  }

  /** The courier's last 1,000 calls, oldest first. */
  callsOf(slug: string): SimCall[] {
    this.courier(slug);
    return (this.calls.get(slug) ?? []).map((call) => ({ ...call }));
  }

  /** The simulated courier; throws for a courier the simulator does not play. */
  private courier(slug: string): SimulatedCourier {
    const courier = this.couriers.get(slug);
    if (!courier) throw new Error(`the simulator does not play ${slug}`);
    return courier;
  }

  newTrackingNumber(slug: string): string {
    return this.courier(slug).newTrackingNumber();
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
    const courier = this.courier(parcel.slug);
    const own = courier.statuses.find(([c, meaning]) => meaning === status && String(c) === String(code))?.[0];
    const event = { at: new Date().toISOString(), code: own ?? courier.usualCodes[status], label: label ?? LABELS[status] };
    parcel.events.push(event);
    return event;
  }
}

declare module '../../platform/services.ts' {
  interface Services {
    /** The in-process courier simulator (COURIER_MODE=simulator), or null. */
    courierSimulator: SimulatorState | null;
  }
}
