// One subscription: its actions, its health, its deliveries timeline (status,
// every attempt, next attempt, the answer it got, retry; filtered and paged),
// "Recover..." for a window, and what the debug sink captured.
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { admin, runOperation } from '../api';
import type { OperationName, SinkCapture, WebhookSubscription } from '../api-types';
import { useServiceInfo } from '../service-info';
import { Badge, CopyButton, Empty, ErrorNote, Json, Time } from '../components/ui';
import { Dialog } from '../components/dialog';
import { isSinkUrl, SubscriptionForm } from './webhook-form';
import { AttemptTimeline, FlowPanel, HealthPanel, RecoverDialog } from './webhook-ops';
import { useCursorPages } from '../components/paging';
import { DELIVERY_STATUSES } from '../choices';
import { queryKeys } from '../query-keys';

export function SubscriptionDetail({ accountId, subscription, events }: { accountId: string; subscription: WebhookSubscription; events: string[] }) {
  const info = useServiceInfo();
  const queries = useQueryClient();
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const [recovering, setRecovering] = useState(false);
  const [view, setView] = useState<'deliveries' | 'sink'>('deliveries');
  const refresh = () => {
    void queries.invalidateQueries({ queryKey: queryKeys.deliveries(subscription.id) });
    void queries.invalidateQueries({ queryKey: queryKeys.health(subscription.id) });
    void queries.invalidateQueries({ queryKey: queryKeys.flow(subscription.id) });
    void queries.invalidateQueries({ queryKey: queryKeys.attempts() });
    void queries.invalidateQueries({ queryKey: queryKeys.sink(subscription.id) });
    void queries.invalidateQueries({ queryKey: queryKeys.webhooks(accountId) });
  };
  const action = useMutation({
    mutationFn: ([name, args]: [OperationName, Record<string, unknown>]) => runOperation(accountId, name, args),
    onSuccess: (_r, [name]) => (name === 'delete_webhook' ? navigate(`/accounts/${accountId}/webhooks`) : refresh()),
    onSettled: refresh,
  });
  const onSink = isSinkUrl(info.data, subscription.url);
  return (
    <section className="card stack" aria-label="Subscription">
      <header className="row spread">
        <div>
          <h2>
            <span className="url">{subscription.url}</span> <Badge value={subscription.active ? 'active' : 'inactive'} />
          </h2>
          <p className="muted">
            {[subscription.description, `secret ${subscription.secret_prefix}`, subscription.events.join(', ')].filter(Boolean).join(' · ')}
          </p>
        </div>
        <div className="row">
          <button
            type="button"
            onClick={() => action.mutate(['test_webhook', { id: subscription.id }])}
            disabled={action.isPending || !subscription.active}
          >
            Send test event
          </button>
          <button type="button" className="secondary" onClick={() => setRecovering(true)} disabled={!subscription.active}>
            Recover...
          </button>
          <button type="button" className="secondary" onClick={() => setEditing(true)}>
            Edit
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => action.mutate(['update_webhook', { id: subscription.id, active: !subscription.active }])}
          >
            {subscription.active ? 'Deactivate' : 'Activate'}
          </button>
          <button
            type="button"
            className="danger"
            onClick={() => confirm('Delete this subscription and its deliveries?') && action.mutate(['delete_webhook', { id: subscription.id }])}
          >
            Delete
          </button>
        </div>
      </header>
      <ErrorNote error={action.error} />
      <FlowPanel accountId={accountId} webhookId={subscription.id} onChange={refresh} />
      <HealthPanel accountId={accountId} webhookId={subscription.id} />
      <nav className="tabs small" aria-label="Subscription views">
        <button type="button" className={view === 'deliveries' ? 'active' : ''} onClick={() => setView('deliveries')}>
          Deliveries
        </button>
        <button
          type="button"
          className={view === 'sink' ? 'active' : ''}
          onClick={() => setView('sink')}
          disabled={!onSink}
          title={onSink ? '' : 'Only for subscriptions on the debug sink'}
        >
          Debug sink
        </button>
      </nav>
      {view === 'deliveries' ? (
        <DeliveriesTimeline accountId={accountId} webhookId={subscription.id} events={events} onChange={refresh} />
      ) : (
        <SinkCaptures webhookId={subscription.id} />
      )}
      <RecoverDialog accountId={accountId} webhookId={subscription.id} open={recovering} onClose={() => (setRecovering(false), refresh())} />
      <Dialog title="Edit subscription" open={editing} onClose={() => setEditing(false)}>
        <SubscriptionForm accountId={accountId} events={events} subscription={subscription} onSaved={() => setEditing(false)} />
      </Dialog>
    </section>
  );
}

