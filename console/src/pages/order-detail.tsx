// One order: what the customer bought and where it goes, its shipment (create
// one, with a dry-run preview first), status changes, and its history from
// the events feed where the deployment has one.
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { runOperation } from '../api';
import type { Order, Shipment } from '../api-types';
import { useCourierSlugs, useServiceInfo } from '../service-info';
import { ORDER_STATUSES } from '../choices';
import { Badge, ErrorNote, money, Time } from '../components/ui';
import { CourierProgress, deliveredTo, deliveryWords, Said, waybillPreviewWords } from '../components/said';
import { TableScroll } from '../components/table';
import { queryKeys } from '../query-keys';

export function OrderDetail({ accountId }: { accountId: string }) {
  const { orderId = '' } = useParams();
  const queries = useQueryClient();
  const order = useQuery({
    queryKey: queryKeys.order(orderId),
    queryFn: () => runOperation(accountId, 'get_order', { id: orderId }).then((r) => r.data),
    // A shipment's courier moves the order too: keep it fresh while one is under way.
    refetchInterval: (query) =>
      query.state.data?.shipment && !['delivered', 'cancelled', 'returned', 'refused'].includes(query.state.data.shipment.status) ? 3_000 : false,
  });
  const changed = () => {
    void queries.invalidateQueries({ queryKey: queryKeys.order(orderId) });
    void queries.invalidateQueries({ queryKey: queryKeys.orders(accountId) });
    void queries.invalidateQueries({ queryKey: queryKeys.orderEvents(orderId) });
  };
  if (order.error) return <ErrorNote error={order.error} />;
  const o = order.data;
  if (!o) return <p className="muted">Loading…</p>;
  return (
    <div className="stack">
      <p>
        <Link to={`/accounts/${accountId}/orders`}>← Orders</Link>
      </p>
      <header className="row spread">
        <h2>
          Order #{o.number} <Badge value={o.status} />
        </h2>
        <span className="muted">
          created <Time at={o.created_at} /> · updated <Time at={o.updated_at} /> · <code className="id">{o.id}</code>
        </span>
      </header>
      <div className="grid two">
        <section className="card stack" aria-label="Order">
          <h3>Customer and delivery</h3>
          <dl className="facts-grid">
            <dt>Customer</dt>
            <dd>{o.customer.name ?? '—'}</dd>
            <dt>Email</dt>
            <dd>{o.customer.email ?? '—'}</dd>
            <dt>Phone</dt>
            <dd>{o.customer.phone ?? '—'}</dd>
            <dt>Address</dt>
            <dd>{[o.shipping.address, o.shipping.city, o.shipping.zip].filter(Boolean).join(', ') || '—'}</dd>
            <dt>Chosen courier</dt>
            <dd>
              {String(o.shipping.courier_slug ?? '—')}
              {o.shipping.courier_delivery_mode ? ` · ${deliveryWords(o.shipping.courier_delivery_mode, o.shipping.courier_office_id)}` : ''}
            </dd>
            <dt>Payment</dt>
            <dd>
              {o.payment_method} · <Badge value={o.payment_status} />
            </dd>
            <dt>Total</dt>
            <dd>{money(o.total)}</dd>
            <dt>Tracking</dt>
            <dd>{o.tracking_number ? o.tracking_url ? <a href={o.tracking_url}>{o.tracking_number}</a> : o.tracking_number : '—'}</dd>
            {o.notes && (
              <>
                <dt>Customer note</dt>
                <dd>{o.notes}</dd>
              </>
            )}
            {o.admin_notes && (
              <>
                <dt>Internal note</dt>
                <dd>{o.admin_notes}</dd>
              </>
            )}
          </dl>
          <h3>Items</h3>
          <TableScroll>
            <table aria-label="Items">
              <thead>
                <tr>
                  <th>Item</th>
                  <th>SKU</th>
                  <th className="num">Qty</th>
                  <th className="num">Total</th>
                </tr>
              </thead>
              <tbody>
                {(
                  o.line_items ?? [
                    {
                      name: o.product_name ?? '—',
                      sku: null,
                      qty: o.quantity ?? 1,
                      total_cents: Math.round((o.unit_price ?? 0) * (o.quantity ?? 1) * 100),
                      unit_price_cents: 0,
                      kind: 'main',
                    },
                  ]
                ).map((item, i) => (
                  <tr key={i}>
                    <td>{item.name}</td>
                    <td>{item.sku ?? '—'}</td>
                    <td className="num">{item.qty}</td>
                    <td className="num">{money(item.total_cents / 100)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        </section>
        <div className="stack">
          <ShipmentCard accountId={accountId} order={o} onChange={changed} />
          <StatusCard accountId={accountId} order={o} onChange={changed} />
        </div>
      </div>
      <OrderHistory accountId={accountId} orderId={o.id} />
    </div>
  );
}

function ShipmentCard({ accountId, order, onChange }: { accountId: string; order: Order; onChange: () => void }) {
  const couriers = useCourierSlugs();
  const [courier, setCourier] = useState('');
  const create = useMutation({
    mutationFn: (dryRun: boolean) => runOperation(accountId, 'create_shipment', { order_id: order.id, courier, dry_run: dryRun || undefined }),
    onSuccess: (_r, dryRun) => !dryRun && onChange(),
  });
  // The created waybill (201's data); a dry run answers the plan instead.
  const made = create.variables === false ? (create.data as { data?: Shipment } | undefined)?.data : undefined;
  const live = order.shipment && ['pending', 'picked_up', 'in_transit', 'delivered'].includes(order.shipment.status);
  return (
    <section className="card stack" aria-label="Shipment">
      <h3>Shipment</h3>
      {order.shipment ? (
        <p className="row">
          <Badge value={order.shipment.status} /> {order.shipment.courier_slug} <code>{order.shipment.tracking_number}</code>
          <span className="muted">{order.shipment.last_status_label}</span>
          <Link to={`/accounts/${accountId}/shipments/${order.shipment.id}`}>Open shipment →</Link>
        </p>
      ) : (
        <p className="muted">No waybill yet.</p>
      )}
      {!live && (
        <form className="row" onSubmit={(e) => (e.preventDefault(), create.mutate(false))} aria-label="Create shipment">
          <label className="compact">
            Courier
            <select value={courier} onChange={(e) => setCourier(e.target.value)}>
              <option value="">as chosen at checkout</option>
              {couriers.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="secondary" onClick={() => create.mutate(true)} disabled={create.isPending}>
            Preview
          </button>
          <button type="submit" disabled={create.isPending}>
            Create shipment
          </button>
        </form>
      )}
      <CourierProgress
        courier={courier || order.shipping.courier_slug || 'the courier'}
        running={create.isPending && create.variables === false}
        what="Creating the waybill"
      />
      {create.data && create.variables === true && 'courier' in create.data && (
        <Said tone="preview">Preview: {waybillPreviewWords(create.data)}</Said>
      )}
      {made && (
        <Said>
          Waybill created: {made.courier_slug} <code>{made.tracking_number}</code>, {deliveredTo(made.delivery_mode, made.office_id)}
          {made.cod_amount ? `, cash on delivery ${money(made.cod_amount)}` : ''}.
        </Said>
      )}
      <ErrorNote error={create.error} />
    </section>
  );
}

function StatusCard({ accountId, order, onChange }: { accountId: string; order: Order; onChange: () => void }) {
  const [status, setStatus] = useState(order.status);
  const [notify, setNotify] = useState(true);
  const update = useMutation({
    mutationFn: () => runOperation(accountId, 'update_order', { id: order.id, status, notify_customer: notify }),
    onSuccess: onChange,
  });
  return (
    <form className="card stack" onSubmit={(e) => (e.preventDefault(), update.mutate())} aria-label="Change status">
      <h3>Status</h3>
      <div className="row">
        <select value={status} onChange={(e) => setStatus(e.target.value as Order['status'])} aria-label="New status">
          {ORDER_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <label className="inline">
          <input type="checkbox" checked={notify} onChange={(e) => setNotify(e.target.checked)} /> notify the customer
        </label>
        <button type="submit" disabled={update.isPending || status === order.status}>
          Change status
        </button>
      </div>
      <ErrorNote error={update.error} />
    </form>
  );
}

/** What the history shows of an order event's data: the feed's document leaves `data` open, each event has its own (SPEC's payloads). */
interface OrderChange {
  previous_status?: string;
  status?: string;
  source?: string;
  changed?: string[];
}

/** The order's events, from the events feed (GET /api/v1/events?order_id=) when this deployment serves it. */
function OrderHistory({ accountId, orderId }: { accountId: string; orderId: string }) {
  const info = useServiceInfo();
  const hasFeed = !!info.data?.operations.some((op) => op.name === 'list_events');
  const events = useQuery({
    queryKey: queryKeys.orderEvents(orderId),
    queryFn: () => runOperation(accountId, 'list_events', { order_id: orderId, limit: 200 }).then((r) => r.data),
    enabled: hasFeed,
  });
  return (
    <section className="card stack" aria-label="History">
      <h3>History</h3>
      {!hasFeed && <p className="muted">This deployment has no events feed; the shipment page shows the courier's events.</p>}
      <ErrorNote error={events.error} />
      {events.data?.length === 0 && <p className="muted">No events.</p>}
      {events.data && events.data.length > 0 && (
        <ol className="timeline compact" aria-label="Order events">
          {events.data.map((e) => {
            const change = e.data as OrderChange;
            return (
              <li key={e.id}>
                <Time at={e.created_at} /> <strong>{e.event}</strong>{' '}
                {change.previous_status && (
                  <span>
                    {change.previous_status} → {change.status}
                  </span>
                )}
                {change.changed && <span className="muted"> {change.changed.join(', ')}</span>}
                {change.source && <span className="muted"> · {change.source}</span>}
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
