// The courier catalog, the couriers Merx knows: one line per courier, at the
// end. Everything that lists couriers (the schemas' enums, validation, each
// service's adapters, the poll, the push routes) reads it, so a courier added
// there is known everywhere. The operation schemas hold COURIER_SLUGS itself
// from the moment they are declared, so the catalog is one per process, and a
// courier added from outside (a test's own courier) is registered before the
// app is built.
import { COURIER_URL_VARIABLE } from '../config.ts';
import type { CourierProvider } from './provider.ts';
import { courierA } from './providers/courier-a.ts';
import { courierB } from './providers/courier-b.ts';
import { courierC } from './providers/courier-c.ts';

const providers = new Map<string, CourierProvider>();
/** The known slugs, in registration order; a live list (schemas hold this very array). */
export const COURIER_SLUGS: string[] = [];

export function registerCourier(provider: CourierProvider): void {
  if (providers.has(provider.slug)) throw new Error(`courier ${provider.slug} is registered twice`);
  // config.ts checks every variable of that shape at start-up, knowing no courier.
  if (!COURIER_URL_VARIABLE.test(provider.urlVariable)) throw new Error(`courier ${provider.slug}: urlVariable must read COURIER_<X>_URL`);
  providers.set(provider.slug, provider);
  COURIER_SLUGS.push(provider.slug);
}

export function courierProviders(): CourierProvider[] {
  return [...providers.values()];
}

export function isCourierSlug(slug: unknown): slug is string {
  return typeof slug === 'string' && providers.has(slug);
}

registerCourier(courierA);
registerCourier(courierB);
registerCourier(courierC);
