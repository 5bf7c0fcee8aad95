// API keys: issue with a preset or custom scopes (the key is shown once, with
// a copy button), see prefix, scopes and last use, revoke at once.
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { admin } from '../api';
import type { Key, OperatorAnswer, OperatorInput } from '../api-types';
import { useServiceInfo } from '../service-info';
import { Badge, CopyButton, ErrorNote, Field, Time } from '../components/ui';
import { Table } from '../components/table';
import { Dialog } from '../components/dialog';
import { queryKeys } from '../query-keys';

/** The key as issued: shown once, in full. */
type IssuedKey = OperatorAnswer<'POST', '/admin/api/accounts/{id}/keys'>;
/** Its scopes and presets are the names GET /admin/api/info lists as text; the route checks them again. */
type KeyRequest = OperatorInput<'POST', '/admin/api/accounts/{id}/keys'>['body'];

export function KeysTab({ accountId }: { accountId: string }) {
  const queries = useQueryClient();
  const keys = useQuery({
    queryKey: queryKeys.keys(accountId),
    queryFn: () => admin('GET', '/admin/api/accounts/{id}/keys', { path: { id: accountId } }).then((r) => r.data),
  });
  const [issued, setIssued] = useState<IssuedKey | null>(null);
  const revoke = useMutation({
    mutationFn: (id: string) => admin('DELETE', '/admin/api/keys/{id}', { path: { id } }),
    onSuccess: () => queries.invalidateQueries({ queryKey: queryKeys.keys(accountId) }),
  });
  const active = keys.data?.filter((k) => !k.revoked_at).length ?? 0;
  const presets = useServiceInfo().data?.presets ?? {};
  return (
    <div className="grid two keys">
      <div className="stack">
        <p className="muted">{active} of 10 active keys. A key is shown once, when it is issued; lists show its prefix.</p>
        <ErrorNote error={keys.error ?? revoke.error} />
        <Table
          label="API keys"
          empty="No keys yet."
          rows={keys.data && [...keys.data].reverse()}
          rowKey={(k) => k.id}
          columns={[
            { header: 'Name', cell: (k) => <strong className="key-name">{k.name}</strong> },
            { header: 'Prefix', cell: (k) => <code>{k.prefix}…</code> },
            { header: 'Scopes', cell: (k) => <Scopes scopes={k.scopes} presets={presets} /> },
            { header: 'Writes', cell: (k) => (k.writes === 'approval' ? <Badge value="approval" /> : <span className="muted">direct</span>) },
            { header: 'Log', cell: (k) => <Link to={`/accounts/${accountId}/requests?key_prefix=${k.prefix}`}>requests</Link> },
            {
              header: 'Last used',
              cell: (k) => (
                <span className="nowrap">
                  <Time at={k.last_used_at} empty="never" />
                </span>
              ),
            },
            {
              header: 'Created',
              cell: (k) => (
                <span className="nowrap">
                  <Time at={k.created_at} />
                </span>
              ),
            },
            {
              header: 'Expires',
              cell: (k) => (
                <span className="nowrap">
                  <Time at={k.expires_at} empty="never" />
                </span>
              ),
            },
            {
              header: '',
              cell: (k) =>
                k.revoked_at ? (
                  <Badge value="revoked" />
                ) : k.expires_at && Date.parse(k.expires_at) <= Date.now() ? (
                  <Badge value="expired" />
                ) : (
                  <button
                    type="button"
                    className="danger small"
                    onClick={() => confirm(`Revoke ${k.name} (${k.prefix}…)? It stops working at once.`) && revoke.mutate(k.id)}
                  >
                    Revoke
                  </button>
                ),
            },
          ]}
        />
      </div>
      <IssueKey accountId={accountId} onIssued={setIssued} />
      <Dialog title="Your new API key" open={!!issued} onClose={() => setIssued(null)}>
        {issued && (
          <div className="stack">
            <p>This is the only time the full key is shown. Copy it now and keep it secret.</p>
            <div className="secret">
              <code data-copy={issued.key} data-testid="issued-key">
                {issued.key}
              </code>
              <CopyButton text={issued.key} />
            </div>
            <p className="muted">Scopes: {issued.data.scopes.join(', ')}</p>
            {issued.data.expires_at && (
              <p className="muted">
                Expires <Time at={issued.data.expires_at} />.
              </p>
            )}
            <button type="button" onClick={() => setIssued(null)}>
              I have stored it
            </button>
          </div>
        )}
      </Dialog>
    </div>
  );
}

/**
 * A key's scopes in a line or two (issue 41: one per line, they took nine): the
 * preset's name when they are exactly one, else each resource with read, write
 * or both; every scope on hover.
 */
