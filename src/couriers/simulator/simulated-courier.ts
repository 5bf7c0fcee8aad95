// What a simulated courier is: its half of the in-process simulator
// (simulator/<slug>.ts), speaking the wire protocol its adapter expects
// (providers/<slug>.ts) over the simulator's parcels.
import type { FastifyInstance } from 'fastify';
import type { NormalizedStatus } from '../adapter.ts';

/**
 * OPERATOR_API courier-sim mode: ok accepts, refuse says no, down does not
 * answer, throttle answers 429 (Retry-After: 1), error answers 500.
 */
export const SIM_MODES = ['ok', 'refuse', 'down', 'throttle', 'error'] as const;
export type SimMode = (typeof SIM_MODES)[number];

/** What a simulated courier calls its operations in the call log. */
export type SimOperation = 'create' | 'cancel' | 'label' | 'track';

/** OPERATOR_API courier-sim calls: one call as the courier saw it (status and duration null while it is open). */
export interface SimCall {
  at: string;
  operation: string;
  status: number | null;
  duration_ms: number | null;
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

/** The simulator's parcels, as a simulated courier's routes use them (state.ts). */
export interface ParcelBook {
  newTrackingNumber(slug: string): string;
  register(parcel: Omit<Parcel, 'events'>): Promise<Parcel>;
  record(trackingNumber: string, status: NormalizedStatus, code?: string | number, label?: string): Promise<RawEvent | null>;
}

/** What the simulator offers a courier's simulated routes. */
export interface SimulatorKit {
  state: ParcelBook;
  /**
   * Logs the call, then mode and credentials first, as a courier's gateway
   * would: the mode this call gets (`times` counted down), or null when the
   * gate already answered (down, throttle, error, bad credentials).
   */
  gate(
    slug: string,
    operation: SimOperation,
    authorised: (req: any) => boolean,
    deny: { status: number; body: unknown },
    req: any,
    reply: any,
  ): Promise<SimMode | null>;
  /** The parcel with this number, when it is this courier's. */
  parcelOf(slug: string, trackingNumber: string): Promise<Parcel | null>;
  /** This courier's parcels among these numbers, in the order asked. */
  parcelsOf(slug: string, trackingNumbers: string[]): Promise<Parcel[]>;
  lastCode(parcel: Parcel): string | number | undefined;
  /** A real PDF label for the parcel. */
  label(parcel: Parcel): Promise<Buffer>;
}

export interface SimulatedCourier {
  readonly slug: string;
  /** What an integration enabled without credentials gets in simulator mode (GAPS). */
  readonly demoCredentials: Record<string, string>;
  /** Every code the courier writes, with what it means: its adapter's table (the provider's statuses). */
  readonly statuses: ReadonlyArray<readonly [code: string | number, status: NormalizedStatus]>;
  /** How the courier usually writes each normalised status. */
  readonly usualCodes: Record<NormalizedStatus, string | number>;
  newTrackingNumber(): string;
  /** Mounts the courier's wire protocol under `base` (e.g. /courier-sim/courier_a). */
  routes(app: FastifyInstance, base: string, kit: SimulatorKit): void;
  /** A pushing courier sends a parcel's new event where it was told to. */
  push?(parcel: Parcel, event: RawEvent): Promise<void>;
}
