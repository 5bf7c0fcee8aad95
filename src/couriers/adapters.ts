// One service's courier adapters, one per courier in the catalog, pointed at
// the real couriers (COURIER_<X>_URL, each provider's urlVariable) or, in
// simulator mode, at the stand-in the composition root gives (server.ts: the
// in-process simulator). COURIER_MODE=live has no stand-in.
import type { Config } from '../config.ts';
import { courierError, type CourierAdapter, type CourierSlug } from './adapter.ts';
import { courierProviders } from './catalog.ts';
import { courierHttp, type CourierCallReport } from './http.ts';

/** Plays couriers without a configured URL, at the service's own origin. */
export interface CourierStandIn {
  /** Where the stand-in plays this courier under `selfOrigin`, or null for one it does not play. */
  baseUrl(slug: CourierSlug, selfOrigin: string): string | null;
  /** GAPS: what an integration enabled without credentials uses ({} for a courier it does not play). */
  demoCredentials(slug: CourierSlug): Record<string, string>;
}

export interface CourierAdapters {
  /** The adapter of a registered courier; validation_failed for any other slug. */
  adapter(slug: CourierSlug): CourierAdapter;
  /** Slugs of the couriers whose statuses are polled. */
  polled(): CourierSlug[];
  /** What an integration enabled without credentials uses: the stand-in's demo ones, else none ({}). */
  defaultCredentials(slug: CourierSlug): Record<string, unknown>;
  /** The service's own origin, once it listens: where the stand-in and push endpoints are. */
  setSelfOrigin(origin: string): void;
  selfOrigin(): string;
}

export interface CourierAdaptersOptions {
  /** Where each call is counted: this service's metrics (call-metrics.ts). */
  report: CourierCallReport;
  standIn: CourierStandIn | null;
}

export function createCourierAdapters(config: Config, { report, standIn }: CourierAdaptersOptions): CourierAdapters {
  let self = config.publicBaseUrl;
  const adapters = new Map<CourierSlug, CourierAdapter>();
  for (const provider of courierProviders()) {
    const baseUrl = () => {
      const configured = config.courierUrls[provider.urlVariable];
      if (configured) return configured.replace(/\/$/, '');
      const standing = standIn?.baseUrl(provider.slug, self);
      if (standing) return standing;
      throw courierError(provider.slug, 'unavailable', `${provider.urlVariable} is not configured`);
    };
    adapters.set(provider.slug, provider.createAdapter(courierHttp(provider.slug, { baseUrl, timeoutMs: config.courierTimeoutMs, report })));
  }
  return {
    adapter(slug) {
      const adapter = adapters.get(slug);
      if (!adapter) throw courierError(slug, 'not_supported', `${slug} is not a registered courier`);
      return adapter;
    },
    polled: () => [...adapters.values()].filter((a) => a.capabilities.statusUpdates === 'poll').map((a) => a.slug),
    defaultCredentials: (slug) => standIn?.demoCredentials(slug) ?? {},
    setSelfOrigin(origin) {
      self = origin;
    },
    selfOrigin: () => self,
  };
}

declare module '../platform/services.ts' {
  interface Services {
    /** The catalog's couriers as this service reaches them. */
    couriers: CourierAdapters;
  }
}
