// The couriers the in-process simulator plays, keyed by slug; each one's
// behaviour is in simulator/<slug>.ts. A courier of the catalog that is not
// here (a test's own courier) is reached only at its COURIER_<X>_URL.
import type { SimulatedCourier } from './simulated-courier.ts';
import { simulatedCourierA } from './courier-a.ts';
import { simulatedCourierB } from './courier-b.ts';
import { simulatedCourierC } from './courier-c.ts';

export const SIMULATED_COURIERS: ReadonlyMap<string, SimulatedCourier> = new Map(
  [simulatedCourierA, simulatedCourierB, simulatedCourierC].map((courier) => [courier.slug, courier]),
);
