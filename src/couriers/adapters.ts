// One service's courier adapters, one per courier in the catalog, pointed at
// the real couriers (COURIER_<X>_URL, each provider's urlVariable) or, in
// simulator mode, at the in-process simulator. COURIER_MODE=live never mounts it.
import type { Config } from '../config.ts';
import { courierError, type CourierAdapter, type CourierSlug } from './adapter.ts';
import { courierProviders } from './catalog.ts';
import { courierHttp, type CourierCallReport } from './http.ts';
import { SimulatorState } from './simulator/state.ts';

export interface CourierAdapters {
  /** The adapter of a registered courier; validation_failed for any other slug. */
  adapter(slug: CourierSlug): CourierAdapter;
  /** Slugs of the couriers whose statuses are polled. */
  polled(): CourierSlug[];
  /** Present in simulator mode only. */
  simulator: SimulatorState | null;
  /** The service's own origin, once it listens: where the simulator and push endpoints are. */
  setSelfOrigin(origin: string): void;
  selfOrigin(): string;
}

export interface CourierAdaptersOptions {
  /** Where each call is counted: this service's metrics (call-metrics.ts). */
  report: CourierCallReport;
}

export function createCourierAdapters(config: Config, { report }: CourierAdaptersOptions): CourierAdapters {
  const simulator = config.courierMode === 'simulator' ? new SimulatorState() : null;
  let self = config.publicBaseUrl;
  const adapters = new Map<CourierSlug, CourierAdapter>();
  for (const provider of courierProviders()) {
    const baseUrl = () => {
      const configured = config.courierUrls[provider.urlVariable];
      if (configured) return configured.replace(/\/$/, '');
      if (simulator && provider.simulator) return `${self}/courier-sim/${provider.slug}`;
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
    simulator,
    setSelfOrigin(origin) {
      self = origin;
    },
    selfOrigin: () => self,
  };
}

declare module '../platform/services.ts' {
  interface Services {
    /** The catalog's couriers as this service reaches them (and the simulator in simulator mode). */
    couriers: CourierAdapters;
  }
}
