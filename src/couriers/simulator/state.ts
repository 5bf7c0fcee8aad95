// The courier simulator: the couriers it plays (simulated-couriers.ts, keyed
// by slug), over a store of their parcels, raw events in each courier's own
// vocabulary, operator-set modes and call log (store.ts).
import type { NormalizedStatus } from '../adapter.ts';
import type { Parcel, ParcelBook, RawEvent, SimCall, SimMode, SimulatedCourier } from './simulated-courier.ts';
import type { SimulatorStore } from './store.ts';

const LABELS: Record<NormalizedStatus, string> = {
  pending: 'Registered',
  picked_up: 'Picked up from sender',
  in_transit: 'In transit',
  delivered: 'Delivered to recipient',
  cancelled: 'Cancelled',
  refused: 'Refused by recipient',
  returned: 'Returned to sender',
};

export class SimulatorState implements ParcelBook {
  readonly couriers: ReadonlyMap<string, SimulatedCourier>;
  private readonly store: SimulatorStore;

  constructor(couriers: ReadonlyMap<string, SimulatedCourier>, store: SimulatorStore) {
    this.couriers = couriers;
    this.store = store;
  }

  /** Whether the simulator plays this courier. */
  plays(slug: string): boolean {
    return this.couriers.has(slug);
  }

  /** OPERATOR_API courier-sim mode: `times` limits the mode to that many next calls. */
  async setMode(slug: string, mode: SimMode, times?: number): Promise<void> {
    this.courier(slug);
    await this.store.setMode(slug, mode, times);
  }

  /** The mode one call gets; a counted mode is used up by it. */
  takeMode(slug: string): Promise<SimMode> {
    return this.store.takeMode(slug);
  }

  modeOf(slug: string): Promise<SimMode> {
    this.courier(slug);
    return this.store.modeOf(slug);
  }

  /** Logs a call as it arrives; the returned function closes it (once) with the status answered (null: no answer). */
  async logCall(slug: string, operation: string): Promise<(status: number | null) => void> {
    const started = performance.now();
    const call: SimCall = { at: new Date().toISOString(), operation, status: null, duration_ms: null };
    const close = await this.store.openCall(slug, call);
    let closed = false;
    return (status) => {
      if (closed) return;
      closed = true;
      close(status, Math.round((performance.now() - started) * 10) / 10);
    };
  }

  /** The courier's last 1,000 calls, oldest first. */
  callsOf(slug: string): Promise<SimCall[]> {
    this.courier(slug);
    return this.store.calls(slug);
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

  async register(parcel: Omit<Parcel, 'events'>): Promise<Parcel> {
    const stored = { ...parcel, events: [this.event(parcel.slug, 'pending')] };
    await this.store.putParcel(stored);
    return stored;
  }

  async parcel(trackingNumber: string): Promise<Parcel | null> {
    return (await this.store.parcels([trackingNumber]))[0] ?? null;
  }

  parcels(trackingNumbers: string[]): Promise<Parcel[]> {
    return this.store.parcels(trackingNumbers);
  }

  /** Every waybill number issued, oldest first. */
  trackingNumbers(): Promise<string[]> {
    return this.store.trackingNumbers();
  }

  /** Replaces the courier's record of a parcel (what a courier may change on its side between two calls). */
  replaceParcel(parcel: Parcel): Promise<void> {
    return this.store.putParcel(parcel);
  }

  forgetParcel(trackingNumber: string): Promise<void> {
    return this.store.forgetParcel(trackingNumber);
  }

  /**
   * Records a raw event for a waybill in its courier's vocabulary; null when
   * the courier never issued it.
   */
  async record(trackingNumber: string, status: NormalizedStatus, code?: string | number, label?: string): Promise<RawEvent | null> {
    const parcel = await this.parcel(trackingNumber);
    if (!parcel) return null;
    const event = this.event(parcel.slug, status, code, label);
    await this.store.appendEvent(trackingNumber, event);
    return event;
  }

  /**
   * The code always means `status` to the courier: the caller's `code` when
   * it is one of the courier's own codes for it (courier_a's OUT_FOR_DELIVERY
   * is in transit too), else the courier's usual code, whatever else `code`
   * says. `label` is the courier's free text.
   */
  private event(slug: string, status: NormalizedStatus, code?: string | number, label?: string): RawEvent {
    const courier = this.courier(slug);
    const own = courier.statuses.find(([c, meaning]) => meaning === status && String(c) === String(code))?.[0];
    return { at: new Date().toISOString(), code: own ?? courier.usualCodes[status], label: label ?? LABELS[status] };
  }
}

declare module '../../platform/services.ts' {
  interface Services {
    /** The in-process courier simulator (COURIER_MODE=simulator), or null. */
    courierSimulator: SimulatorState | null;
  }
}