function Scopes({ scopes, presets }: { scopes: readonly string[]; presets: Record<string, readonly string[]> }) {
  const sorted = [...scopes].sort().join(' ');
  const preset = Object.entries(presets).find(([, list]) => [...list].sort().join(' ') === sorted)?.[0];
  const access = new Map<string, string[]>();
  for (const scope of scopes) {
    const [resource, verb] = scope.includes(':') ? scope.split(':') : [scope, ''];
    access.set(resource, [...(access.get(resource) ?? []), verb]);
  }
  const parts = [...access].map(([resource, verbs]) =>
    verbs.includes('') ? resource : `${resource} ${verbs.includes('read') && verbs.includes('write') ? 'read/write' : verbs.join('/')}`,
  );
  return (
    <span className="scopes" title={scopes.join(' ')}>
      {preset ? (
        <span className="nowrap">
          <strong>{preset}</strong> preset
        </span>
      ) : (
        parts.map((part, i) => (
          <span key={part}>
            {i > 0 && ' · '}
            <span className="nowrap">{part}</span>
          </span>
        ))
      )}
    </span>
  );
}

const DAY_MS = 86_400_000;
/** Lifetimes offered at issue (days); the operator API takes any future expires_at. */
const LIFETIMES: Array<[string, string]> = [
  ['never', 'never'],
  ['1', 'in 1 day'],
  ['7', 'in 7 days'],
  ['30', 'in 30 days'],
  ['90', 'in 90 days'],
  ['365', 'in 1 year'],
];

function IssueKey({ accountId, onIssued }: { accountId: string; onIssued: (issued: IssuedKey) => void }) {
  const info = useServiceInfo();
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [preset, setPreset] = useState('fulfilment');
  const [custom, setCustom] = useState<string[]>([]);
  const [writes, setWrites] = useState<Key['writes']>('direct');
  const [lifetime, setLifetime] = useState('never');
  const issue = useMutation({
    mutationFn: () => {
      // The expiry is counted from the moment the operator presses the button.
      const expires_at = lifetime === 'never' ? undefined : new Date(Date.now() + Number(lifetime) * DAY_MS).toISOString();
      const scopes = preset === 'custom' ? { scopes: custom as KeyRequest['scopes'] } : { preset: preset as KeyRequest['preset'] };
      return admin('POST', '/admin/api/accounts/{id}/keys', { path: { id: accountId }, body: { name, ...scopes, writes, expires_at } });
    },
    onSuccess: (r) => {
      void queries.invalidateQueries({ queryKey: queryKeys.keys(accountId) });
      setName('');
      onIssued(r);
    },
  });
  const presets = info.data?.presets ?? {};
  const submit = (e: FormEvent) => {
    e.preventDefault();
    issue.mutate();
  };
  return (
    <form className="card stack" onSubmit={submit} aria-label="Issue a key">
      <h2>Issue a key</h2>
      <Field label="Name" hint="Who uses it: “warehouse ERP”, “claude”.">
        <input required value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />
      </Field>
      <Field label="Scopes">
        <select value={preset} onChange={(e) => setPreset(e.target.value)}>
          {Object.keys(presets).map((p) => (
            <option key={p} value={p}>
              {p.replace('_', ' ')} preset
            </option>
          ))}
          <option value="custom">custom…</option>
        </select>
      </Field>
      {preset !== 'custom' && <p className="scopes muted">{presets[preset]?.join(' ')}</p>}
      {preset === 'custom' && (
        <fieldset className="checks">
          <legend>Custom scopes</legend>
          {info.data?.scopes.map((scope) => (
            <label key={scope}>
              <input
                type="checkbox"
                checked={custom.includes(scope)}
                onChange={(e) => setCustom(e.target.checked ? [...custom, scope] : custom.filter((s) => s !== scope))}
              />
              {scope}
            </label>
          ))}
        </fieldset>
      )}
      <Field label="Writes" hint="Approval: every write (not a dry run) waits in the Approvals tab for a person; for AI agents.">
        <select value={writes} onChange={(e) => setWrites(e.target.value as Key['writes'])} aria-label="Writes">
          <option value="direct">direct: writes happen at once</option>
          <option value="approval">approval: a person approves each write</option>
        </select>
      </Field>
      <Field label="Expires" hint="After this the key answers 401 saying it expired.">
        <select value={lifetime} onChange={(e) => setLifetime(e.target.value)} aria-label="Expires">
          {LIFETIMES.map(([days, label]) => (
            <option key={days} value={days}>
              {label}
            </option>
          ))}
        </select>
      </Field>
      <ErrorNote error={issue.error} />
      <button type="submit" disabled={issue.isPending || !name || (preset === 'custom' && custom.length === 0)}>
        Issue key
      </button>
    </form>
  );
}
