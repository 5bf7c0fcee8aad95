// Senders on a thread of their own (sender-thread-worker.ts), with Senders' send():
// the request loop hands an attempt over and gets its outcome back. Measured
// in bench:webhooks (bench/RESULTS-webhooks-sender-thread.md): TLS, HTTP and
// signing on the request loop took a fifth of its time during a fan-out
// burst, time that PATCHes waited for; on its own thread it runs beside them
// (PATCH throughput during the burst up 6-12 points in two 3-round runs). The
// hop has a price on two busy cores: commit-to-receipt p99 below capacity went
// from 56-70 ms to 74-142 ms in those runs, well inside SPEC's seconds.
//
// The thread runs at a lower priority (a nice value, Linux): deliveries are
// background work, so in a burst that fills the cores the API requests that
// cause them go first and the deliveries catch up in the gaps; below capacity
// nothing waits (bench/RESULTS-webhooks-priority.md).
import { Worker, SHARE_ENV } from 'node:worker_threads';
import type { AttemptOutcome, OutgoingDelivery, SelfOrigin } from './https-sender.ts';
import type { CheckedTarget } from '../subscriptions/url-policy.ts';

/** A target as it crosses threads: the URL as text (a URL object is not cloneable). */
export type PortableTarget = { kind: 'remote'; href: string; address: string; family: 4 | 6 } | { kind: 'sink'; href: string };

export interface SendRequest {
  id: number;
  target: PortableTarget;
  delivery: OutgoingDelivery;
  self: SelfOrigin | null;
}

export interface SendAnswer {
  id: number;
  outcome: AttemptOutcome;
}

/** What the thread is started with. */
export interface SendThreadOptions {
  /** The thread's nice value, 0 (as the request loop) to 19 (only what others leave). */
  nice: number;
}

function portable(target: CheckedTarget): PortableTarget {
  return target.kind === 'remote'
    ? { kind: 'remote', href: target.url.href, address: target.address, family: target.family }
    : { kind: 'sink', href: target.url.href };
}

/** portable()'s inverse, on the sender thread. */
export function checked(target: PortableTarget): CheckedTarget {
  return target.kind === 'remote'
    ? { kind: 'remote', url: new URL(target.href), address: target.address, family: target.family }
    : { kind: 'sink', url: new URL(target.href) };
}

export class ThreadedSenders {
  private readonly options: SendThreadOptions;
  private worker: Worker | null = null;
  private nextId = 1;
  private waiting = new Map<number, (outcome: AttemptOutcome) => void>();
  private outbox: SendRequest[] = [];

  constructor(options: Partial<SendThreadOptions> = {}) {
    this.options = { nice: options.nice ?? 0 };
  }

  /** The thread, started on the first attempt and again after one that ended. */
  private thread(): Worker {
    if (this.worker) return this.worker;
    // SHARE_ENV: a NODE_EXTRA_CA_CERTS set later in this process is trusted by the thread too (https-sender.ts trustedContext).
    const worker = new Worker(new URL('./sender-thread-worker.ts', import.meta.url), { env: SHARE_ENV, workerData: this.options });
    worker.on('message', (answers: SendAnswer[]) => {
      for (const a of answers) {
        const resolve = this.waiting.get(a.id);
        this.waiting.delete(a.id);
        resolve?.(a.outcome);
      }
      if (this.waiting.size === 0) worker.unref();
    });
    // A thread that died takes its attempts with it: each is a failed attempt (it may have reached the receiver), retried on schedule.
    const ended = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = null;
      const waiting = [...this.waiting.values()];
      this.waiting.clear();
      for (const resolve of waiting) resolve({ statusCode: null, error: `connection: the sender thread ${why}`, responseBody: null });
    };
    worker.on('error', (err) => ended(`failed (${err.message})`));
    worker.on('exit', (code) => ended(`exited (${code})`));
    this.worker = worker;
    return worker;
  }

  /**
   * Starts the thread now rather than on the first attempt (loading it takes
   * a few hundred milliseconds): a rate's starts are counted when they are
   * claimed, and the first of them must not reach the receiver that much later
   * than the next (EXTENSIONS 9). Idle, it keeps no process alive.
   */
  warm(): void {
    this.thread().unref();
  }

  send(target: CheckedTarget, delivery: OutgoingDelivery, self: SelfOrigin | null): Promise<AttemptOutcome> {
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.waiting.set(id, resolve);
      // All attempts handed over in one turn of the loop cross as one message.
      if (this.outbox.push({ id, target: portable(target), delivery, self }) === 1) {
        queueMicrotask(() => {
          const batch = this.outbox;
          this.outbox = [];
          const worker = this.thread();
          worker.ref(); // attempts are waiting: the process stays up for their outcomes
          worker.postMessage(batch);
        });
      }
    });
  }

  /** Closes the thread's connections and ends it (the engine waited for the attempts in flight first). */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    await worker.terminate();
  }
}
