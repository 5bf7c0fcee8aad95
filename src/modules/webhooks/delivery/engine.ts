// The delivery engine: the first attempt right after commit, the worker for
// due retries (and first attempts past their grace), and manual retries and
// tests. Each attempt: lease the row, send it (attempt-sender.ts: the URL
// re-checked, on the sender's own thread, sender-thread.ts), record the
// outcome with its side effects in one transaction.
//
// At volume: first attempts queue per subscription (lanes.ts) and go out as
// lane slots free up, with no statement of their own (the fan-out wrote them
// as attempt 1); routine outcomes (delivered, retry later) are recorded in
// batches, one statement each, spaced under load; the worker sleeps until the
// earliest due time and is woken by NOTIFY (due-timer.ts), not by polling.
import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Db, Sql } from '../../../platform/db/db.ts';
import { AppError } from '../../../platform/contract/errors.ts';
import { Batcher } from '../../../platform/db/batcher.ts';
import type { Notifier } from '../../../notify/notifier.ts';
import type { UrlPolicy } from '../subscriptions/url-policy.ts';
import type { AttemptOutcome, SelfOrigin } from './https-sender.ts';
import { AttemptSender, type Sent } from './attempt-sender.ts';
import { deliveryAttemptId } from '../signing/signature.ts';
import {
  BACKOFF_SEC,
  FIRST_ATTEMPT_GRACE_SEC,
  unclaim,
  handToWorker,
  claimDue,
  claimFirstAttempt,
  claimFirstAttempts,
  claimForRetry,
  releaseFirstAttempts,
  type ClaimedDelivery,
  type NewDelivery,
} from './deliveries.ts';
import { markFailed, recordRoutineOutcomes, recordWithSideEffects, settle, type RoutineOutcome, type Settlement } from './outcomes.ts';
import { Lanes } from './lanes.ts';
import { retryOnConflict } from '../../../platform/db/conflict-retry.ts';
import { DueAnnouncer, DueTimer } from './due-timer.ts';
import { deliveryMetrics, type DeliveryMetrics } from './metrics.ts';
import crypto from 'node:crypto';
import { attemptRow, attemptStart, insertAttempts, type AttemptRow, type AttemptTrigger } from '../attempts/log.ts';
import { RecoveryRunner } from '../recovery/runner.ts';
import { FlowOutcomes } from './flow-outcomes.ts';
import { claimMetered, giveBack } from './flow-rate.ts';
import type { Faults } from '../../../platform/edge/auth.ts';
import {
  CLAIM_BATCH,
  FRESH_EVENT_AGE_MS,
  FRESH_WITHIN_MS,
  RECORD_BATCH,
  RECORD_SPACING_MS,
  STOP_WAIT_MS,
  WORKER_BATCH,
  WORKER_IN_FLIGHT,
} from './engine-tuning.ts';

const eventTime = (d: ClaimedDelivery) => Date.parse(String(d.envelope?.created_at ?? '')) || 0;

export interface AttemptResult {
  outcome: AttemptOutcome;
  settlement: Settlement;
}

function keepUntilSettled(set: Set<Promise<unknown>>, promise: Promise<unknown>): void {
  set.add(promise);
  void promise.finally(() => set.delete(promise));
}

export class DeliveryEngine {
  private db: Db;
  /** Where the batched claims and routine outcomes run: off the requests' pool, without waiting for the WAL flush (Db.background). */
  private bookkeeping: Sql;
  private notifier: Notifier;
  private log: FastifyBaseLogger;
  private readonly sender: AttemptSender;
  private due: DueTimer | null = null;
  /** EXTENSIONS 6: recoveries run where the worker runs. */
  private recoveries: RecoveryRunner | null = null;
  private announcer: DueAnnouncer;
  private inFlight = new Set<Promise<unknown>>();
  private stopping = false;
  private metrics: DeliveryMetrics;
  private readonly firstAttempts: Lanes<NewDelivery>;
  private readonly claims: Batcher<string, ClaimedDelivery | null>;
  private readonly routine: Batcher<RoutineOutcome, boolean>;
  /** EXTENSIONS 9: what answers do to their subscription's flow (Retry-After, the circuit breaker). */
  private readonly flow: FlowOutcomes;
  /** The operator's forced failures (outside production): a metered claim's late start. */
  private readonly faults: Faults | undefined;
  /** Not before start() nor after stop(): deliveries written then are the worker's, after their grace. */
  private taking = false;
  /** The fan-out's deliveries, once committed: their first attempts are sent now, by this instance (app.ts wires it). */
  readonly committed = (created: NewDelivery[]) => {
    if (!this.taking || this.stopping) return;
    let viaWorker = false;
    for (const d of created) {
      if (d.viaWorker) viaWorker = true;
      else this.firstAttempts.push(d.webhookId, d);
    }
    // EXTENSIONS 9: a flowed subscription's first attempt is the workers' (due now), through the claim that asks the flow.
    if (viaWorker) this.announcer.announce(Date.now());
    // Another instance's worker takes these over only if this one does not send them within the grace.
    this.announcer.announce(Date.now() + FIRST_ATTEMPT_GRACE_SEC * 1000);
  };