const PAGE_SIZE = 20;

function DeliveriesTimeline({
  accountId,
  webhookId,
  events,
  onChange,
}: {
  accountId: string;
  webhookId: string;
  events: string[];
  onChange: () => void;
}) {
  const [status, setStatus] = useState('');
  const [event, setEvent] = useState('');
  const pages = useCursorPages(`${webhookId}|${status}|${event}`);
  // The server's retry schedule decides when a delivery is dead; the page only says it.
  const attempts = useServiceInfo().data?.webhook_attempts;
  const page = useQuery({
    queryKey: queryKeys.deliveriesPage(webhookId, status, event, pages.cursor),
    queryFn: () =>
      runOperation(accountId, 'list_webhook_deliveries', {
        id: webhookId,
        limit: PAGE_SIZE,
        status,
        event,
        cursor: pages.cursor,
      }),
    // Attempts happen in the background: keep watching while any is still pending.
    refetchInterval: (query) => (query.state.data?.data.some((d) => d.status === 'pending') ? 2_000 : 10_000),
  });
  const deliveries = { error: page.error, data: page.data?.data };
  const nextCursor = page.data?._meta?.next_cursor ?? null;
  const filters = (
    <div className="row filters" aria-label="Delivery filters">
      <label>
        Status{' '}
        <select name="status" aria-label="Delivery status" value={status} onChange={(e) => setStatus(e.target.value)}>
          <option value="">any</option>
          {DELIVERY_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Event{' '}
        <select name="event" aria-label="Delivery event" value={event} onChange={(e) => setEvent(e.target.value)}>
          <option value="">any</option>
          {[...events, 'test'].map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <span className="muted">page {pages.page + 1}</span>
      <button type="button" className="small secondary" disabled={pages.page === 0} onClick={pages.previous}>
        Newer
      </button>
      <button type="button" className="small secondary" disabled={!nextCursor} onClick={() => pages.next(nextCursor)}>
        Older
      </button>
    </div>
  );
  const retry = useMutation({
    mutationFn: (id: string) => runOperation(accountId, 'retry_webhook_delivery', { id }),
    onSettled: onChange,
  });
  if (deliveries.error)
    return (
      <>
        {filters}
        <ErrorNote error={deliveries.error} />
      </>
    );
  if (deliveries.data?.length === 0)
    return (
      <>
        {filters}
        <Empty>
          {status || event ? 'No deliveries match these filters.' : 'No deliveries yet. Send a test event, or wait for the subscribed events.'}
        </Empty>
      </>
    );
  return (
    <>
      {filters}
      <ol className="timeline" aria-label="Deliveries">
        <ErrorNote error={retry.error} />
        {deliveries.data?.map((d) => (
          <li key={d.id} className={`delivery ${d.status}`} data-status={d.status}>
            <div className="row spread">
              <div className="row">
                <Badge value={d.status} /> <strong>{d.event}</strong>
                <span className="muted">
                  attempt {d.attempt}
                  {attempts ? ` of ${attempts}` : ''}
                </span>
                <span className="muted">
                  created <Time at={d.created_at} />
                </span>
              </div>
              <button type="button" className="small" disabled={d.status === 'delivered' || retry.isPending} onClick={() => retry.mutate(d.id)}>
                Retry now
              </button>
            </div>
            <dl className="inline-facts">
              <dt>Last answer</dt>
              <dd>
                {d.last_status_code ? <code>{d.last_status_code}</code> : '—'}
                {d.last_error && <span className="error-text"> {d.last_error}</span>}
              </dd>
              {d.status === 'pending' && (
                <>
                  <dt>Next attempt</dt>
                  <dd>
                    <Time at={d.next_attempt_at} />
                  </dd>
                </>
              )}
              {d.delivered_at && (
                <>
                  <dt>Delivered</dt>
                  <dd>
                    <Time at={d.delivered_at} />
                  </dd>
                </>
              )}
              <dt>Event id</dt>
              <dd>
                <code className="id">{d.event_id}</code>
              </dd>
            </dl>
            {d.response_body && (
              <details>
                <summary>Response body</summary>
                <pre className="json">{d.response_body}</pre>
              </details>
            )}
            <AttemptsToggle accountId={accountId} deliveryId={d.id} />
          </li>
        ))}
      </ol>
    </>
  );
}

/** The attempts of one delivery, read only once a person opens them. */
function AttemptsToggle({ accountId, deliveryId }: { accountId: string; deliveryId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <details className="attempts-toggle" onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>Attempts</summary>
      {open && <AttemptTimeline accountId={accountId} deliveryId={deliveryId} />}
    </details>
  );
}

function SinkCaptures({ webhookId }: { webhookId: string }) {
  const captures = useQuery({
    queryKey: queryKeys.sink(webhookId),
    queryFn: () => admin('GET', '/admin/api/webhooks/{id}/sink', { path: { id: webhookId } }).then((r) => r.data),
    refetchInterval: 5_000,
  });
  if (captures.error) return <ErrorNote error={captures.error} />;
  if (captures.data?.length === 0) return <Empty>The sink has captured nothing for this subscription yet.</Empty>;
  return (
    <ol className="timeline" aria-label="Captured requests">
      {captures.data?.map((c) => (
        <li key={c.id} className="capture">
          <p className="row">
            <strong>POST</strong> received <Time at={c.received_at} /> <code>{String(c.headers['x-merx-event'] ?? '')}</code>
          </p>
          <CapturedRequest capture={c} />
        </li>
      ))}
    </ol>
  );
}

/**
 * One captured request as it arrived: the body is shown and copied byte for
 * byte (the operator API's `body` is the raw text the sink stored), because a
 * signature is computed over exactly those bytes; a re-indented copy fails
 * verification with body_modified. The indented view is only for reading.
 */
function CapturedRequest({ capture }: { capture: SinkCapture }) {
  const headerLines = Object.entries(capture.headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
  const pretty = prettyJson(capture.body);
  return (
    <div className="stack">
      <section className="sink-part" aria-label="Raw body">
        <header>
          <strong>
            Raw body <span className="muted">({new TextEncoder().encode(capture.body).length} bytes, exactly as received)</span>
          </strong>
          <CopyButton text={capture.body} label="Copy raw body" />
        </header>
        <pre className="json sink-raw" data-testid="sink-raw-body" data-copy={capture.body}>
          {capture.body}
        </pre>
      </section>
      <details>
        <summary>Headers ({Object.keys(capture.headers).length})</summary>
        <section className="sink-part" aria-label="Headers">
          <header>
            <span className="muted">As received, one per line</span>
            <CopyButton text={headerLines} label="Copy headers" />
          </header>
          <pre className="json sink-raw" data-testid="sink-headers" data-copy={headerLines}>
            {headerLines}
          </pre>
        </section>
      </details>
      {pretty !== capture.body && (
        <details>
          <summary>Body, indented for reading (not for verifying)</summary>
          <Json value={pretty} />
        </details>
      )}
    </div>
  );
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
