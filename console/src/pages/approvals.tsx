// EXTENSIONS 7, the approvals inbox of one account: what an agent's key asked
// to do (the dry-run preview and its effects), side by side with the resource
// as it is now, and approve or reject with a reason. The agent then repeats
// its request with Merx-Approval and it runs once.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { admin, runOperation } from '../api';
import type { Approval, OperationName } from '../api-types';
import { Badge, ErrorNote, Field, Json, Time } from '../components/ui';
import { Table } from '../components/table';

/** The read that shows an update's target as it is now. */
const CURRENT: Record<string, OperationName> = { update_order: 'get_order', update_product: 'get_product', update_webhook: 'get_webhook' };

export function usePendingApprovals(accountId: string | undefined) {
  return useQuery({
    queryKey: ['approvals', accountId, 'pending'],
    enabled: !!accountId,
    queryFn: () => admin('GET', '/admin/api/accounts/{id}/approvals', { path: { id: accountId! }, query: { status: 'pending' } }).then((r) => r.data),
    refetchInterval: 5_000,
  });
}

export function ApprovalsTab({ accountId }: { accountId: string }) {
  const [status, setStatus] = useState('pending');
  const [open, setOpen] = useState<string | null>(null);
  const list = useQuery({
    queryKey: ['approvals', accountId, status],
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
          { header: 'Key', cell: (a) => <code>{a.key_prefix}…</code> },
          { header: 'Effects', cell: (a) => a.effects.join('; ') },
          { header: 'Status', cell: (a) => <Badge value={a.status} /> },
        ]}
      />
      {selected && <ApprovalDetail accountId={accountId} approval={selected} onClose={() => setOpen(null)} />}
    </div>
  );
}

function ApprovalDetail({ accountId, approval, onClose }: { accountId: string; approval: Approval; onClose: () => void }) {
  const queries = useQueryClient();
  const [reason, setReason] = useState('');
  const read = CURRENT[approval.operation];
  const current = useQuery({
    queryKey: ['approval-current', approval.id],
    enabled: !!read,
    queryFn: () => runOperation(accountId, read, { id: approval.arguments.id as string }),
  });
  const decide = useMutation({
    mutationFn: (decision: 'approve' | 'reject') => admin('POST', `/admin/api/approvals/{id}/${decision}`, { path: { id: approval.id }, body: reason ? { reason } : {} }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['approvals', accountId] }),
  });
  return (
    <section className="card stack" aria-label="Approval">
      <header className="row spread">
        <h2>
          <code>{approval.operation}</code> <Badge value={approval.status} />
        </h2>
        <button type="button" className="secondary small" onClick={onClose}>Close</button>
      </header>
      <p className="muted">
        Asked <Time at={approval.requested_at} /> by <code>{approval.key_prefix}…</code>, expires <Time at={approval.expires_at} />
        {approval.decided_at && <> · {approval.status === 'rejected' ? 'rejected' : 'approved'} by {approval.decided_by} <Time at={approval.decided_at} /></>}
        {approval.reason && <> · “{approval.reason}”</>}
        {approval.executed_at && <> · ran <Time at={approval.executed_at} /> ({approval.result_status})</>}
      </p>
      <h3>Effects</h3>
      <ul aria-label="Effects">{approval.effects.map((e) => <li key={e}>{e}</li>)}</ul>
      <div className="grid two">
        <div className="stack">
          <h3>Preview (dry run when asked)</h3>
          <Json value={approval.preview ?? approval.arguments} />
        </div>
        <div className="stack">
          <h3>Current {read ? read.replace('get_', '') : 'arguments'}</h3>
          {read ? <><ErrorNote error={current.error} />{current.data !== undefined && <Json value={current.data} />}</> : <Json value={approval.arguments} />}
        </div>
      </div>
      {approval.status === 'pending' && (
        <form className="stack" onSubmit={(e) => e.preventDefault()} aria-label="Decide">
          <Field label="Reason" hint="Optional; the agent reads it in the approval.">
            <input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={2000} />
          </Field>
          <div className="row">
            <button type="button" onClick={() => decide.mutate('approve')} disabled={decide.isPending}>Approve</button>
            <button type="button" className="danger" onClick={() => decide.mutate('reject')} disabled={decide.isPending}>Reject</button>
          </div>
          <ErrorNote error={decide.error} />
        </form>
      )}
    </section>
  );
}
