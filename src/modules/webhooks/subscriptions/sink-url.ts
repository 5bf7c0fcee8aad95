// Issue 28: a subscription pointed at the service's own debug sink is stored
// with its own id (`?id=<this subscription>`). A sink URL naming another
// subscription, or a malformed id, would be accepted and then fail on every
// delivery (the sink answers 404/400), so it is refused up front.
import { AppError } from '../../../platform/contract/errors.ts';
import type { CheckedTarget } from './url-policy.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function refused(reason: string, message: string): AppError {
  return new AppError('validation_failed', message, { reason });
}

/**
 * The URL to store for `subscriptionId`. A remote target is stored as given;
 * a debug-sink target gets `?id=<subscriptionId>` when it names no id, keeps
 * it when it names this subscription, and is refused otherwise
 * (details.reason `sink_foreign_id`, `sink_malformed_id` or `sink_query`).
 * On create the new id is unknown to the caller, so any id is foreign.
 */
export function storedWebhookUrl(raw: string, target: CheckedTarget, subscriptionId: string): string {
  if (target.kind !== 'sink') return raw;
  const url = new URL(target.url);
  const others = [...url.searchParams.keys()].filter((name) => name !== 'id');
  if (others.length) {
    throw refused(
      'sink_query',
      `a debug sink url takes only the id parameter (found ${others.map((n) => `"${n}"`).join(', ')}); leave it out and Merx adds this subscription's id`,
    );
  }
  const ids = url.searchParams.getAll('id');
  if (ids.length > 1) throw refused('sink_malformed_id', "a debug sink url names one id at most; leave it out and Merx adds this subscription's id");
  const id = ids[0];
  if (id !== undefined && !UUID.test(id)) {
    throw refused(
      'sink_malformed_id',
      `the debug sink url's id "${id}" is not a subscription id (UUID); leave it out and Merx adds this subscription's id`,
    );
  }
  if (id !== undefined && id.toLowerCase() !== subscriptionId.toLowerCase()) {
    throw refused(
      'sink_foreign_id',
      `the debug sink url names another subscription (${id}); the sink takes a subscription's own deliveries only, so leave the id out and Merx adds this subscription's id`,
    );
  }
  url.hash = '';
  url.search = `?id=${subscriptionId}`;
  return url.toString();
}
