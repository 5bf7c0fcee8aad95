// One account: its header and tabs; each tab is a page of its own.
import { useState } from 'react';
import { Link, NavLink, Navigate, Route, Routes, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { admin, ApiError } from '../api';
import type { Account, OperatorInput } from '../api-types';
import { Badge, ErrorNote, Field, Json, Time } from '../components/ui';
import { KeysTab } from './keys';
import { ConnectedAppsTab } from './connected-apps';
import { WebhooksTab } from './webhooks';
import { OrdersTab } from './orders';
import { OrderDetail } from './order-detail';
import { ShipmentsTab } from './shipments';
import { ShipmentDetail } from './shipment-detail';
import { BatchDetail } from './batch-detail';
import { StockTab } from './stock';
import { ApprovalsTab, usePendingApprovals } from './approvals';
import { EventDetail, RequestLogTab } from './request-log';
import { queryKeys } from '../query-keys';

const TABS = [
  ['orders', 'Orders'],
  ['shipments', 'Shipments'],
  ['stock', 'Stock'],
  ['webhooks', 'Webhooks'],
  ['keys', 'API keys'],
  ['apps', 'Connected apps'],
  ['approvals', 'Approvals'],
  ['requests', 'Request log'],
  ['messages', 'Messages'],
  ['overview', 'Settings'],
] as const;

type AccountChanges = OperatorInput<'PATCH', '/admin/api/accounts/{id}'>['body'];

export function useAccount(accountId: string) {
  return useQuery({
    queryKey: queryKeys.account(accountId),
    queryFn: () => admin('GET', '/admin/api/accounts/{id}', { path: { id: accountId } }).then((r) => r.data),
  });
}

export function AccountPage() {
  const { accountId = '' } = useParams();
  const account = useAccount(accountId);
  const pending = usePendingApprovals(account.data ? accountId : undefined).data?.length ?? 0;
  // Issue 41: an account that cannot be read is said once, without tabs and filters that would each fail again.
  if (account.error) {
    const missing = account.error instanceof ApiError && account.error.status === 404;
    return (
      <section className="stack">
        <header className="page-head">
          <h1>{missing ? 'No such account' : 'Account unavailable'}</h1>
        </header>
        <ErrorNote error={account.error} />
        <p>
          <Link to="/accounts">← All accounts</Link>
        </p>
      </section>
    );
  }
  if (!account.data) return <p className="muted">Loading…</p>;
  return (
    <section>
      <header className="page-head">
        <div>
          <h1>{account.data?.name ?? 'Account'}</h1>
          {account.data && (
            <p className="muted">
              {account.data.email} · <Badge value={account.data.plan} /> <Badge value={account.data.active ? 'active' : 'inactive'} /> ·{' '}
              <code className="id">{accountId}</code>
            </p>
          )}
        </div>
      </header>
      <nav className="tabs" aria-label="Account">
        {TABS.map(([path, label]) => (
          <NavLink key={path} to={`/accounts/${accountId}/${path}`}>
            {label}
            {path === 'approvals' && pending > 0 && (
              <span className="count" aria-label={`${pending} pending`}>
                {' '}
                {pending}
              </span>
            )}
          </NavLink>
        ))}
      </nav>
      <Routes>
        <Route index element={<Navigate to="orders" replace />} />
        <Route path="orders" element={<OrdersTab accountId={accountId} />} />
        <Route path="orders/:orderId" element={<OrderDetail accountId={accountId} />} />
        <Route path="shipments" element={<ShipmentsTab accountId={accountId} />} />
        <Route path="shipments/:shipmentId" element={<ShipmentDetail accountId={accountId} />} />
        <Route path="batches/:batchId" element={<BatchDetail accountId={accountId} />} />
        <Route path="stock" element={<StockTab accountId={accountId} />} />
        <Route path="webhooks/*" element={<WebhooksTab accountId={accountId} />} />
        <Route path="keys" element={<KeysTab accountId={accountId} />} />
        <Route path="apps" element={<ConnectedAppsTab accountId={accountId} />} />
        <Route path="approvals" element={<ApprovalsTab accountId={accountId} />} />
        <Route path="requests" element={<RequestLogTab accountId={accountId} />} />
        <Route path="events/:eventId" element={<EventDetail accountId={accountId} />} />
        <Route path="messages" element={<MessagesTab accountId={accountId} />} />
        <Route path="overview" element={account.data ? <SettingsTab account={account.data} /> : null} />
      </Routes>
    </section>
  );
}

function SettingsTab({ account }: { account: Account }) {
  const queries = useQueryClient();
  const [plan, setPlan] = useState(account.plan);
  const [threshold, setThreshold] = useState(String(account.default_threshold));
  const save = useMutation({
    mutationFn: (changes: AccountChanges) => admin('PATCH', '/admin/api/accounts/{id}', { path: { id: account.id }, body: changes }),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: queryKeys.account(account.id) });
      void queries.invalidateQueries({ queryKey: queryKeys.accounts() });
    },
  });
  const seed = useMutation({
    mutationFn: (input: { orders: number; products: number }) =>
      admin('POST', '/admin/api/accounts/{id}/seed', { path: { id: account.id }, body: input }),
    onSuccess: () => queries.invalidateQueries({ queryKey: queryKeys.orders(account.id) }),
  });
  const [seedOrders, setSeedOrders] = useState('1000');
  return (
    <div className="grid two">
      <form
        className="card stack"
        onSubmit={(e) => (e.preventDefault(), save.mutate({ plan, default_threshold: Number(threshold) }))}
        aria-label="Plan and thresholds"
      >
        <h2>Plan and stock</h2>
        <Field label="Plan" hint="Free accounts' keys authenticate, and every call answers 403 plan_required.">
          <select value={plan} onChange={(e) => setPlan(e.target.value as Account['plan'])}>
            <option value="pro">pro</option>
            <option value="business">business</option>
            <option value="free">free</option>
          </select>
        </Field>
        <Field label="Default low-stock threshold">
          <input type="number" min={0} value={threshold} onChange={(e) => setThreshold(e.target.value)} />
        </Field>
        <button type="submit" disabled={save.isPending}>
          Save
        </button>
        <ErrorNote error={save.error} />
      </form>
      <div className="card stack">
        <h2>Access</h2>
        <p>
          {account.active ? 'Active: its keys work.' : 'Deactivated: every key answers 401 until it is reactivated.'} Created{' '}
          <Time at={account.created_at} />.
        </p>
        <button
          type="button"
          className={account.active ? 'danger' : ''}
          onClick={() =>
            (account.active ? confirm(`Deactivate ${account.name}? Its API keys stop working at once.`) : true) &&
            save.mutate({ active: !account.active })
          }
        >
          {account.active ? 'Deactivate account' : 'Reactivate account'}
        </button>
        <h2>Demo data</h2>
        <form className="row" onSubmit={(e) => (e.preventDefault(), seed.mutate({ orders: Number(seedOrders), products: 50 }))} aria-label="Seed">
          <Field label="Orders to add">
            <input type="number" min={0} max={2000000} value={seedOrders} onChange={(e) => setSeedOrders(e.target.value)} />
          </Field>
          <button type="submit" className="secondary" disabled={seed.isPending}>
            {seed.isPending ? 'Loading…' : 'Load synthetic orders'}
          </button>
        </form>
        {seed.data && <Json value={seed.data} />}
        <ErrorNote error={seed.error} />
      </div>
      <CourierIntegrations accountId={account.id} />
    </div>
  );
}

