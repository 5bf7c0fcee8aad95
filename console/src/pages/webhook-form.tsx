// A webhook subscription's form, to create one or edit one: on any HTTPS URL
// or on this service's own debug sink in one click.
import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { runOperation } from '../api';
import type { ServiceInfo, WebhookSubscription } from '../api-types';
import { useServiceInfo } from '../service-info';
import { ErrorNote, Field } from '../components/ui';
import { queryKeys } from '../query-keys';

export const sinkUrlOf = (info: ServiceInfo, id: string) => `${info.sink_url}?id=${id}`;
/** Whether a subscription delivers to this service's debug sink: compared as the service does (scheme, host, path), not as text, so `http://localhost/api/webhooks/sink?id=…` counts too. */
export function isSinkUrl(info: ServiceInfo | undefined, url: string): boolean {
  if (!info) return false;
  try {
    const target = new URL(url);
    const sink = new URL(info.sink_url);
    return target.protocol === sink.protocol && target.hostname === sink.hostname && target.pathname === sink.pathname;
  } catch {
    return false;
  }
}

/** Create, or edit when `subscription` is given. */
export function SubscriptionForm({
  accountId,
  events,
  subscription,
  onCreated,
  onSaved,
}: {
  accountId: string;
  events: string[];
  subscription?: WebhookSubscription;
  onCreated?: (id: string, secret: string) => void;
  onSaved?: () => void;
}) {
  const info = useServiceInfo();
  const queries = useQueryClient();
  const [toSink, setToSink] = useState(subscription ? isSinkUrl(info.data, subscription.url) : true);
  const [url, setUrl] = useState(subscription?.url ?? 'https://');
  const [chosen, setChosen] = useState<string[]>(subscription?.events ?? ['order.created', 'order.status_changed']);
  const [description, setDescription] = useState(subscription?.description ?? '');
  const save = useMutation({
    mutationFn: async () => {
      if (subscription) {
        const target = toSink && info.data ? sinkUrlOf(info.data, subscription.id) : url;
        await runOperation(accountId, 'update_webhook', { id: subscription.id, url: target, events: chosen, description });
        return null;
      }
      // The sink URL without ?id=: the service stores it with the new subscription's own id.
      const target = toSink && info.data ? info.data.sink_url : url;
      return runOperation(accountId, 'create_webhook', { url: target, events: chosen, description });
    },
    onSuccess: (created) => {
      void queries.invalidateQueries({ queryKey: queryKeys.webhooks(accountId) });
      if (created) onCreated?.(created.data.id, created.secret);
      else onSaved?.();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <form className="stack" onSubmit={submit} aria-label={subscription ? 'Edit subscription' : 'New subscription'}>
      <label className="inline">
        <input type="checkbox" checked={toSink} onChange={(e) => setToSink(e.target.checked)} /> Deliver to this service's debug sink
      </label>
      {!toSink && (
        <Field label="Endpoint URL" hint="https only; private and loopback addresses are refused unless WEBHOOK_ALLOW_HOSTS allows them.">
          <input type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />
        </Field>
      )}
      <fieldset className="checks">
        <legend>Events</legend>
        {events.map((event) => (
          <label key={event}>
            <input
              type="checkbox"
              checked={chosen.includes(event)}
              onChange={(e) => setChosen(e.target.checked ? [...chosen, event] : chosen.filter((x) => x !== event))}
            />
            {event}
          </label>
        ))}
      </fieldset>
      <Field label="Description">
        <input value={description} onChange={(e) => setDescription(e.target.value)} maxLength={500} />
      </Field>
      <ErrorNote error={save.error} />
      <button type="submit" disabled={save.isPending || chosen.length === 0}>
        {subscription ? 'Save changes' : 'Create subscription'}
      </button>
    </form>
  );
}