  constructor(deps: {
    db: Db;
    notifier: Notifier;
    log: FastifyBaseLogger;
    policy: UrlPolicy;
    metrics?: Registry;
    senderNice?: number;
    faults?: Faults;
  }) {
    this.db = deps.db;
    this.faults = deps.faults;
    this.bookkeeping = deps.db.background();
    this.notifier = deps.notifier;
    this.log = deps.log;
    this.announcer = new DueAnnouncer(this.db, (err) => this.log.warn({ err }, 'webhook due-time notification failed'));
    // A lane's slot bounds attempts on the network: it is free again once the attempt has its answer, not once its outcome is recorded.
    this.firstAttempts = new Lanes((d) => new Promise<void>((answered) => void this.track(this.attemptFirstQueued(d, answered)).finally(answered)));
    this.claims = new Batcher(
      async (ids) => {
        const claimed = new Map((await claimFirstAttempts(this.bookkeeping, ids)).map((d) => [d.id, d]));
        return ids.map((id) => claimed.get(id) ?? null);
      },
      { maxBatch: CLAIM_BATCH, parallel: 2 },
    );
    this.routine = new Batcher((outcomes) => retryOnConflict(() => recordRoutineOutcomes(this.bookkeeping, outcomes)), {
      maxBatch: RECORD_BATCH,
      parallel: 2,
      spacingMs: RECORD_SPACING_MS,
    });
    this.metrics = deliveryMetrics(deps.metrics, this.db, () => this.firstAttempts.backlog);
    this.sender = new AttemptSender({ db: deps.db, policy: deps.policy, metrics: this.metrics, senderNice: deps.senderNice });
    this.flow = new FlowOutcomes(this.db, this.notifier, (at) => this.announcer.announce(at));
  }

  async start(options: { self: SelfOrigin; worker: boolean }): Promise<void> {
    this.taking = true;
    this.sender.start(options.self);
    if (options.worker) {
      this.due = new DueTimer(
        this.db,
        () => this.runDue(new Date()),
        (err) => this.log.error({ err }, 'webhook worker pass failed'),
      );
      await this.due.start();
      this.recoveries = new RecoveryRunner(this.db, (d) => this.resend(d), this.log);
      this.recoveries.start();
    }
  }

  /** EXTENSIONS 9: held deliveries may start now (a resume): every instance's worker runs a pass at once. */
  wake(): void {
    this.announcer.announce(Date.now());
  }

  /** A recovery was just started: claim it now rather than at the next poll (another instance's runner may take it as well). */
  kickRecoveries(): void {
    this.recoveries?.kick();
  }

