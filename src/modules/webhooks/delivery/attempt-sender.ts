// One attempt on the network, recording nothing: the URL checked again, the
// secrets opened, the request signed and sent. The engine (engine.ts) decides
// when an attempt goes and records what came back.
import type { Db } from '../../../platform/db/db.ts';
import { envelopeText } from '../../../platform/db/outbox.ts';
import type { UrlPolicy } from '../subscriptions/url-policy.ts';
import { Senders, type AttemptOutcome, type SelfOrigin } from './https-sender.ts';
import { ThreadedSenders } from './sender-thread.ts';
import { OpenedSecrets } from '../signing/signature.ts';
import type { ClaimedDelivery } from './deliveries.ts';
import { UrlChecks } from './url-checks.ts';
import type { DeliveryMetrics } from './metrics.ts';
import { attemptStart, type AttemptStart } from '../attempts/log.ts';
import { sendInTurn } from './flow-rate.ts';

/** What one attempt came to: an answer (or a failure to get one), or why it could not be sent (GAPS Webhooks `failed`); `began`: after any wait for its turn in a rate. */
export type Sent = ({ outcome: AttemptOutcome } | { refused: string }) & { began: AttemptStart };

export class AttemptSender {
  private readonly db: Db;
  private readonly urls: UrlChecks;
  private readonly threaded: ThreadedSenders;
  /** EXTENSIONS 9: metered attempts must begin within their grant's budget, which the sender thread's low priority misses on busy cores. */
  private readonly metered = new Senders();
  /** Opened with this service's keyring (its Db's), cached per sealed text. */
  private readonly secrets: OpenedSecrets;
  private readonly metrics: DeliveryMetrics;
  private self: SelfOrigin | null = null;

  constructor(deps: { db: Db; policy: UrlPolicy; metrics: DeliveryMetrics; senderNice?: number }) {
    this.db = deps.db;
    this.urls = new UrlChecks(deps.policy);
    this.threaded = new ThreadedSenders({ nice: deps.senderNice });
    this.secrets = new OpenedSecrets((sealed) => deps.db.keyring.open(sealed));
    this.metrics = deps.metrics;
  }

  /** The service listens at `self` (its debug sink's origin): the sender thread starts now rather than at the first attempt. */
  start(self: SelfOrigin): void {
    this.self = self;
    this.threaded.warm();
  }

  /** One attempt; `inTurn`: one the worker did not claim (a retry, test or recovery), which takes a turn in a flowed subscription's rate. */
  send(delivery: ClaimedDelivery, attemptId: string, inTurn: boolean): Promise<Sent> {
    if (!inTurn || !delivery.flowed) return this.sendOnce(delivery, attemptId);
    const send = (startBy?: number) => this.sendOnce({ ...delivery, startBy }, attemptId);
    return sendInTurn(this.db, delivery.webhook_id, send, (sent) => 'outcome' in sent && sent.outcome.notStarted === true);
  }

  async close(): Promise<void> {
    await Promise.all([this.threaded.close(), this.metered.close()]);
  }

  private async sendOnce(delivery: ClaimedDelivery, attemptId: string): Promise<Sent> {
    const began = attemptStart();
    const verdict = await this.urls.check(delivery.url);
    if (!verdict.ok) return { refused: `url refused by policy: ${verdict.reason}`, began };
    if (!delivery.envelope) return { refused: 'event no longer exists', began };
    const target = verdict.target;
    const origin = target.kind === 'sink' ? 'sink' : target.url.origin;
    this.metrics.inFlight(origin, 1);
    try {
      const started = performance.now();
      const outcome = await (delivery.startBy === undefined ? this.threaded : this.metered).send(
        target,
        {
          rawBody: delivery.body ?? envelopeText(delivery.envelope),
          // Opened here, on the main thread: the sender thread gets the secrets it signs with, never the keyring.
          secrets: this.secrets.live(delivery.secret, delivery.previous_secret, delivery.previous_secret_expires_at),
          event: delivery.event,
          eventId: delivery.event_id,
          attemptId,
          resourceVersion: delivery.resource_version,
          startBy: delivery.startBy,
        },
        this.self,
      );
      this.metrics.attemptSeconds((performance.now() - started) / 1000);
      return { outcome, began };
    } finally {
      this.metrics.inFlight(origin, -1);
    }
  }
}
