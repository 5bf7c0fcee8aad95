// One shipment: its status and the courier's raw events, the label, cancel,
// and the simulated courier: report a status event, run the courier poll.
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { admin, downloadOperation, runOperation } from '../api';
import type { Shipment } from '../api-types';
import { useServiceInfo } from '../service-info';
import { SHIPMENT_STATUSES } from '../choices';
import { Badge, ErrorNote, money, Time } from '../components/ui';
import { CourierProgress, deliveryWords, Said } from '../components/said';
import { queryKeys } from '../query-keys';

/** cancel_shipment's answer, or its dry run, in a sentence. */
function cancelWords(answer: { dry_run?: true; cancellable?: boolean; courier_confirmed?: boolean; note?: string | null }): string {
  if (answer.dry_run)
    return answer.cancellable
      ? 'Preview: this waybill can be cancelled; nothing was sent to the courier.'
      : 'Preview: this waybill can no longer be cancelled.';
  const done = answer.courier_confirmed
    ? 'Cancelled: the courier confirmed it.'
    : 'Cancelled here; the courier has no cancel call, so tell them yourself.';
  return answer.note ? `${done} ${answer.note}` : done;
}

export function ShipmentDetail({ accountId }: { accountId: string }) {
  const { shipmentId = '' } = useParams();
  const queries = useQueryClient();
  const shipment = useQuery({
    queryKey: queryKeys.shipment(shipmentId),
    queryFn: () => runOperation(accountId, 'get_shipment_by_id', { id: shipmentId }).then((r) => r.data),
    refetchInterval: 2_000,
  });
  const changed = () => {
    void queries.invalidateQueries({ queryKey: queryKeys.shipment(shipmentId) });
    void queries.invalidateQueries({ queryKey: queryKeys.shipments(accountId) });
  };
  const label = useMutation({ mutationFn: () => downloadOperation(accountId, 'get_shipment_label', { id: shipmentId }) });
  const cancel = useMutation({
    mutationFn: (dryRun: boolean) => runOperation(accountId, 'cancel_shipment', { id: shipmentId, dry_run: dryRun || undefined }),
    onSuccess: changed,
  });
  const s = shipment.data;
  if (shipment.error) return <ErrorNote error={shipment.error} />;
  if (!s) return <p className="muted">Loading…</p>;
  // SPEC shipment states: these cannot be cancelled any more (the API would answer 409).
  const terminal = ['cancelled', 'delivered', 'refused', 'returned'].includes(s.status);
  return (
    <div className="stack">
      <p>
        <Link to={`/accounts/${accountId}/shipments`}>← Shipments</Link> · <Link to={`/accounts/${accountId}/orders/${s.order_id}`}>Order</Link>
      </p>
      <header className="row spread">
        <h2>
          {s.courier_slug} <code>{s.tracking_number}</code> <Badge value={s.status} />
        </h2>
        <div className="row">
          <button type="button" className="secondary" onClick={() => label.mutate()} disabled={!s.tracking_number || label.isPending}>
            Download label (PDF)
          </button>
          <button type="button" className="secondary" onClick={() => cancel.mutate(true)} disabled={terminal}>
            Preview cancel
          </button>
          <button
            type="button"
            className="danger"
            onClick={() => confirm('Cancel this waybill at the courier?') && cancel.mutate(false)}
            disabled={terminal}
          >
            Cancel shipment
          </button>
        </div>
      </header>
      <ErrorNote error={label.error ?? cancel.error} />
      <CourierProgress
        courier={s.courier_slug ?? 'the courier'}
        running={cancel.isPending && cancel.variables === false}
        what="Cancelling the waybill"
      />
      {cancel.data && <Said tone={'dry_run' in cancel.data ? 'preview' : 'ok'}>{cancelWords(cancel.data)}</Said>}
      <div className="grid two">
        <section className="card stack" aria-label="Status history">
          <h3>Status history</h3>
          <p>
            Now <Badge value={s.status} /> {s.last_status_label && <span className="muted">“{s.last_status_label}”</span>}{' '}
            <Time at={s.last_status_at} />
          </p>
          <ol className="timeline compact" aria-label="Courier events">
            {[...s.status_events].reverse().map((e, i) => (
              <li key={i}>
                <Time at={e.at} /> <strong>{e.label ?? '—'}</strong> <span className="muted">code {String(e.code ?? '—')}</span>
              </li>
            ))}
            {s.status_events.length === 0 && (
              <li>
                <Time at={s.created_at} /> <strong>waybill created</strong>
              </li>
            )}
          </ol>
        </section>
        <div className="stack">
          <CourierEvent shipment={s} onChange={changed} />
          <section className="card stack" aria-label="Parcel">
            <h3>Parcel</h3>
            <dl className="facts-grid">
              <dt>Delivery</dt>
              <dd>{deliveryWords(s.delivery_mode, s.office_id)}</dd>
              <dt>Weight</dt>
              <dd>{s.parcel_weight_g ? `${s.parcel_weight_g} g` : '—'}</dd>
              <dt>Cash on delivery</dt>
              <dd>{money(s.cod_amount)}</dd>
              <dt>Created</dt>
              <dd>
                <Time at={s.created_at} />
              </dd>
            </dl>
          </section>
        </div>
      </div>
    </div>
  );
}

