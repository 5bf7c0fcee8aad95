// EXTENSIONS 10, connected apps: the OAuth grants a person made for this
// account through /oauth/authorize (claude.ai, ChatGPT, ...), and Revoke.
import { Link } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { admin } from '../api';
import { Badge, ErrorNote, Time } from '../components/ui';
import { Table } from '../components/table';
import { queryKeys } from '../query-keys';

export function ConnectedAppsTab({ accountId }: { accountId: string }) {
  const queries = useQueryClient();
  const apps = useQuery({
    queryKey: queryKeys.connectedApps(accountId),
    queryFn: () => admin('GET', '/admin/api/accounts/{id}/connected-apps', { path: { id: accountId } }).then((r) => r.data),
  });
  const revoke = useMutation({
    mutationFn: (id: string) => admin('POST', '/admin/api/connected-apps/{id}/revoke', { path: { id } }),
    onSuccess: () => queries.invalidateQueries({ queryKey: queryKeys.connectedApps(accountId) }),
  });
  return (
    <div className="stack">
      <p className="muted">
        Apps connected by OAuth (claude.ai, ChatGPT): each acts with the scopes granted on Merx's consent page. Revoke ends its tokens at once; it
        must ask again.
      </p>
      <ErrorNote error={apps.error ?? revoke.error} />
      <Table
        label="Connected apps"
        empty="No connected apps."
        rows={apps.data}
        rowKey={(a) => a.id}
        columns={[
          { header: 'Client', cell: (a) => <strong title={a.client_id}>{a.client_name}</strong> },
          { header: 'Scopes', cell: (a) => <span className="scopes">{a.scopes.join(' ')}</span> },
          { header: 'Writes', cell: (a) => (a.writes === 'approval' ? <Badge value="approval" /> : <span className="muted">direct</span>) },
          { header: 'Log', cell: (a) => <Link to={`/accounts/${accountId}/requests?key_prefix=${a.key_prefix}`}>requests</Link> },
          { header: 'Created', cell: (a) => <Time at={a.created_at} /> },
          { header: 'Last used', cell: (a) => <Time at={a.last_used_at} empty="never" /> },
          {
            header: '',
            cell: (a) => (
              <button
                type="button"
                className="danger small"
                onClick={() => confirm(`Revoke ${a.client_name}? Its tokens stop working at once.`) && revoke.mutate(a.id)}
              >
                Revoke
              </button>
            ),
          },
        ]}
      />
    </div>
  );
}
