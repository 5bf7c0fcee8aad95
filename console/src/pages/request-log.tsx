// EXTENSIONS 7, the request log of one account: every REST request and MCP
// tool call its keys made, whatever the answer, filtered by key, operation,
// status class and time, writes only and errors only (issue 41: polling reads
// such as `merx listen`'s fold away); an entry links to the events it committed.
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { admin } from '../api';
import { Badge, ErrorNote, Field, Json, Time } from '../components/ui';
import { Pager, Table } from '../components/table';
import { useCursorPages, useUrlFilters } from '../components/paging';
import { queryKeys } from '../query-keys';

const FILTERS = ['key_prefix', 'operation', 'status', 'since', 'until', 'writes', 'errors'] as const;

export function RequestLogTab({ accountId }: { accountId: string }) {
  const { values, set } = useUrlFilters(FILTERS);
  const keys = useQuery({
    queryKey: queryKeys.keys(accountId),
    queryFn: () => admin('GET', '/admin/api/accounts/{id}/keys', { path: { id: accountId } }).then((r) => r.data),
  });
  const filterKey = JSON.stringify(values);
  const pages = useCursorPages(filterKey);
  const toIso = (local: string) => (local ? new Date(local).toISOString() : '');
  const list = useQuery({
    queryKey: queryKeys.requestLogsPage(accountId, filterKey, pages.cursor),
    queryFn: () =>
      admin('GET', '/admin/api/accounts/{id}/request-logs', {
        path: { id: accountId },
        query: {
          ...values,
          since: toIso(values.since),
          until: toIso(values.until),
          cursor: pages.cursor,
          limit: 50,
          // Sent as the query string has them ("true"); the route reads them as booleans.
          writes: values.writes || undefined,
          errors: values.errors || undefined,
        },
      }),
    refetchInterval: 5_000,
  });
  return (
    <div className="stack">
      <form className="row filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Key">
          <select value={values.key_prefix} onChange={(e) => set('key_prefix', e.target.value)}>
            <option value="">every key</option>
            {keys.data?.map((k) => (
              <option key={k.prefix} value={k.prefix}>
                {k.name} ({k.prefix}…)
              </option>
            ))}
          </select>
        </Field>
        <Field label="Operation">
          <input value={values.operation} onChange={(e) => set('operation', e.target.value)} placeholder="update_order" />
        </Field>
        <Field label="Status">
          <select value={values.status} onChange={(e) => set('status', e.target.value)}>
            <option value="">any</option>
            <option value="2xx">2xx</option>
            <option value="4xx">4xx</option>
            <option value="5xx">5xx</option>
          </select>
        </Field>
        <label className="inline">
          <input type="checkbox" checked={values.writes === 'true'} onChange={(e) => set('writes', e.target.checked ? 'true' : '')} />
          Writes only
        </label>
        <label className="inline">
          <input type="checkbox" checked={values.errors === 'true'} onChange={(e) => set('errors', e.target.checked ? 'true' : '')} />
          Errors only
        </label>
        <Field label="Since">
          <input type="datetime-local" value={values.since} onChange={(e) => set('since', e.target.value)} />
        </Field>
        <Field label="Until">
          <input type="datetime-local" value={values.until} onChange={(e) => set('until', e.target.value)} />
        </Field>
      </form>
      <ErrorNote error={list.error} />
      <Table
        label="Request log"
        empty="No requests match."
        rows={list.data?.data}
        rowKey={(e) => e.id}
        columns={[
          { header: 'At', cell: (e) => <Time at={e.at} /> },
          { header: 'Key', cell: (e) => <code>{e.key_prefix}…</code> },
          {
            header: 'Operation',
            cell: (e) => (
              <>
                <code>{e.operation}</code> <span className="muted">{e.transport}</span>
                {e.dry_run && (
                  <>
                    {' '}
                    <Badge value="dry run" />
                  </>
                )}
                {e.replayed && (
                  <>
                    {' '}
                    <Badge value="replayed" />
                  </>
                )}
              </>
            ),
          },
          {
            header: 'Request',
            cell: (e) => (
              <code className="id">
                {e.method} {e.path}
              </code>
            ),
          },
          {
            header: 'Status',
            cell: (e) => (
              <span className={e.status >= 400 ? 'error-text' : ''}>
                {e.status}
                {e.error_code ? ` ${e.error_code}` : ''}
              </span>
            ),
          },
          { header: 'ms', cell: (e) => e.duration_ms, className: 'num' },
          {
            header: 'Events',
            cell: (e) =>
              e.event_ids.length === 0 ? (
                <span className="muted">none</span>
              ) : (
                <span className="stack-tight">
                  {e.event_ids.map((id) => (
                    <Link key={id} to={`/accounts/${accountId}/events/${id}`} title={id}>
                      <code>{id.slice(0, 8)}</code>
                    </Link>
                  ))}
                </span>
              ),
          },
        ]}
      />
      <Pager pages={pages} list={list.data} />
    </div>
  );
}

/** One event a request committed: its envelope, as webhooks deliver it. */
export function EventDetail({ accountId }: { accountId: string }) {
  const { eventId = '' } = useParams();
  const event = useQuery({
    queryKey: queryKeys.event(eventId),
    queryFn: () => admin('GET', '/admin/api/accounts/{id}/events/{eventId}', { path: { id: accountId, eventId } }).then((r) => r.data),
  });
  return (
    <div className="stack">
      <p>
        <Link to={`/accounts/${accountId}/requests`}>← Request log</Link>
      </p>
      <ErrorNote error={event.error} />
      {event.data && (
        <section className="card stack" aria-label="Event">
          <h2>
            <code>{event.data.event}</code>{' '}
            <span className="muted">
              <Time at={event.data.created_at} />
            </span>
          </h2>
          <Json value={event.data} />
        </section>
      )}
    </div>
  );
}
