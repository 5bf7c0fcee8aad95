// Accounts: search, page through, create.
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { admin } from '../api';
import type { Account } from '../api-types';
import { Badge, ErrorNote, Field, Time } from '../components/ui';
import { Pager, Table } from '../components/table';
import { useCursorPages } from '../components/paging';
import { Dialog } from '../components/dialog';
import { queryKeys } from '../query-keys';

export function AccountsPage() {
  const [q, setQ] = useState('');
  const pages = useCursorPages(q);
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const list = useQuery({
    queryKey: queryKeys.accountsPage(q, pages.cursor),
    queryFn: () => admin('GET', '/admin/api/accounts', { query: { q, cursor: pages.cursor, limit: 25 } }),
    placeholderData: (previous) => previous,
  });
  return (
    <section>
      <header className="page-head">
        <h1>Accounts</h1>
        <button type="button" onClick={() => setCreating(true)}>
          New account
        </button>
      </header>
      <div className="filters">
        <input
          type="search"
          data-search
          placeholder="Search name, email or id  ( / )"
          value={q}
          onChange={(e) => setQ(e.target.value)}
          aria-label="Search accounts"
        />
      </div>
      <ErrorNote error={list.error} />
      <Table
        label="Accounts"
        empty="No accounts match."
        rows={list.data?.data}
        rowKey={(a) => a.id}
        onOpen={(a) => void navigate(`/accounts/${a.id}/orders`)}
        columns={[
          { header: 'Name', cell: (a) => <strong>{a.name}</strong> },
          { header: 'Email', cell: (a) => a.email },
          { header: 'Plan', cell: (a) => <Badge value={a.plan} /> },
          { header: 'State', cell: (a) => <Badge value={a.active ? 'active' : 'inactive'} /> },
          { header: 'Created', cell: (a) => <Time at={a.created_at} /> },
          { header: 'Id', cell: (a) => <code className="id">{a.id}</code> },
        ]}
      />
      <Pager pages={pages} list={list.data} />
      <Dialog title="New account" open={creating} onClose={() => setCreating(false)}>
        <CreateAccount onCreated={(id) => void navigate(`/accounts/${id}/overview`)} />
      </Dialog>
    </section>
  );
}

function CreateAccount({ onCreated }: { onCreated: (id: string) => void }) {
  const queries = useQueryClient();
  const [form, setForm] = useState<{ name: string; email: string; plan: Account['plan'] }>({ name: '', email: '', plan: 'pro' });
  const create = useMutation({
    mutationFn: () => admin('POST', '/admin/api/accounts', { body: form }),
    onSuccess: (r) => {
      void queries.invalidateQueries({ queryKey: queryKeys.accounts() });
      onCreated(r.data.id);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <form onSubmit={submit} className="stack">
      <Field label="Shop name">
        <input required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} autoFocus />
      </Field>
      <Field label="Owner email">
        <input required type="email" value={form.email} onChange={(e) => setForm({ ...form, email: e.target.value })} />
      </Field>
      <Field label="Plan" hint="Pro and above may call the API; a Free account's keys get 403 plan_required.">
        <select value={form.plan} onChange={(e) => setForm({ ...form, plan: e.target.value as Account['plan'] })}>
          <option value="pro">pro</option>
          <option value="business">business</option>
          <option value="free">free</option>
        </select>
      </Field>
      <ErrorNote error={create.error} />
      <button type="submit" disabled={create.isPending}>
        Create account
      </button>
    </form>
  );
}