/** The simulated courier reports a status; a pushing courier sends it at once, a polled one waits for the poll. */
function CourierEvent({ shipment, onChange }: { shipment: Shipment; onChange: () => void }) {
  const [status, setStatus] = useState<Shipment['status']>('in_transit');
  const [label, setLabel] = useState('');
  const polled = useServiceInfo().data?.couriers.find((c) => c.slug === shipment.courier_slug)?.status_updates === 'poll';
  const report = useMutation({
    mutationFn: () =>
      admin('POST', '/admin/api/shipments/{id}/courier-events', { path: { id: shipment.id }, body: label ? { status, label } : { status } }),
    onSuccess: onChange,
  });
  const poll = useMutation({
    mutationFn: () => admin('POST', '/admin/api/jobs/{name}/run', { path: { name: 'courier-poll' }, body: {} }),
    onSuccess: onChange,
  });
  return (
    <form className="card stack" onSubmit={(e) => (e.preventDefault(), report.mutate())} aria-label="Courier event">
      <h3>Courier simulator</h3>
      <p className="muted">
        {polled
          ? `${shipment.courier_slug} is polled: report an event, then run the poll (every 15 minutes on its own).`
          : `${shipment.courier_slug} pushes its events to Merx at once.`}
      </p>
      <div className="row">
        <select value={status} onChange={(e) => setStatus(e.target.value as Shipment['status'])} aria-label="Courier status">
          {SHIPMENT_STATUSES.filter((x) => x !== 'pending').map((x) => (
            <option key={x} value={x}>
              {x.replace('_', ' ')}
            </option>
          ))}
        </select>
        <input
          placeholder="courier's words (optional)"
          value={label}
          onChange={(e) => setLabel(e.target.value)}
          maxLength={200}
          aria-label="Courier label"
        />
        <button type="submit" disabled={report.isPending}>
          Report event
        </button>
        {polled && (
          <button type="button" className="secondary" onClick={() => poll.mutate()} disabled={poll.isPending}>
            Run courier poll now
          </button>
        )}
      </div>
      {report.isSuccess && (
        <p className="muted" role="status">
          Recorded by the courier{polled ? '; the next poll brings it in.' : '.'}
        </p>
      )}
      {poll.data && (
        <p className="muted" role="status">
          Poll done: {poll.data.data.processed} shipment(s) updated.
        </p>
      )}
      <ErrorNote error={report.error ?? poll.error} />
    </form>
  );
}