/** The merchant's own courier integrations: a shipment needs its courier enabled. */
function CourierIntegrations({ accountId }: { accountId: string }) {
  const queries = useQueryClient();
  const list = useQuery({
    queryKey: queryKeys.integrations(accountId),
    queryFn: () => admin('GET', '/admin/api/accounts/{id}/couriers', { path: { id: accountId } }).then((r) => r.data),
  });
  // What the operator just chose shows at once; the list read after the change settles it.
  const [chosen, setChosen] = useState<Record<string, boolean>>({});
  const toggle = useMutation({
    mutationFn: ({ slug, enabled }: { slug: string; enabled: boolean }) =>
      admin('PUT', '/admin/api/accounts/{id}/couriers/{slug}', { path: { id: accountId, slug }, body: { enabled } }),
    onSettled: async (_answer, _error, { slug }) => {
      await queries.invalidateQueries({ queryKey: queryKeys.integrations(accountId) });
      setChosen(({ [slug]: _settled, ...others }) => others);
    },
  });
  return (
    <fieldset className="card stack" aria-label="Courier integrations">
      <legend>Courier integrations</legend>
      <p className="muted">
        Shipments go through the merchant's own courier accounts. In simulator mode an integration without credentials uses the simulator's demo
        credentials.
      </p>
      {list.data?.map((i) => (
        <label key={i.slug} className="inline">
          <input
            type="checkbox"
            checked={chosen[i.slug] ?? i.enabled}
            onChange={(e) => {
              setChosen({ ...chosen, [i.slug]: e.target.checked });
              toggle.mutate({ slug: i.slug, enabled: e.target.checked });
            }}
          />
          {i.slug}
          {i.credentials_set.length > 0 && <span className="muted"> · credentials: {i.credentials_set.join(', ')}</span>}
        </label>
      ))}
      <ErrorNote error={list.error ?? toggle.error} />
    </fieldset>
  );
}

function MessagesTab({ accountId }: { accountId: string }) {
  const messages = useQuery({
    queryKey: queryKeys.messages(accountId),
    queryFn: () => admin('GET', '/admin/api/accounts/{id}/messages', { path: { id: accountId } }).then((r) => r.data),
  });
  return (
    <div className="stack">
      <p className="muted">What the service sent for this account: customers' shipped notices and the merchant's dead-webhook emails.</p>
      <ErrorNote error={messages.error} />
      {messages.data?.length === 0 && <p className="empty">Nothing sent yet.</p>}
      {messages.data?.map((m) => (
        <article key={m.id} className="card">
          <header className="row">
            <Badge value={m.channel} /> <strong>{m.subject ?? m.kind}</strong> <span className="muted">to {m.to}</span> <Time at={m.created_at} />
          </header>
          <pre className="json">{m.body}</pre>
        </article>
      ))}
    </div>
  );
}
