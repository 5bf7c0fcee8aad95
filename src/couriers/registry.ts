// The three adapters, pointed at the real couriers (COURIER_<X>_URL) or, in
// simulator mode, at the in-process simulator. COURIER_MODE=live never mounts it.
import type { Config } from '../config.ts';
import { courierError, type CourierAdapter, type CourierSlug } from './adapter.ts';
import { createCourierA } from './courier-a.ts';
import { createCourierB } from './courier-b.ts';
import { createCourierC } from './courier-c.ts';
import { SimulatorState } from './simulator/state.ts';

export interface Couriers {
  adapter(slug: CourierSlug): CourierAdapter;
  /** Present in simulator mode only. */
  simulator: SimulatorState | null;
  /** The service's own origin, once it listens: where the simulator and push endpoints are. */
  setSelfOrigin(origin: string): void;
  selfOrigin(): string;
  timeoutMs: number;
}

export function createCouriers(config: Config): Couriers {
  const simulator = config.courierMode === 'simulator' ? new SimulatorState() : null;
  let self = config.publicBaseUrl;
  const baseUrl = (slug: CourierSlug) => () => {
    const configured = config.courierUrls[slug];
    if (configured) return configured.replace(/\/$/, '');
    if (simulator) return `${self}/courier-sim/${slug}`;
    throw courierError(slug, 'unavailable', `COURIER_${slug.slice(-1).toUpperCase()}_URL is not configured`);
  };
  const adapters: Record<CourierSlug, CourierAdapter> = {
    courier_a: createCourierA(baseUrl('courier_a'), config.courierTimeoutMs),
    courier_b: createCourierB(baseUrl('courier_b'), config.courierTimeoutMs),
    courier_c: createCourierC(baseUrl('courier_c'), config.courierTimeoutMs),
  };
  return {
    adapter: (slug) => adapters[slug],
    simulator,
    setSelfOrigin(origin) {
      self = origin;
    },
    selfOrigin: () => self,
    timeoutMs: config.courierTimeoutMs,
  };
}
