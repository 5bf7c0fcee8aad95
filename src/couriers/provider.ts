// A courier provider: everything Merx knows about one courier, in one file
// (src/couriers/providers/<slug>.ts), listed by one line in
// src/couriers/catalog.ts. The shipment room, the schemas' enums, the status
// poll and push, and the adapters read the catalog; nothing else names a courier.
import type { CourierAdapter, CourierEvent, NormalizedStatus } from './adapter.ts';
import type { CourierHttp } from './http.ts';

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
}

/** A pushing courier's reports, received at /api/couriers/<slug>/push. */
export interface CourierPush {
  /** The per-integration token the courier presents (given to it at waybill creation), or null. */
  token(headers: Record<string, string | string[] | undefined>): string | null;
  /** The waybill and its normalised events; throws validation_failed on a malformed report. */
  read(body: unknown): { trackingNumber: string; events: CourierEvent[] };
}
