// The delivery engine: the first attempt right after commit, the minute
// worker for due retries (and first attempts past their grace), and manual
// retries and tests. Each attempt: lease the row, re-check the URL, send,
// record the outcome with its side effects in one transaction.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';
import { envelopeText } from '../../platform/events.ts';
import type { Notifier } from '../../notify/notifier.ts';
import { checkWebhookUrl, type UrlPolicy } from './url-policy.ts';
import { sendDelivery, type AttemptOutcome, type SelfOrigin } from './sender.ts';
import { deliveryAttemptId, liveSecrets } from './signature.ts';
import {
  claimDue, claimFirstAttempt, claimForRetry, markFailed, newDeliveries, recordOutcome, settle,
  type ClaimedDelivery, type Settlement,
} from './deliveries.ts';

const WORKER_INTERVAL_MS = 60_000;
const WORKER_BATCH = 50;
/** First attempts in flight at once; more wait their turn (or, after the grace, the worker). */
const MAX_FIRST_ATTEMPTS = 16;

export interface AttemptResult {
  outcome: AttemptOutcome;
  settlement: Settlement;
}

export class DeliveryEngine {
  private db: Db;
  private notifier: Notifier;
  private log: FastifyBaseLogger;
  private policy: UrlPolicy;
  private self: SelfOrigin | null = null;
  private timer: NodeJS.Timeout | null = null;
  private inFlight = new Set<Promise<unknown>>();
  private queued: string[] = [];
  private firstAttempts = 0;
  private readonly onCreated = (ids: string[]) => {
    this.queued.push(...ids);
    this.drain();
  };

  /** Immediate attempts share the service with API requests: a bounded number at a time. */
  private drain(): void {
    while (this.firstAttempts < MAX_FIRST_ATTEMPTS && this.queued.length) {
      const id = this.queued.shift()!;
      this.firstAttempts++;
      this.track(
        this.attemptFirst(id).finally(() => {
          this.firstAttempts--;
          this.drain();
        }),
      );
    }
  }

  constructor(deps: { db: Db; notifier: Notifier; log: FastifyBaseLogger; policy: UrlPolicy }) {
    this.db = deps.db;
    this.notifier = deps.notifier;
    this.log = deps.log;
    this.policy = deps.policy;
  }

  start(options: { self: SelfOrigin; worker: boolean }): void {
    this.self = options.self;
    newDeliveries.on('created', this.onCreated);
    if (options.worker) {
      this.timer = setInterval(() => this.track(this.runDue(new Date())), WORKER_INTERVAL_MS);
      this.timer.unref();
    }
  }

  async stop(): Promise<void> {
    newDeliveries.off('created', this.onCreated);
    this.queued = []; // rows stay pending: the worker takes them over after the grace
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }

  private track(work: Promise<unknown>): void {
    const guarded = work.catch((err) => this.log.error({ err }, 'webhook delivery failed unexpectedly'));
    this.inFlight.add(guarded);
    void guarded.finally(() => this.inFlight.delete(guarded));
  }

  /** SPEC Receiver rules 4: attempt 1 is immediate; a no-op when another instance or the worker already took it. */
  async attemptFirst(deliveryId: string): Promise<AttemptResult | null> {
    const claimed = await claimFirstAttempt(this.db, deliveryId);
    return claimed ? this.attempt(claimed, false, new Date()) : null;
  }

  /** One worker pass as if the clock read `now`; returns how many attempts it made. */
  async runDue(now: Date): Promise<number> {
    let processed = 0;
    for (;;) {
      const batch = await claimDue(this.db, now.toISOString(), WORKER_BATCH);
      if (batch.length === 0) return processed;
      await Promise.all(batch.map((d) => this.attempt(d, false, now)));
      processed += batch.length;
    }
  }

  /** The retry endpoint: an immediate attempt with the same event id and a fresh signature. */
  async retry(deliveryId: string): Promise<AttemptResult> {
    const claimed = await claimForRetry(this.db, deliveryId);
    if (!claimed) throw new AppError('conflict', 'this delivery was already delivered');
    return (await this.attempt(claimed, true, new Date())) ?? { outcome: { statusCode: null, error: 'not sent', responseBody: null }, settlement: 'failed' };
  }

  private async attempt(delivery: ClaimedDelivery, manual: boolean, now: Date): Promise<AttemptResult | null> {
    // The claim came back with its subscription and merchant (the subscription cannot have vanished: its deletion cascades).
    const subscription = {
      url: delivery.url,
      active: delivery.subscription_active,
      merchant_email: delivery.merchant_email,
      merchant_name: delivery.merchant_name,
    };
    const fail = async (error: string): Promise<AttemptResult> => {
      await this.db.tx((tx) => markFailed(tx, delivery.id, error));
      return { outcome: { statusCode: null, error, responseBody: null }, settlement: 'failed' };
    };
    // GAPS Webhooks `failed`: deactivated while it waited, or the URL no longer passes the policy.
    if (!subscription.active && !manual) return fail('subscription is inactive');
    let target;
    try {
      target = await checkWebhookUrl(subscription.url, this.policy);
    } catch (err) {
      const reason = err instanceof AppError ? (err.details as { reason?: string } | undefined)?.reason : undefined;
      return fail(`url refused by policy: ${reason ?? 'invalid'}`);
    }
    if (!delivery.envelope) return fail('event no longer exists');
    const rawBody = envelopeText(delivery.envelope);
    const outcome = await sendDelivery(
      target,
      {
        rawBody,
        secrets: liveSecrets(delivery.secret, delivery.previous_secret, delivery.previous_secret_expires_at),
        event: delivery.event,
        eventId: delivery.event_id,
        attemptId: deliveryAttemptId(delivery.id, delivery.attempt),
      },
      this.self,
    );
    const settlement = settle(delivery, outcome, manual);
    await this.db.tx(async (tx) => {
      if (!(await recordOutcome(tx, delivery, outcome, settlement, now.toISOString()))) return;
      await tx.query(
        `UPDATE webhook_subscriptions SET last_triggered_at = now(), last_status_code = $2,
                dead_notified_at = CASE WHEN $3 THEN NULL ELSE dead_notified_at END,
                active = CASE WHEN $4 THEN false ELSE active END, updated_at = now()
          WHERE id = $1`,
        [delivery.webhook_id, outcome.statusCode, settlement === 'delivered', settlement === 'gone'],
      );
      // SPEC Receiver rules 5: one email per subscription until a delivery succeeds again.
      if (settlement === 'dead' && delivery.status === 'pending') {
        const { rowCount } = await tx.query(
          'UPDATE webhook_subscriptions SET dead_notified_at = now() WHERE id = $1 AND dead_notified_at IS NULL RETURNING id',
          [delivery.webhook_id],
        );
        if (rowCount) {
          await this.notifier.send(
            tx,
            {
              accountId: delivery.account_id,
              channel: 'email',
              to: subscription.merchant_email,
              subject: 'A Merx webhook endpoint keeps failing',
              body:
                `Hello ${subscription.merchant_name},\n\nthe ${delivery.event} event ${delivery.event_id} could not be delivered to ` +
                `${subscription.url} after 6 attempts (last error: ${outcome.error ?? 'unknown'}). Later events are still attempted; ` +
                'you can retry this delivery from the API. We will not email again about this endpoint until a delivery succeeds.\n\nMerx',
              kind: 'webhook_dead',
            },
          );
        }
      }
    });
    return { outcome, settlement };
  }
}
