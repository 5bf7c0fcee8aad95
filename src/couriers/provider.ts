// A courier provider: everything Merx knows about one courier, in one file
// (src/couriers/providers/<slug>.ts), registered by one line in
// src/couriers/catalog.ts. The shipment room, the schemas' enums,
// the status poll and push, and the simulator read the catalog; nothing
// else names a courier.
import type { FastifyInstance } from 'fastify';
import type { CourierAdapter, CourierEvent, NormalizedStatus } from './adapter.ts';
import type { CourierHttp } from './http.ts';
import type { Parcel, RawEvent, SimulatorState } from './simulator/state.ts';

export interface CourierProvider {
  /** The courier's slug in the API (orders' courier_slug, shipments' courier_slug, integrations). */
  readonly slug: string;
  /** The environment variable holding the courier's base URL in live mode, COURIER_<X>_URL (config.ts reads those). */
  readonly urlVariable: string;
  /** Every status code the courier uses on the wire, with what it means. */
  readonly statuses: ReadonlyArray<readonly [code: string | number, status: NormalizedStatus]>;
  /** The adapter speaking the courier's protocol over `http` (its base URL, timeout and call report are the service's). */
  createAdapter(http: CourierHttp): CourierAdapter;
  /** A courier that pushes statuses (capabilities.statusUpdates 'push'): how its reports are read. */
  readonly push?: CourierPush;
  /** The courier's half of the in-process simulator; a courier without one is only reached at its URL. */
  readonly simulator?: SimulatedCourier;
}

/** A pushing courier's reports, received at /api/couriers/<slug>/push. */
export interface CourierPush {
  /** The per-integration token the courier presents (given to it at waybill creation), or null. */
  token(headers: Record<string, string | string[] | undefined>): string | null;
  /** The waybill and its normalised events; throws validation_failed on a malformed report. */
  read(body: unknown): { trackingNumber: string; events: CourierEvent[] };
}

/** What the simulator offers a courier's simulated routes. */
export interface SimulatorKit {
  state: SimulatorState;
  /** Mode and credentials first, as a courier's gateway would; false when it already answered. */
  gate(slug: string, authorised: (req: any) => boolean, deny: { status: number; body: unknown }, req: any, reply: any): boolean;
  /** The parcel with this number, when it is this courier's. */
  parcelOf(slug: string, trackingNumber: string): Parcel | null;
  lastCode(parcel: Parcel): string | number | undefined;
  /** A real PDF label for the parcel. */
  label(parcel: Parcel): Promise<Buffer>;
}

export interface SimulatedCourier {
  /** What an integration enabled without credentials gets in simulator mode (GAPS). */
  readonly demoCredentials: Record<string, string>;
  /** How the courier usually writes each normalised status. */
  readonly usualCodes: Record<NormalizedStatus, string | number>;
  newTrackingNumber(): string;
  /** Mounts the courier's wire protocol under `base` (e.g. /courier-sim/courier_a). */
  routes(app: FastifyInstance, base: string, kit: SimulatorKit): void;
  /** A pushing courier sends a parcel's new event where it was told to. */
  push?(parcel: Parcel, event: RawEvent): Promise<void>;
}
