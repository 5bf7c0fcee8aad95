// The webhook sender's own thread (threaded-senders.ts): each attempt's
// HTTPS (TLS, HTTP, signing) runs here, off the event loop that serves API
// requests. Attempts and their outcomes cross in batches, one message per
// turn of either loop.
import { parentPort, isMainThread } from 'node:worker_threads';
import { Senders, type AttemptOutcome, type OutgoingDelivery, type SelfOrigin } from './sender.ts';
import type { CheckedTarget } from './url-policy.ts';

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

export function portable(target: CheckedTarget): PortableTarget {
  return target.kind === 'remote'
    ? { kind: 'remote', href: target.url.href, address: target.address, family: target.family }
    : { kind: 'sink', href: target.url.href };
}

function checked(target: PortableTarget): CheckedTarget {
  return target.kind === 'remote'
    ? { kind: 'remote', url: new URL(target.href), address: target.address, family: target.family }
    : { kind: 'sink', url: new URL(target.href) };
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  const senders = new Senders();
  let answers: SendAnswer[] = [];
  const answer = (a: SendAnswer) => {
    if (answers.push(a) === 1) setImmediate(() => {
      const batch = answers;
      answers = [];
      port.postMessage(batch);
    });
  };
  port.on('message', (message: SendRequest[] | 'close') => {
    if (message === 'close') {
      void senders.close().finally(() => port.close());
      return;
    }
    for (const r of message) {
      void senders.send(checked(r.target), r.delivery, r.self).then(
        (outcome) => answer({ id: r.id, outcome }),
        (err: Error) => answer({ id: r.id, outcome: { statusCode: null, error: `connection: ${err.message}`, responseBody: null } }),
      );
    }
  });
}
