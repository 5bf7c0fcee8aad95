// Orders of an account: the public list's filters, keyset paged, so 100k
// orders page as fast as ten. Filters live in the URL: a view can be shared.
// Orders chosen here (one by one, or every order matching the filters, up to
// 1,000) get their waybills in one shipment batch (EXTENSIONS 8).
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { useMutation, useQuery } from '@tanstack/react-query';
import { runOperation } from '../api';
import { useCourierSlugs } from '../service-info';
import { ORDER_STATUSES, SHIPMENT_STATUSES } from '../choices';
import { Badge, ErrorNote, money, Time } from '../components/ui';
import { Pager, Table } from '../components/table';
import { Select } from '../components/select';
import { useCursorPages, useUrlFilters } from '../components/paging';
import { ExportButton } from '../components/export-button';
import { queryKeys } from '../query-keys';

const FILTERS = ['status', 'payment', 'courier', 'shipment_status', 'q', 'from', 'to', 'limit'] as const;

export function OrdersTab({ accountId }: { accountId: string }) {
  const couriers = useCourierSlugs();
  const navigate = useNavigate();
  const { values, set } = useUrlFilters(FILTERS);
  const { limit: perPage, ...filter } = values;
  const limit = Number(perPage || 50);
  const pages = useCursorPages(JSON.stringify(values));
  const list = useQuery({
    queryKey: queryKeys.ordersPage(accountId, filter, limit, pages.cursor),
    queryFn: () => runOperation(accountId, 'list_orders', { ...filter, limit, cursor: pages.cursor }),
    placeholderData: (previous) => previous,
  });
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setChosen((now) => {
      const next = new Set(now);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const everyMatching = useMutation({ mutationFn: () => ordersMatching(accountId, filter), onSuccess: (ids) => setChosen(new Set(ids)) });
  const ship = useMutation({
    mutationFn: () => runOperation(accountId, 'create_shipment_batch', { items: [...chosen].map((order_id) => ({ order_id })) }),
    onSuccess: (answer) => void navigate(`/accounts/${accountId}/batches/${(answer as { data: { id: string } }).data.id}`),
  });
  const shown = list.data?.data ?? [];
  const allShown = shown.length > 0 && shown.every((o) => chosen.has(o.id));
  return (
    <div className="stack">
      <form className="filters" aria-label="Order filters" onSubmit={(e) => e.preventDefault()}>
        <input
          type="search"
          data-search
          placeholder="Customer, phone, email, tracking  ( / )"
          aria-label="Search orders"
          defaultValue={filter.q}
          onChange={(e) => set('q', e.target.value)}
          maxLength={100}
        />
        <Select label="Status" value={filter.status} options={ORDER_STATUSES} onChange={(v) => set('status', v)} all="All but archived" />
        <Select label="Payment" value={filter.payment} options={['paid', 'pending', 'refunded']} onChange={(v) => set('payment', v)} />
        <Select label="Courier" value={filter.courier} options={[...couriers, 'none']} onChange={(v) => set('courier', v)} />
        <Select label="Shipment" value={filter.shipment_status} options={SHIPMENT_STATUSES} onChange={(v) => set('shipment_status', v)} />
        <label className="compact">
          From <input type="date" value={filter.from} onChange={(e) => set('from', e.target.value)} />
        </label>
        <label className="compact">
          To <input type="date" value={filter.to} onChange={(e) => set('to', e.target.value)} />
        </label>
        <Select label="Per page" value={String(limit)} options={['25', '50', '100', '200']} onChange={(v) => set('limit', v)} all={null} />
      </form>
      <ExportButton accountId={accountId} operation="export_orders" filters={filter} name="orders" />
      <div className="row" role="group" aria-label="Choose orders to ship">
        <span data-testid="chosen-orders">{chosen.size} chosen</span>
        <button type="button" className="secondary" onClick={() => everyMatching.mutate()} disabled={everyMatching.isPending}>
          {everyMatching.isPending ? 'Choosing…' : `Choose every order matching (up to ${BATCH_MAX.toLocaleString('en')})`}
        </button>
        {chosen.size > 0 && (
          <button type="button" className="secondary" onClick={() => setChosen(new Set())}>
            Clear
          </button>
        )}
        <button type="button" onClick={() => ship.mutate()} disabled={chosen.size === 0 || chosen.size > BATCH_MAX || ship.isPending}>
          Create waybills{chosen.size ? ` (${chosen.size})` : ''}
        </button>
      </div>
      <ErrorNote error={list.error ?? everyMatching.error ?? ship.error} />
      <Table
        label="Orders"
        empty="No orders match these filters."
        rows={list.data?.data}
        rowKey={(o) => o.id}
        onOpen={(o) => void navigate(`/accounts/${accountId}/orders/${o.id}`)}
        columns={[
          {
            header: '#',
            // The box to choose the order shares the number's column: from 900 px the table still fits whole.
            cell: (o) => (
              <span className="chosen-cell">
                <input
                  type="checkbox"
                  aria-label={`Choose order ${o.number ?? o.id}`}
                  checked={chosen.has(o.id)}
                  onChange={() => toggle(o.id)}
                  onClick={(e) => e.stopPropagation()}
                />
                <strong>{o.number ?? '—'}</strong>
              </span>
            ),
            className: 'num',
          },
          { header: 'Created', cell: (o) => <Time at={o.created_at} /> },
          { header: 'Customer', cell: (o) => o.customer.name ?? o.customer.email ?? '—' },
          { header: 'Total', cell: (o) => money(o.total), className: 'num' },
          { header: 'Status', cell: (o) => <Badge value={o.status} /> },
          { header: 'Payment', cell: (o) => <span className="muted">{[o.payment_method, o.payment_status].filter(Boolean).join(' · ')}</span> },
          { header: 'Courier', cell: (o) => o.courier ?? <span className="muted">—</span> },
          { header: 'Shipment', cell: (o) => (o.shipment ? <Badge value={o.shipment.status} /> : <span className="muted">—</span>) },
        ]}
      />
      {shown.length > 0 && (
        <label className="compact">
          <input
            type="checkbox"
            checked={allShown}
            onChange={() =>
              setChosen((now) => {
                const next = new Set(now);
                for (const o of shown) allShown ? next.delete(o.id) : next.add(o.id);
                return next;
              })
            }
          />{' '}
          every order on this page
        </label>
      )}
      <Pager pages={pages} list={list.data} />
    </div>
  );
}

/** EXTENSIONS 8: a batch takes up to 1,000 orders. */
const BATCH_MAX = 1000;

/** The ids of every order the filters match, page after page, up to a batch's 1,000. */
async function ordersMatching(accountId: string, filter: Record<string, string>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await runOperation(accountId, 'list_orders', { ...filter, limit: 200, cursor });
    ids.push(...page.data.map((o) => o.id));
    cursor = page.has_more ? (page.next_cursor ?? undefined) : undefined;
  } while (cursor && ids.length < BATCH_MAX);
  return ids.slice(0, BATCH_MAX);
}
