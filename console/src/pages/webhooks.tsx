// Webhook subscriptions of an account: create (on any HTTPS URL or the
// service's own debug sink), edit, test, and each one's deliveries timeline
// and the requests the debug sink captured.
import { useState, type FormEvent } from 'react';
import { Route, Routes, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { runOperation, type ServiceInfo } from '../api';
import { useServiceInfo } from '../app';
import { Badge, CopyButton, ErrorNote, Field, Time } from '../components/ui';
import { Table } from '../components/table';
import { Dialog } from '../components/dialog';
import { SubscriptionDetail } from './webhook-detail';

export interface Subscription {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  active: boolean;
  secret_prefix: string;
  last_triggered_at: string | null;
  last_status_code: number | null;
  dead_notified_at: string | null;
  created_at: string;
  updated_at: string | null;
}

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

export function useSubscriptions(accountId: string) {
  return useQuery({
    queryKey: ['webhooks', accountId],
    queryFn: () => runOperation<{ data: Subscription[]; events: string[] }>(accountId, 'list_webhooks'),
  });
}

export function WebhooksTab({ accountId }: { accountId: string }) {
  return (
    <Routes>
      <Route index element={<WebhooksLayout accountId={accountId} />} />
      <Route path=":webhookId" element={<WebhooksLayout accountId={accountId} />} />
    </Routes>
  );
}

function WebhooksLayout({ accountId }: { accountId: string }) {
  const { webhookId } = useParams();
  const navigate = useNavigate();
  const subscriptions = useSubscriptions(accountId);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const selected = subscriptions.data?.data.find((s) => s.id === webhookId);
  return (
    <div className="stack">
      <header className="row spread">
        <p className="muted">Up to 20 subscriptions. Deliveries are signed with each subscription's secret (shown once).</p>
        <button type="button" onClick={() => setCreating(true)}>New subscription</button>
      </header>
      <ErrorNote error={subscriptions.error} />
      <Table
        label="Subscriptions"
        empty="No subscriptions yet. Create one on the debug sink to watch deliveries without a server of your own."
        rows={subscriptions.data?.data}
        rowKey={(s) => s.id}
        selected={webhookId}
        onOpen={(s) => navigate(`/accounts/${accountId}/webhooks/${s.id}`)}
        columns={[
          { header: 'URL', cell: (s) => <span className="url">{s.url}</span> },
          { header: 'Events', cell: (s) => <span className="scopes">{s.events.join(' ')}</span> },
          { header: 'State', cell: (s) => <Badge value={s.active ? 'active' : 'inactive'} /> },
          { header: 'Last answer', cell: (s) => (s.last_status_code ? <code>{s.last_status_code}</code> : <span className="muted">—</span>) },
          { header: 'Last sent', cell: (s) => <Time at={s.last_triggered_at} empty="never" /> },
        ]}
      />
      {selected && <SubscriptionDetail accountId={accountId} subscription={selected} events={subscriptions.data?.events ?? []} />}
      <Dialog title="New subscription" open={creating} onClose={() => setCreating(false)}>
        <SubscriptionForm
          accountId={accountId}
          events={subscriptions.data?.events ?? []}
          onCreated={(id, created) => {
            setCreating(false);
            setSecret(created);
            navigate(`/accounts/${accountId}/webhooks/${id}`);
          }}
        />
      </Dialog>
      <Dialog title="Signing secret" open={!!secret} onClose={() => setSecret(null)}>
        {secret && (
          <div className="stack">
            <p>The subscription's secret, shown this once. Receivers verify each delivery's signature with it.</p>
            <div className="secret">
              <code data-copy={secret}>{secret}</code>
              <CopyButton text={secret} />
            </div>
            <button type="button" onClick={() => setSecret(null)}>Done</button>
          </div>
        )}
      </Dialog>
    </div>
  );
}

/** Create, or edit when `subscription` is given. */
export function SubscriptionForm({ accountId, events, subscription, onCreated, onSaved }: {
  accountId: string;
  events: string[];
  subscription?: Subscription;
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
      return runOperation<{ data: Subscription; secret: string }>(accountId, 'create_webhook', { url: target, events: chosen, description });
    },
    onSuccess: (created) => {
      queries.invalidateQueries({ queryKey: ['webhooks', accountId] });
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
            <input type="checkbox" checked={chosen.includes(event)} onChange={(e) => setChosen(e.target.checked ? [...chosen, event] : chosen.filter((x) => x !== event))} />
            {event}
          </label>
        ))}
      </fieldset>
      <Field label="Description">
        <input value={description} onChange={(e) => setDescription(e.target.value)} maxLength={500} />
      </Field>
      <ErrorNote error={save.error} />
      <button type="submit" disabled={save.isPending || chosen.length === 0}>{subscription ? 'Save changes' : 'Create subscription'}</button>
    </form>
  );
}
