// Webhook subscriptions of an account: create (on any HTTPS URL or the
// service's own debug sink), edit, test, and each one's deliveries timeline
// and the requests the debug sink captured.
import { useState } from 'react';
import { Route, Routes, useNavigate, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { runOperation } from '../api';
import { Badge, CopyButton, ErrorNote, Time } from '../components/ui';
import { Table } from '../components/table';
import { Dialog } from '../components/dialog';
import { SubscriptionDetail } from './webhook-detail';
import { SubscriptionForm } from './webhook-form';
import { queryKeys } from '../query-keys';

export function useSubscriptions(accountId: string) {
  return useQuery({
    queryKey: queryKeys.webhooks(accountId),
    queryFn: () => runOperation(accountId, 'list_webhooks'),
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
        <button type="button" onClick={() => setCreating(true)}>
          New subscription
        </button>
      </header>
      <ErrorNote error={subscriptions.error} />
      <Table
        label="Subscriptions"
        empty="No subscriptions yet. Create one on the debug sink to watch deliveries without a server of your own."
        rows={subscriptions.data?.data}
        rowKey={(s) => s.id}
        selected={webhookId}
        onOpen={(s) => void navigate(`/accounts/${accountId}/webhooks/${s.id}`)}
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
            void navigate(`/accounts/${accountId}/webhooks/${id}`);
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
            <button type="button" onClick={() => setSecret(null)}>
              Done
            </button>
          </div>
        )}
      </Dialog>
    </div>
  );
}
