// Shipments of an account, newest first, by status and courier.
import { useNavigate } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { admin } from '../api';
import { useCourierSlugs } from '../service-info';
import { SHIPMENT_STATUSES } from '../choices';
import { Badge, ErrorNote, money, Time } from '../components/ui';
import { Pager, Table } from '../components/table';
import { Select } from '../components/select';
import { useCursorPages, useUrlFilters } from '../components/paging';
import { ExportButton } from '../components/export-button';
import { queryKeys } from '../query-keys';

export function ShipmentsTab({ accountId }: { accountId: string }) {
  const couriers = useCourierSlugs();
  const navigate = useNavigate();
  const { values, set } = useUrlFilters(['status', 'courier'] as const);
  const { status, courier } = values;
  const pages = useCursorPages(`${status}|${courier}`);
  const list = useQuery({
    queryKey: queryKeys.shipmentsPage(accountId, status, courier, pages.cursor),
    queryFn: () => admin('GET', '/admin/api/accounts/{id}/shipments', { path: { id: accountId }, query: { status, courier, cursor: pages.cursor } }),
    placeholderData: (previous) => previous,
    refetchInterval: 10_000,
  });
  return (
    <div className="stack">
      <form className="filters" aria-label="Shipment filters" onSubmit={(e) => e.preventDefault()}>
        <Select label="Status" value={status} options={SHIPMENT_STATUSES} onChange={(v) => set('status', v)} />
        <Select label="Courier" value={courier} options={couriers} onChange={(v) => set('courier', v)} />
      </form>
      <ExportButton accountId={accountId} operation="export_shipments" filters={{ status, courier }} name="shipments" />
      <ErrorNote error={list.error} />
      <Table
        label="Shipments"
        empty="No shipments match. Create one from an order."
        rows={list.data?.data}
        rowKey={(s) => s.id}
        onOpen={(s) => void navigate(`/accounts/${accountId}/shipments/${s.id}`)}
        columns={[
          { header: 'Created', cell: (s) => <Time at={s.created_at} /> },
          { header: 'Courier', cell: (s) => s.courier_slug },
          { header: 'Tracking', cell: (s) => <code>{s.tracking_number}</code> },
          { header: 'Status', cell: (s) => <Badge value={s.status} /> },
          { header: 'Last courier word', cell: (s) => <span className="muted">{s.last_status_label ?? '—'}</span> },
          { header: 'Mode', cell: (s) => s.delivery_mode },
          { header: 'COD', cell: (s) => money(s.cod_amount), className: 'num' },
        ]}
      />
      <Pager pages={pages} list={list.data} />
    </div>
  );
}
