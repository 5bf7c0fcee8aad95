// EXTENSIONS 7, the approvals inbox of one account: what an agent's key asked
// to do, judged in five seconds (issue 41): the change field by field (before ->
// after), the order by number and customer, the key by name, the effects, and
// a warning when the target changed since it was asked (the approval would
// fail at execution); the JSON behind a toggle. Approve or reject with a
// reason; the agent then repeats its request with Merx-Approval and it runs once.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { admin, runOperation } from '../api';
import { Link } from 'react-router';
import type { Approval, Order } from '../api-types';
import { changeInWords, changesOf, fieldName, movedSince, operationTitle, orderIdOf, say, TARGETS } from './approval-change';
import { Badge, ErrorNote, Field, Json, Time } from '../components/ui';
import { Table } from '../components/table';
import { queryKeys } from '../query-keys';

export function usePendingApprovals(accountId: string | undefined) {
  return useQuery({
    queryKey: queryKeys.approvalsWithStatus(accountId, 'pending'),
    enabled: !!accountId,
    queryFn: () => admin('GET', '/admin/api/accounts/{id}/approvals', { path: { id: accountId! }, query: { status: 'pending' } }).then((r) => r.data),
    refetchInterval: 5_000,
  });
}

export function ApprovalsTab({ accountId }: { accountId: string }) {
  const [status, setStatus] = useState('pending');
  const [open, setOpen] = useState<string | null>(null);
  const list = useQuery({
    queryKey: queryKeys.approvalsWithStatus(accountId, status),
    queryFn: () => admin('GET', '/admin/api/accounts/{id}/approvals', { path: { id: accountId }, query: { status } }).then((r) => r.data),
    refetchInterval: 5_000,
  });
  const selected = list.data?.find((a) => a.id === open) ?? null;
  return (
    <div className="stack">
      <div className="row">
        <Field label="Status">
          <select value={status} onChange={(e) => setStatus(e.target.value)} aria-label="Approval status">
            <option value="pending">pending</option>
            <option value="approved">approved</option>
            <option value="executed">executed</option>
            <option value="rejected">rejected</option>
            <option value="expired">expired</option>
            <option value="">all</option>
          </select>
        </Field>
        <p className="muted">A key issued with writes “approval” asks here before it writes. Approve, and the agent repeats its request once.</p>
      </div>
      <ErrorNote error={list.error} />
      <Table
        label="Approvals"
        empty={status === 'pending' ? 'Nothing waits for a decision.' : 'No approvals.'}
        rows={list.data}
        rowKey={(a) => a.id}
        selected={open}
        onOpen={(a) => setOpen(a.id)}
        columns={[
          { header: 'Asked', cell: (a) => <Time at={a.requested_at} /> },
          { header: 'Operation', cell: (a) => <code>{a.operation}</code> },
          { header: 'Change', cell: (a) => <ChangeCell accountId={accountId} approval={a} /> },
          { header: 'Key', cell: (a) => a.key_name ?? <code>{a.key_prefix}…</code> },
          { header: 'Status', cell: (a) => <Badge value={a.status} /> },
        ]}
      />
      {selected && <ApprovalDetail accountId={accountId} approval={selected} onClose={() => setOpen(null)} />}
    </div>
  );
}

/** The order a write is about, by its number and customer; read once per order and shared by the rows and the screen. */
function useOrder(accountId: string, orderId: string | null) {
  return useQuery({
    queryKey: queryKeys.approvalOrder(accountId, orderId),
    enabled: !!orderId,
    queryFn: () => runOperation(accountId, 'get_order', { id: orderId! }),
  });
}

/** The approved request runs only while the target is as it was when asked (its ETag then); otherwise it is refused 412. */
const isStale = (approval: Approval, now: { _meta?: { etag?: string } } | undefined) =>
  !!approval.resource_etag && !!now?._meta?.etag && now._meta.etag !== approval.resource_etag;

const orderLabel = (order: Order | undefined) => (order ? `Order ${order.number} · ${order.customer.name}` : null);

/** An inbox row's change in words, with the order it is about. */
function ChangeCell({ accountId, approval }: { accountId: string; approval: Approval }) {
  const order = useOrder(accountId, orderIdOf(approval));
  const label = orderLabel(order.data?.data);
  const stale = approval.operation === 'update_order' && approval.status === 'pending' && isStale(approval, order.data);
  return (
    <span className="change-words">
      {label && <strong>{label}: </strong>}
      {changeInWords(approval)}
      {stale && (
        <>
          {' '}
          <span className="badge warn">changed since asked</span>
        </>
      )}
    </span>
  );
}

