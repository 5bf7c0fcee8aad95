// Orders of an account: the public list's filters, keyset paged, so 100k
// orders page as fast as ten. Filters live in the URL: a view can be shared.
import { useNavigate } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { runOperation } from '../api';
import { useCourierSlugs } from '../service-info';
import { ORDER_STATUSES, SHIPMENT_STATUSES } from '../choices';
import { Badge, ErrorNote, money, Time } from '../components/ui';
import { Pager, Table } from '../components/table';
import { Select } from '../components/select';
import { useCursorPages, useUrlFilters } from '../components/paging';

const FILTERS = ['status', 'payment', 'courier', 'shipment_status', 'q', 'from', 'to', 'limit'] as const;

export function OrdersTab({ accountId }: { accountId: string }) {
  const couriers = useCourierSlugs();
  const navigate = useNavigate();
  const { values, set } = useUrlFilters(FILTERS);
  const { limit: perPage, ...filter } = values;
  const limit = Number(perPage || 50);
  const pages = useCursorPages(JSON.stringify(values));
  const list = useQuery({
    queryKey: ['orders', accountId, filter, limit, pages.cursor],
    queryFn: () => runOperation(accountId, 'list_orders', { ...filter, limit, cursor: pages.cursor }),
    placeholderData: (previous) => previous,
  });
  return (
    <div className="stack">
      <form className="filters" aria-label="Order filters" onSubmit={(e) => e.preventDefault()}>
        <input type="search" data-search placeholder="Customer, phone, email, tracking  ( / )" aria-label="Search orders" defaultValue={filter.q} onChange={(e) => set('q', e.target.value)} maxLength={100} />
        <Select label="Status" value={filter.status} options={ORDER_STATUSES} onChange={(v) => set('status', v)} all="All but archived" />
        <Select label="Payment" value={filter.payment} options={['paid', 'pending', 'refunded']} onChange={(v) => set('payment', v)} />
        <Select label="Courier" value={filter.courier} options={[...couriers, 'none']} onChange={(v) => set('courier', v)} />
        <Select label="Shipment" value={filter.shipment_status} options={SHIPMENT_STATUSES} onChange={(v) => set('shipment_status', v)} />
        <label className="compact">From <input type="date" value={filter.from} onChange={(e) => set('from', e.target.value)} /></label>
        <label className="compact">To <input type="date" value={filter.to} onChange={(e) => set('to', e.target.value)} /></label>
        <Select label="Per page" value={String(limit)} options={['25', '50', '100', '200']} onChange={(v) => set('limit', v)} all={null} />
      </form>
      <ErrorNote error={list.error} />
      <Table
        label="Orders"
        empty="No orders match these filters."
        rows={list.data?.data}
        rowKey={(o) => o.id}
        onOpen={(o) => navigate(`/accounts/${accountId}/orders/${o.id}`)}
        columns={[
          { header: '#', cell: (o) => <strong>{o.number ?? '—'}</strong>, className: 'num' },
          { header: 'Created', cell: (o) => <Time at={o.created_at} /> },
          { header: 'Customer', cell: (o) => o.customer.name ?? o.customer.email ?? '—' },
          { header: 'Total', cell: (o) => money(o.total), className: 'num' },
          { header: 'Status', cell: (o) => <Badge value={o.status} /> },
          { header: 'Payment', cell: (o) => <span className="muted">{[o.payment_method, o.payment_status].filter(Boolean).join(' · ')}</span> },
          { header: 'Courier', cell: (o) => o.courier ?? <span className="muted">—</span> },
          { header: 'Shipment', cell: (o) => (o.shipment ? <Badge value={o.shipment.status} /> : <span className="muted">—</span>) },
        ]}
      />
      <Pager pages={pages} list={list.data} />
    </div>
  );
}
