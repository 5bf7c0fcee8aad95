// What the shipments room adds to the service's long-lived pieces (Services,
// and so every operation's context): the runner of shipment batches.
import type { BatchRunner } from './batch-runner.ts';

declare module '../../platform/services.ts' {
  interface Services {
    /** EXTENSIONS 8: this instance's runner of shipment batches (woken by NOTIFY; any instance runs any batch's items). */
    batches: BatchRunner;
  }
}
