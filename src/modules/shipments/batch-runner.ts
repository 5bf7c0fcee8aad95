// EXTENSIONS 8: runs shipment batches' items, on every instance at once.
//
// The work lives in the database (batch-store.ts), never only in a process:
// an instance claims items in request order with a token and a lease, at most
// PER_COURIER of one courier in flight for a batch over all instances, runs
// each through the single create route's own code path (execute() with
// create_shipment: the same checks, courier call, order transition, event and
// errors), and writes a success in the very transaction that creates the
// shipment, under its token. A restart or a dead instance leaves claims whose
// leases run out; whoever claims them next runs them, and the old token can
// commit nothing, so no item commits twice.
//
// Woken like the webhook worker (webhooks/delivery/due-timer.ts): a new batch
// and every finished item NOTIFY every instance, which then claims what it may;
// a slow timer covers a missed notification and leases that ran out.
import type { Db } from '../../platform/db/db.ts';
import { fencedDb } from '../../platform/db/fenced-db.ts';
import type { Services } from '../../platform/services.ts';
import { AppError, toAppError } from '../../platform/contract/errors.ts';
import { execute } from '../../platform/operations/execute.ts';
import { checkItemBody } from './batch-envelope.ts';
import { createShipmentOp } from './operations.ts';
import {
  announce,
  BATCH_CHANNEL,
  claimItems,
  recordOutcome,
  renewLeases,
  runnableBatches,
  type ClaimedItem,
  type RunnableBatch,
} from './batch-store.ts';

/** EXTENSIONS 8: courier calls of one courier in flight for one batch. */
export const PER_COURIER = 4;
/** EXTENSIONS 8: a courier's 429 or 5xx is tried again this many times before the item fails courier_error. */
export const COURIER_RETRIES = 3;
const BACKOFF_MS = [500, 1000, 2000];
/** The safety net: a look for runnable work this often (missed notifications, leases of a dead instance). */
const SWEEP_MS = 5_000;
/** A graceful stop waits this long for items in flight; the rest are taken over when their leases run out. */
const STOP_WAIT_MS = 20_000;

/** Retried: the courier answered 429 (throttled) or 5xx, or could not be reached. A timeout is not: the waybill may exist. */
function worthRetrying(err: AppError): boolean {
  const reason = (err.details as { reason?: string } | undefined)?.reason;
  return err.code === 'courier_error' && (reason === 'throttled' || reason === 'unavailable');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export class BatchRunner {
  private services: Services | null = null;
  private readonly inFlight = new Map<Promise<void>, ClaimedItem>();
  private running: Promise<void> | null = null;
  private again = false;
  /** Not woken: before start() and after stop(). */
  private stopped = true;
  /** stop() was called: an item between its courier's tries gives its claim up instead of trying again. */
  private stopping = false;
  private timers: NodeJS.Timeout[] = [];
  private unlisten: (() => Promise<void>) | null = null;

  async start(services: Services): Promise<void> {
    this.services = services;
    this.stopped = false;
    this.unlisten = await services.db.listen(BATCH_CHANNEL, () => this.wake());
    // A claim lives config.batchLeaseSec (BATCH_LEASE_SEC, 15 s) unless renewed; it is renewed three times in that while its item runs.
    const renewMs = (services.config.batchLeaseSec * 1000) / 3;
    this.timers = [
      setInterval(() => this.wake(), Math.min(SWEEP_MS, services.config.batchLeaseSec * 1000)),
      setInterval(() => this.renew(), renewMs),
    ];
    for (const timer of this.timers) timer.unref();
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    this.timers.forEach(clearInterval);
    await this.unlisten?.().catch(() => {});
    await this.running;
    const wait = new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref());
    await Promise.race([Promise.all(this.inFlight.keys()), wait]);
  }

  /** Claims what this instance may run now; a wake during a pass runs another after it. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.pass().catch((err) => this.services!.log.error({ err }, 'shipment batch pass failed'));
      } while (this.again && !this.stopped);
      this.running = null;
    })();
  }

  private async pass(): Promise<void> {
    const { db } = this.services!;
    for (const batch of await runnableBatches(db)) {
      if (this.stopped) return;
      const claimed = await db.tx((tx) => claimItems(tx, batch.id, PER_COURIER, this.services!.config.batchLeaseSec));
      for (const item of claimed) {
        const run: Promise<void> = this.runItem(batch, item)
          .catch((err) => this.services!.log.error({ err, batch: item.batchId, index: item.index }, 'shipment batch item failed to record'))
          .finally(() => {
            this.inFlight.delete(run);
            this.wake();
          });
        this.inFlight.set(run, item);
      }
    }
  }

  /**
   * OPERATOR_API jobs (`shipment-batches`): runs, in this call, every item
   * this instance may claim, until none is left; how many ran. For an
   * instance without workers (WORKERS=0), or to finish work now; any runner
   * on another instance shares the items as usual.
   */
  async runNow(services: Services): Promise<number> {
    this.services ??= services;
    let ran = 0;
    for (;;) {
      const runs: Array<Promise<void>> = [];
      for (const batch of await runnableBatches(services.db)) {
        const claimed = await services.db.tx((tx) => claimItems(tx, batch.id, PER_COURIER, services.config.batchLeaseSec));
        runs.push(...claimed.map((item) => this.runItem(batch, item)));
      }
      if (!runs.length) return ran;
      await Promise.all(runs);
      ran += runs.length;
    }
  }

  private renew(): void {
    if (!this.inFlight.size) return;
    renewLeases(this.services!.db, [...this.inFlight.values()], this.services!.config.batchLeaseSec).catch((err) =>
      this.services!.log.warn({ err }, 'renewing shipment batch leases failed'),
    );
  }

  /** One item, as POST /api/v1/shipments would run its body, with retries of a throttled or failing courier. */
  private async runItem(batch: RunnableBatch, item: ClaimedItem): Promise<void> {
    const services = this.services!;
    for (let attempt = 0; ; attempt++) {
      const fence = itemFencedDb(services.db, item);
      try {
        checkItemBody(item.body);
        await execute({ ...services, db: fence.db }, createShipmentOp, batch.caller, item.body);
        return;
      } catch (err) {
        // Another instance holds the item now: it records the outcome (and the waybill this run got was undone).
        if (fence.lost()) return;
        const error = toAppError(err);
        if (worthRetrying(error) && attempt < COURIER_RETRIES) {
          // Stopping: the claim's lease runs out and the item is run again, by this batch's next claimer.
          if (this.stopping) return;
          await sleep(BACKOFF_MS[attempt]);
          continue;
        }
        await services.db.tx(async (tx) => {
          if (await recordOutcome(tx, item, { error: error.toBody().error })) await announce(tx);
        });
        return;
      }
    }
  }
}

/**
 * The Db an item's create_shipment runs on: its transaction (the one that
 * creates the shipment) also writes the item's success under the item's
 * claim token before it commits. If the claim was taken over, the write
 * finds nothing, the transaction rolls back, and create_shipment undoes the
 * courier's waybill as for any failed commit.
 */
function itemFencedDb(db: Db, item: ClaimedItem): { db: Db; lost: () => boolean } {
  let lost = false;
  const fenced = fencedDb(db, async (tx, result) => {
    const shipmentId = (result as { id?: unknown } | null)?.id;
    if (typeof shipmentId !== 'string') throw new Error('create_shipment committed no shipment');
    if (!(await recordOutcome(tx, item, { shipmentId }))) {
      lost = true;
      throw new Error('the batch item was taken over by another claim');
    }
    await announce(tx);
  });
  return { db: fenced, lost: () => lost };
}
