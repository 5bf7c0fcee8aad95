// Runs recoveries (recoveries.ts) on the instances that run the delivery
// worker. Every second (and at once when this instance starts one) it claims
// the running recoveries nobody holds, with a lease (SKIP LOCKED: two
// instances never hold the same one), and works each in a loop of its own:
// one attempt at a time, START_SPACING_MS from start to start, the lease
// renewed with every delivery taken. A stopping instance finishes the attempt
// in flight and hands its recoveries back; one that died leaves a lease that
// expires after LEASE_SEC, and the next claim takes the recovery on.
import crypto from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../../platform/db/db.ts';
import { deliveryForResend, type ClaimedDelivery } from '../delivery/deliveries.ts';
import type { AttemptRow } from '../attempts/log.ts';
import type { AttemptOutcome } from '../delivery/https-sender.ts';
import { claimRecoveries, recordRecoveryAttempt, releaseRecoveries, START_SPACING_MS, takeNext } from './recoveries.ts';

const POLL_MS = 1_000;
const CLAIM_BATCH = 10;

export type Resend = (delivery: ClaimedDelivery) => Promise<{ outcome: AttemptOutcome; log: AttemptRow }>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RecoveryRunner {
  /** This instance's name on the leases it holds. */
  readonly owner = `${process.pid}-${crypto.randomUUID()}`;
  private running = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private stopping = false;

  private readonly db: Db;
  private readonly resend: Resend;
  private readonly log: FastifyBaseLogger;

  constructor(db: Db, resend: Resend, log: FastifyBaseLogger) {
    this.db = db;
    this.resend = resend;
    this.log = log;
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), POLL_MS);
    this.timer.unref();
    this.kick();
  }

  /** Looks for recoveries to run now (a start on this instance need not wait for the next poll). */
  kick(): void {
    if (this.stopping || this.polling) return;
    this.polling = this.poll()
      .catch((err) => this.log.warn({ err }, 'claiming webhook recoveries failed'))
      .finally(() => (this.polling = null));
  }

  private async poll(): Promise<void> {
    const claimed = await claimRecoveries(this.db, this.owner, CLAIM_BATCH);
    for (const { id, wait_ms } of claimed) {
      if (this.running.has(id)) continue;
      const work = this.run(id, wait_ms)
        .catch((err) => this.log.error({ err, recovery: id }, 'webhook recovery failed; another pass takes it on after its lease'))
        .finally(() => this.running.delete(id));
      this.running.set(id, work);
    }
  }

  private async run(recoveryId: string, firstWaitMs: number): Promise<void> {
    if (firstWaitMs > 0) await sleep(firstWaitMs);
    while (!this.stopping) {
      const startedAt = performance.now();
      const take = await takeNext(this.db, recoveryId, this.owner);
      if ('held' in take) {
        await sleep(POLL_MS);
        continue;
      }
      if (!('deliveryId' in take)) return;
      const delivery = await deliveryForResend(this.db, take.deliveryId);
      if (delivery) {
        const { outcome, log } = await this.resend(delivery);
        await this.db.tx((tx) => recordRecoveryAttempt(tx, recoveryId, delivery, outcome, log));
      }
      const wait = START_SPACING_MS - (performance.now() - startedAt);
      if (wait > 0) await sleep(wait);
    }
  }

  /** Finishes the attempts in flight, then hands this instance's recoveries back. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.polling;
    await Promise.allSettled([...this.running.values()]);
    await releaseRecoveries(this.db, this.owner).catch((err) => this.log.warn({ err }, 'releasing webhook recoveries failed'));
  }
}