  /** Stops taking work, waits (bounded) for attempts in flight, leaves everything else pending for the next process. */
  async stop(): Promise<void> {
    // Recoveries first: their attempt in flight finishes on the senders, then they are handed back.
    await this.recoveries?.stop();
    this.stopping = true;
    this.taking = false;
    // Rows stay pending: the worker takes them over after the grace, as the first attempts they still are.
    const unsent = this.firstAttempts.clear();
    if (unsent.length) {
      await releaseFirstAttempts(
        this.db,
        unsent.map((d) => d.id),
      ).catch((err) => this.log.warn({ err }, 'releasing queued first attempts failed'));
    }
    await this.due?.stop();
    let timer: NodeJS.Timeout | undefined;
    const bounded = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)));
    await Promise.race([Promise.allSettled([...this.inFlight]), bounded]);
    clearTimeout(timer);
    this.announcer.stop();
    await this.sender.close();
  }

  private track<T>(work: Promise<T>): Promise<T | undefined> {
    const guarded = work.catch((err) => {
      this.log.error({ err }, 'webhook delivery failed unexpectedly');
      return undefined;
    });
    keepUntilSettled(this.inFlight, guarded);
    return guarded;
  }

  /**
   * A queued first attempt whose lane has a free slot. Soon after the commit
   * it is sent as the fan-out read it, with no statement first: the fan-out
   * wrote the row as attempt 1, and the grace is its lease. One that waited
   * longer (a slow lane) takes a real lease (batched), which also re-reads its
   * subscription: deactivated or rotated meanwhile. `answered` frees its lane slot.
   */
  private async attemptFirstQueued(fresh: NewDelivery, answered: () => void): Promise<void> {
    if (this.stopping) return;
    const waitUntil = this.flow.backPressure.get(fresh.webhookId);
    if (waitUntil !== undefined) {
      if (waitUntil > Date.now()) {
        await handToWorker(this.db, fresh.id);
        this.announcer.announce(waitUntil);
        return;
      }
      this.flow.backPressure.delete(fresh.webhookId);
    }
    const sinceCommit = performance.now() - fresh.committedAt;
    const sinceEvent = Date.now() - Date.parse(String(fresh.delivery.envelope?.created_at));
    if (sinceCommit < FRESH_WITHIN_MS && sinceEvent < FRESH_EVENT_AGE_MS) {
      await this.attempt(fresh.delivery, 'automatic', new Date(), answered);
      return;
    }
    const claimed = await this.claims.add(fresh.id);
    if (claimed) await this.attempt(claimed, 'automatic', new Date(), answered);
  }

  /** SPEC Receiver rules 4: attempt 1 is immediate; a no-op when another instance or the worker already took it. */
  async attemptFirst(deliveryId: string, trigger: AttemptTrigger = 'automatic'): Promise<AttemptResult | null> {
    const claimed = await claimFirstAttempt(this.db, deliveryId);
    return claimed ? this.attempt(claimed, trigger, new Date()) : null;
  }

  /**
   * One worker pass as if the clock read `now`: claims due deliveries in
   * batches (SKIP LOCKED, so instances never share a row) and attempts them,
   * up to WORKER_IN_FLIGHT at once; returns how many attempts it made.
   */
  async runDue(now: Date): Promise<number> {
    let processed = 0;
    const running = new Set<Promise<unknown>>();
    // EXTENSIONS 9: a flowed subscription's attempts go one after another, in the order claimed (oldest due first).
    const chains = new Map<string, Promise<unknown>>();
    for (;;) {
      while (running.size > WORKER_IN_FLIGHT - WORKER_BATCH) await Promise.race(running);
      // EXTENSIONS 9: metered subscriptions (a rate, the circuit's probe) are claimed apart, their starts counted.
      const batch = this.stopping
        ? []
        : [
            ...(await claimDue(this.bookkeeping, now.toISOString(), WORKER_BATCH)),
            ...(await claimMetered(this.db, now.toISOString(), WORKER_BATCH, this.faults)),
          ];
      if (batch.length === 0) break;
      processed += batch.length;
      // RETURNING keeps no order: a flowed subscription's rows are put back in the order of their events.
      if (batch.some((d) => d.flowed)) batch.sort((x, y) => eventTime(x) - eventTime(y));
      for (const d of batch) {
        let work: Promise<unknown>;
        if (d.flowed && !d.metered) {
          // The next attempt of the subscription waits for this one's answer (not its bookkeeping).
          let next!: () => void;
          const turn = new Promise<void>((resolve) => (next = resolve));
          work = this.track((chains.get(d.webhook_id) ?? Promise.resolve()).then(() => this.attemptFlowed(d, now, next)).finally(() => next()));
          chains.set(d.webhook_id, turn);
        } else {
          work = this.track(this.attempt(d, 'automatic', now));
        }
        keepUntilSettled(running, work);
      }
    }
    await Promise.all(running);
    return processed;
  }

  /**
   * A claimed attempt of a flowed subscription, asked again just before it
   * starts: a pause (or back-pressure) that came after the claim hands the
   * row back unspent, and the worker takes it when the flow lets it.
   */
  private async attemptFlowed(delivery: ClaimedDelivery, now: Date, next: () => void): Promise<AttemptResult | null> {
    // A stopping instance hands back what it has not started (another instance, or the next process, sends it).
    if (this.stopping) return (await unclaim(this.db, delivery, false), null);
    if (await unclaim(this.db, delivery, true)) return null;
    return this.attempt(delivery, 'automatic', now, next);
  }

  /** The retry endpoint: an immediate attempt with the same event id and a fresh signature. */
  async retry(deliveryId: string): Promise<AttemptResult> {
    const claimed = await claimForRetry(this.db, deliveryId);
    if (!claimed) throw new AppError('conflict', 'this delivery was already delivered');
    return (
      (await this.attempt(claimed, 'retry', new Date())) ?? {
        outcome: { statusCode: null, error: 'not sent', responseBody: null },
        settlement: 'failed',
      }
    );
  }

  /** `answered`: called once the attempt has its outcome, before it is recorded. */
  private async attempt(delivery: ClaimedDelivery, trigger: AttemptTrigger, now: Date, answered?: () => void): Promise<AttemptResult | null> {
    const manual = trigger === 'retry';
    const fail = async (error: string, began = attemptStart()): Promise<AttemptResult> => {
      const outcome = { statusCode: null, error, responseBody: null };
      const log = attemptRow(delivery, outcome, trigger, began.at, performance.now() - began.ms);
      await this.db.tx(async (tx) => {
        await markFailed(tx, delivery.id, error);
        await insertAttempts(tx, [log]);
      });
      this.metrics.outcome('failed');
      return { outcome, settlement: 'failed' };
    };
    // GAPS Webhooks `failed`: deactivated while it waited, or the URL no longer passes the policy.
    if (!delivery.subscription_active && !manual) return fail('subscription is inactive');
    // EXTENSIONS 9: never held, but a retry or test takes its turn in the subscription's rate.
    const sent = await this.sender.send(delivery, deliveryAttemptId(delivery.id, delivery.attempt), trigger !== 'automatic');
    if ('refused' in sent) return fail(sent.refused, sent.began);
    const { outcome, began } = sent;
    // EXTENSIONS 9: its turn in the rate passed before it could begin; nothing was sent, so nothing is spent or recorded.
    if (outcome.notStarted) return (await giveBack(this.db, delivery), this.announcer.announce(Date.now()), null);
    // Before the next attempt of a flowed subscription may start: a Retry-After in this answer holds it, the circuit counts it.
    await this.flow.note(delivery, outcome);
    answered?.();
    const log = attemptRow(delivery, outcome, trigger, began.at, performance.now() - began.ms);
    const settlement = settle(delivery, outcome, manual);
    this.metrics.outcome(settlement);
    if (!manual && (settlement === 'delivered' || settlement === 'retry_later')) {
      await this.routine.add({ delivery, outcome, settlement, now: now.toISOString(), log });
    } else {
      await recordWithSideEffects(this.db, this.notifier, { delivery, outcome, settlement, now, log });
    }
    if (settlement === 'retry_later')
      this.announcer.announce(now.getTime() + 1000 * (BACKOFF_SEC[Math.min(delivery.attempt, BACKOFF_SEC.length) - 1] ?? 0));
    return { outcome, settlement };
  }

  /**
   * A recovery's attempt (EXTENSIONS 6): the same event id, a fresh signature
   * and its own X-Merx-Delivery; it records nothing (recovery/recoveries.ts does, and
   * never touches the automatic schedule).
   */
  async resend(delivery: ClaimedDelivery): Promise<{ outcome: AttemptOutcome; log: AttemptRow }> {
    const sent: Sent = this.stopping
      ? { refused: 'the service is stopping', began: attemptStart() }
      : await this.sender.send(delivery, crypto.randomUUID(), true);
    const outcome = 'refused' in sent ? { statusCode: null, error: sent.refused, responseBody: null } : sent.outcome;
    if (!('refused' in sent)) await this.flow.note(delivery, outcome);
    return { outcome, log: attemptRow(delivery, outcome, 'recovery', sent.began.at, performance.now() - sent.began.ms) };
  }
}
