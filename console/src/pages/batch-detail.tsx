// One shipment batch (EXTENSIONS 8): its counts, live while it runs; each
// item's result; the failed items with their errors in words; one PDF of
// every label; "Retry failed" sends the failed items again as a new batch.
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { downloadOperation, runOperation } from '../api';
import type { OperationAnswer } from '../api-types';
import { Badge, ErrorNote, Time } from '../components/ui';
import { Pager, Table } from '../components/table';
import { Select } from '../components/select';
import { useCursorPages, useUrlFilters } from '../components/paging';
import { queryKeys } from '../query-keys';

type Item = OperationAnswer<'list_shipment_batch_items', {}>['data'][number];

/** What a failed item's error means for the person shipping, beside the API's own message. */
function inWords(error: NonNullable<Item['error']>): string {
  const details = (error.details ?? {}) as { reason?: string; kind?: string; shipment?: { tracking_number?: string | null } };
  if (error.code === 'conflict' && details.reason === 'batch_cancelled') return 'Not started: the batch was cancelled first.';
  if (error.code === 'conflict' && details.shipment)
    return `Already has a waybill (${details.shipment.tracking_number ?? 'no number yet'}): nothing to do.`;
  if (error.code === 'conflict' && details.kind === 'order_status') return `The order cannot ship: ${error.message}.`;
  if (error.code === 'courier_error') return `The courier did not make the waybill: ${error.message}${details.reason ? ` (${details.reason})` : ''}.`;
  if (error.code === 'not_found') return 'No such order in this account.';
  if (error.code === 'validation_failed') return `Something is missing or wrong: ${error.message}.`;
  return error.message;
}

/** Every failed item's body for a new batch (pages followed: a batch holds up to 1,000). */
async function failedItems(accountId: string, id: string): Promise<Array<{ order_id: string }>> {
  const items: Array<{ order_id: string }> = [];
  let cursor: string | undefined;
  do {
    const page = await runOperation(accountId, 'list_shipment_batch_items', { id, status: 'failed', limit: 200, cursor });
    items.push(...page.data.map((item) => ({ order_id: item.order_id })));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return items;
}

export function BatchDetail({ accountId }: { accountId: string }) {
  const { batchId = '' } = useParams();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const { values, set } = useUrlFilters(['status'] as const);
  const pages = useCursorPages(JSON.stringify(values));
  const batch = useQuery({
    queryKey: queryKeys.batch(batchId),
    queryFn: () => runOperation(accountId, 'get_shipment_batch', { id: batchId }).then((r) => r.data),
    // Live while items are pending or in flight.
    refetchInterval: (query) => (query.state.data?.finished_at ? false : 1_000),
  });
  const finished = Boolean(batch.data?.finished_at);
  const items = useQuery({
    queryKey: queryKeys.batchItemsPage(batchId, values.status, pages.cursor, batch.data),
    queryFn: () => runOperation(accountId, 'list_shipment_batch_items', { id: batchId, status: values.status, limit: 100, cursor: pages.cursor }),
    // The previous page while the next loads, but never another batch's items (Retry failed opens a new batch here).
    placeholderData: (previous, previousQuery) => (previousQuery?.queryKey[1] === batchId ? previous : undefined),
  });
  const labels = useMutation({ mutationFn: () => downloadOperation(accountId, 'get_shipment_batch_labels', { id: batchId }) });
  const cancel = useMutation({
    mutationFn: () => runOperation(accountId, 'cancel_shipment_batch', { id: batchId }),
    onSuccess: () => queries.invalidateQueries({ queryKey: queryKeys.batch(batchId) }),
  });
  const retry = useMutation({
    mutationFn: async () => runOperation(accountId, 'create_shipment_batch', { items: await failedItems(accountId, batchId) }),
    onSuccess: (answer) => navigate(`/accounts/${accountId}/batches/${(answer as { data: { id: string } }).data.id}`),
  });
  const b = batch.data;
  if (batch.error) return <ErrorNote error={batch.error} />;
  if (!b) return <p className="muted">Loading…</p>;
  const done = b.succeeded + b.failed;
  return (
    <div className="stack">
      <p>
        <Link to={`/accounts/${accountId}/orders`}>← Orders</Link>
      </p>
      <header className="row spread">
        <h2>
          Shipment batch <Badge value={b.state} />
        </h2>
        <div className="row">
          <button type="button" className="secondary" onClick={() => labels.mutate()} disabled={!finished || b.succeeded === 0 || labels.isPending}>
            Download labels
          </button>
          <button type="button" onClick={() => retry.mutate()} disabled={!finished || b.failed === 0 || retry.isPending}>
            Retry failed ({b.failed})
          </button>
          <button
            type="button"
            className="danger"
            onClick={() => confirm('Cancel the items not started yet?') && cancel.mutate()}
            disabled={b.state !== 'running'}
          >
            Cancel batch
          </button>
        </div>
      </header>
      <ErrorNote error={labels.error ?? retry.error ?? cancel.error} />
      <section className="card stack" aria-label="Progress">
        <progress max={b.total} value={done} aria-label="Items finished" style={{ width: '100%' }}>
          {done} of {b.total}
        </progress>
        <dl className="facts-grid" aria-label="Counts">
          <dt>Total</dt>
          <dd data-testid="batch-total">{b.total}</dd>
          <dt>Succeeded</dt>
          <dd data-testid="batch-succeeded">{b.succeeded}</dd>
          <dt>Failed</dt>
          <dd data-testid="batch-failed">{b.failed}</dd>
          <dt>Pending</dt>
          <dd data-testid="batch-pending">{b.pending}</dd>
          <dt>Started</dt>
          <dd>
            <Time at={b.created_at} />
          </dd>
          <dt>Finished</dt>
          <dd>{b.finished_at ? <Time at={b.finished_at} /> : <span className="muted">running…</span>}</dd>
        </dl>
      </section>
      <form className="filters" aria-label="Item filters" onSubmit={(e) => e.preventDefault()}>
        <Select label="Result" value={values.status} options={['pending', 'succeeded', 'failed']} onChange={(v) => set('status', v)} />
      </form>
      <ErrorNote error={items.error} />
      <Table
        label="Batch items"
        empty="No items with this result."
        rows={items.data?.data}
        rowKey={(item) => String(item.index)}
        columns={[
          { header: '#', cell: (item) => item.index + 1, className: 'num' },
          {
            header: 'Order',
            cell: (item) => (
              <Link to={`/accounts/${accountId}/orders/${item.order_id}`}>
                <code>{item.order_id.slice(0, 8)}</code>
              </Link>
            ),
          },
          { header: 'Result', cell: (item) => <Badge value={item.status} /> },
          {
            header: 'Waybill or error',
            cell: (item) =>
              item.shipment_id ? (
                <Link to={`/accounts/${accountId}/shipments/${item.shipment_id}`}>shipment</Link>
              ) : item.error ? (
                <span className="error-text">{inWords(item.error)}</span>
              ) : (
                <span className="muted">—</span>
              ),
          },
        ]}
      />
      <Pager pages={pages} list={items.data} />
    </div>
  );
}