function ApprovalDetail({ accountId, approval, onClose }: { accountId: string; approval: Approval; onClose: () => void }) {
  const queries = useQueryClient();
  const [reason, setReason] = useState('');
  const target = TARGETS[approval.operation];
  const current = useQuery({
    queryKey: queryKeys.approvalCurrent(approval.id),
    enabled: !!target && approval.status === 'pending',
    queryFn: () => runOperation(accountId, target.read, { id: approval.arguments.id as string }),
    refetchInterval: 5_000,
  });
  const orderId = orderIdOf(approval);
  const order = useOrder(accountId, orderId);
  const decide = useMutation({
    mutationFn: (decision: 'approve' | 'reject') =>
      admin('POST', `/admin/api/approvals/{id}/${decision}`, { path: { id: approval.id }, body: reason ? { reason } : {} }),
    onSuccess: () => queries.invalidateQueries({ queryKey: queryKeys.approvals(accountId) }),
  });
  const changes = changesOf(approval);
  const update = changes.some((c) => 'before' in c);
  const now = current.data as { data?: Record<string, unknown>; _meta?: { etag?: string } } | undefined;
  const stale = isStale(approval, now);
  const moved = stale ? movedSince((approval.preview as { data?: Record<string, unknown> } | null)?.data, now?.data) : [];
  const subject = orderLabel(order.data?.data);
  return (
    <section className="card stack approval" aria-label="Approval">
      <header className="row spread">
        <h2>
          {operationTitle(approval.operation)}
          {subject && <> · {orderId ? <Link to={`/accounts/${accountId}/orders/${orderId}`}>{subject}</Link> : subject}</>}{' '}
          <Badge value={approval.status} />
        </h2>
        <button type="button" className="secondary small" onClick={onClose}>
          Close
        </button>
      </header>
      <p className="muted">
        Asked <Time at={approval.requested_at} /> by <strong>{approval.key_name ?? 'a deleted key'}</strong> (<code>{approval.key_prefix}…</code>),
        expires <Time at={approval.expires_at} />
        {approval.decided_at && (
          <>
            {' '}
            · {approval.status === 'rejected' ? 'rejected' : 'approved'} by {approval.decided_by} <Time at={approval.decided_at} />
          </>
        )}
        {approval.reason && <> · “{approval.reason}”</>}
        {approval.executed_at && (
          <>
            {' '}
            · ran <Time at={approval.executed_at} /> ({approval.result_status})
          </>
        )}
      </p>
      {stale && (
        <p className="warning" role="alert" aria-label="Changed since asked">
          This {target.noun} changed after the agent asked{moved.length ? ` (${moved.map(fieldName).join(', ')})` : ''}. Approving will not run it:
          the agent’s repeat would be refused (412 precondition_failed). Reject it and let the agent read the {target.noun} again and ask anew.
        </p>
      )}
      <h3>{update ? 'What changes' : 'What it asks'}</h3>
      <table className="diff" aria-label="What changes">
        <thead>
          <tr>
            <th>Field</th>
            {update && <th>Before</th>}
            <th>{update ? 'After' : 'Value'}</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((c) => (
            <tr key={c.field}>
              <th scope="row">{fieldName(c.field)}</th>
              {update && <td className="before">{say(c.before)}</td>}
              <td className="after">
                {update && <span aria-hidden="true">→ </span>}
                {say(c.after)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Effects</h3>
      <ul aria-label="Effects">
        {approval.effects.map((e) => (
          <li key={e}>{e}</li>
        ))}
      </ul>
      {approval.status === 'pending' && (
        <form className="stack" onSubmit={(e) => e.preventDefault()} aria-label="Decide">
          <Field label="Reason" hint="Optional; the agent reads it in the approval.">
            <input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={2000} />
          </Field>
          <div className="row">
            <button type="button" onClick={() => decide.mutate('approve')} disabled={decide.isPending}>
              Approve
            </button>
            <button type="button" className="danger" onClick={() => decide.mutate('reject')} disabled={decide.isPending}>
              Reject
            </button>
          </div>
          <ErrorNote error={decide.error} />
        </form>
      )}
      <details className="raw">
        <summary>JSON: the request, its dry run{target ? ` and the ${target.noun} now` : ''}</summary>
        <div className="grid two">
          <div className="stack">
            <h3>Arguments</h3>
            <Json value={approval.arguments} />
            <h3>Dry run when asked</h3>
            <Json value={approval.preview} />
          </div>
          {target && (
            <div className="stack">
              <h3>The {target.noun} now</h3>
              <ErrorNote error={current.error} />
              {now?.data !== undefined && <Json value={now.data} />}
            </div>
          )}
        </div>
      </details>
    </section>
  );
}
