// What the webhooks room adds to the service's long-lived pieces (Services,
// and so every operation's context): the delivery engine.
import type { DeliveryEngine } from './delivery/engine.ts';

declare module '../../platform/services.ts' {
  interface Services {
    /** Webhook delivery attempts that an operation makes itself (test, retry), and the worker. */
    deliveries: DeliveryEngine;
  }
}
