// Webhook operations in the console (EXTENSIONS 6): a delivery's attempts,
// a subscription's health, and "Recover..." for a window that failed.
import { useEffect, useState, type ReactNode } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { runOperation } from '../api';
import type { HealthWindow, WebhookDelivery } from '../api-types';
import { Badge, Empty, ErrorNote, Time } from '../components/ui';
import { Dialog } from '../components/dialog';
import { queryKeys } from '../query-keys';

const headerText = (headers: Record<string, string>) =>
  Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');

/** Every attempt of one delivery, oldest first: what was sent and what came back. */
export function AttemptTimeline({ accountId, deliveryId }: { accountId: string; deliveryId: string }) {
  const attempts = useQuery({
    queryKey: queryKeys.deliveryAttempts(deliveryId),
    queryFn: () => runOperation(accountId, 'list_delivery_attempts', { id: deliveryId }).then((r) => r.data),
  });
  if (attempts.error) return <ErrorNote error={attempts.error} />;
  if (attempts.data?.length === 0) return <Empty>No attempt yet.</Empty>;
  return (
    <ol className="timeline compact attempts" aria-label="Attempts">
      {attempts.data?.map((a) => {
        const ok = a.response_status !== null && a.response_status >= 200 && a.response_status < 300;
        return (
          <li key={a.number} className={ok ? 'delivered' : 'failed'} data-testid="attempt">
            <div className="row">
              <strong>#{a.number}</strong> <Badge value={a.trigger} label={a.trigger} />
              <Time at={a.started_at} /> <span className="muted">{a.duration_ms} ms</span>
              {a.response_status !== null ? <code>{a.response_status}</code> : <span className="muted">no answer</span>}
              {a.error && <span className="error-text">{a.error}</span>}
            </div>
            <details>
              <summary>Request headers ({Object.keys(a.request_headers).length})</summary>
              <pre className="json">{headerText(a.request_headers)}</pre>
            </details>
            {a.response_headers && (
              <details>
                <summary>Response headers ({Object.keys(a.response_headers).length})</summary>
                <pre className="json">{headerText(a.response_headers)}</pre>
              </details>
            )}
            {a.response_body && (
              <details>
                <summary>Response body</summary>
                <pre className="json">{a.response_body}</pre>
              </details>
            )}
          </li>
        );
      })}
    </ol>
  );
}

const outcomeClass = (outcome: string) => (/^2\d\d$/.test(outcome) ? 'ok' : /^\d+$/.test(outcome) ? 'warn' : 'bad');

/** Outcomes as a small bar chart: one bar per status code or failure kind. */
function OutcomeBars({ outcomes }: { outcomes: Record<string, number> }) {
  const entries = Object.entries(outcomes).sort(([a], [b]) => a.localeCompare(b));
  const max = Math.max(1, ...entries.map(([, n]) => n));
  if (!entries.length) return <span className="muted">no attempts</span>;
  return (
    <svg className="outcome-bars" width={entries.length * 56} height={76} role="img" aria-label="Outcome chart">
      {entries.map(([outcome, n], i) => {
        const h = Math.max(2, Math.round((n / max) * 40));
        return (
          <g key={outcome} transform={`translate(${i * 56}, 0)`}>
            <rect className={`bar ${outcomeClass(outcome)}`} x={8} y={56 - h} width={40} height={h} rx={3} />
            <text x={28} y={52 - h} textAnchor="middle" className="bar-count">
              {n}
            </text>
            <text x={28} y={70} textAnchor="middle" className="bar-label">
              {outcome.replace('_error', '').replace('connection', 'conn')}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function WindowFacts({ title, w }: { title: string; w: HealthWindow }) {
  return (
    <div className="health-window" data-testid={`health-${title.replace(' ', '-')}`}>
      <h4>{title}</h4>
      <p>
        <strong className="big">{w.success_rate === null ? '—' : `${Math.round(w.success_rate * 1000) / 10}%`}</strong>{' '}
        <span className="muted">success, {w.attempts} attempts</span>
      </p>
      <p className="muted">latency {w.latency_ms ? `p50 ${w.latency_ms.p50} ms · p99 ${w.latency_ms.p99} ms` : '—'}</p>
      <OutcomeBars outcomes={w.outcomes} />
    </div>
  );
}

/** The endpoint's health: success rate and latency over the last hour and day, outcomes by status code, failures in a row. */
export function HealthPanel({ accountId, webhookId }: { accountId: string; webhookId: string }) {
  const health = useQuery({
    queryKey: queryKeys.health(webhookId),
    queryFn: () => runOperation(accountId, 'get_webhook_health', { id: webhookId }).then((r) => r.data),
    refetchInterval: 10_000,
  });
  if (health.error) return <ErrorNote error={health.error} />;
  const h = health.data;
  if (!h) return null;
  return (
    <section className="health stack" aria-label="Endpoint health">
      <div className="row health-facts">
        <span>
          <Badge value={h.consecutive_failures ? 'failed' : 'delivered'} label={`${h.consecutive_failures} failures in a row`} />
        </span>
        <span className="muted">
          last success <Time at={h.last_success_at} />
        </span>
        <span className="muted">
          last failure <Time at={h.last_failure_at} />
        </span>
        <span>{h.pending} pending</span>
        <span>{h.dead} dead</span>
      </div>
      <div className="row health-windows">
        <WindowFacts title="Last hour" w={h.last_hour} />
        <WindowFacts title="Last day" w={h.last_day} />
      </div>
    </section>
  );
}

/**
 * EXTENSIONS 9: the subscription's flow (paused or not, rate, circuit, what is
 * held), a pause/resume switch, a rate field (empty: no limit) and the
 * circuit breaker's switch with the circuit's state (open since, next probe).
 */
export function FlowPanel({ accountId, webhookId, onChange }: { accountId: string; webhookId: string; onChange: () => void }) {
  const queries = useQueryClient();
  const flow = useQuery({
    queryKey: queryKeys.flow(webhookId),
    queryFn: () => runOperation(accountId, 'get_webhook_flow', { id: webhookId }).then((r) => r.data),
    refetchInterval: 10_000,
  });
  const [rate, setRate] = useState<string | null>(null);
  const toggle = useMutation({
    mutationFn: (changes: { paused?: boolean; rate_per_second?: number | null; circuit_breaker?: boolean }) =>
      runOperation(accountId, 'update_webhook_flow', { id: webhookId, ...changes }),
    onSuccess: (r) => queries.setQueryData(queryKeys.flow(webhookId), r.data),
    onSettled: onChange,
  });
  if (flow.error) return <ErrorNote error={flow.error} />;
  const f = flow.data;
  if (!f) return null;
  return (
    <section className="row health-facts" aria-label="Flow">
      <FlowSwitch label="Deliveries paused" checked={f.paused} disabled={toggle.isPending} onChange={(paused) => toggle.mutate({ paused })}>
        <Badge value={f.paused ? 'paused' : 'active'} label={f.paused ? 'paused' : 'sending'} />
      </FlowSwitch>
      {f.paused_at ? (
        <span className="muted">
          since <Time at={f.paused_at} />
        </span>
      ) : null}
      <span data-testid="flow-held">{f.held} held</span>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (rate === null) return;
          toggle.mutate({ rate_per_second: rate.trim() === '' ? null : Number(rate) }, { onSuccess: () => setRate(null) });
        }}
      >
        <label className="row">
          rate
          <input
            type="number"
            min={1}
            max={1000}
            step={1}
            placeholder="no limit"
            aria-label="Rate per second"
            value={rate ?? (f.rate_per_second === null ? '' : String(f.rate_per_second))}
            onChange={(e) => setRate(e.target.value)}
          />
          /s
        </label>
        <button type="submit" className="secondary" disabled={rate === null || toggle.isPending}>
          Set rate
        </button>
      </form>
      <FlowSwitch
        label="Circuit breaker"
        checked={f.circuit_breaker}
        disabled={toggle.isPending}
        onChange={(on) => toggle.mutate({ circuit_breaker: on })}
      >
        {f.circuit === 'open' ? (
          <Badge value="failed" label="circuit open" />
        ) : (
          <span className="muted">circuit {f.circuit_breaker ? 'closed' : 'off'}</span>
        )}
      </FlowSwitch>
      {f.circuit_opened_at ? (
        <span className="muted">
          open since <Time at={f.circuit_opened_at} />
        </span>
      ) : null}
      {f.next_probe_at ? (
        <span className="muted">
          next probe <Time at={f.next_probe_at} />
        </span>
      ) : null}
      {f.retry_after_until ? (
        <span className="muted">
          receiver asked to wait until <Time at={f.retry_after_until} />
        </span>
      ) : null}
      <ErrorNote error={toggle.error} />
    </section>
  );
}

const RECOVERABLE = ['failed', 'dead', 'pending'] as const satisfies readonly WebhookDelivery['status'][];
/** A datetime-local input's value for an instant (local time, minutes). */
const localValue = (date: Date) => new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

/** "Recover...": a window and statuses, the dry-run count, then the recovery's progress and a cancel. */
export function RecoverDialog({ accountId, webhookId, open, onClose }: { accountId: string; webhookId: string; open: boolean; onClose: () => void }) {
  const [since, setSince] = useState(() => localValue(new Date(Date.now() - 86_400_000)));
  // Empty: until now (the service's clock), so that a delivery made this very minute is in the window.
  const [until, setUntil] = useState('');
  const [statuses, setStatuses] = useState<string[]>(['failed', 'dead']);
  const [recoveryId, setRecoveryId] = useState<string | null>(null);
  useEffect(() => {
    if (!open) setRecoveryId(null);
    else setSince(localValue(new Date(Date.now() - 86_400_000)));
  }, [open]);
  const args = { id: webhookId, since: new Date(since).toISOString(), ...(until ? { until: new Date(until).toISOString() } : {}), statuses };
  const valid = statuses.length > 0 && !Number.isNaN(Date.parse(since)) && (until === '' || !Number.isNaN(Date.parse(until)));
  const preview = useQuery({
    queryKey: queryKeys.recoverPreview(webhookId, since, until, statuses),
    queryFn: () => runOperation(accountId, 'recover_webhook_deliveries', { ...args, dry_run: true }),
    enabled: open && valid && !recoveryId,
    retry: false,
  });
  const start = useMutation({
    mutationFn: () => runOperation(accountId, 'recover_webhook_deliveries', args),
    onSuccess: (r) => setRecoveryId(r.data.id),
  });
  const progress = useQuery({
    queryKey: queryKeys.recovery(recoveryId),
    queryFn: () => runOperation(accountId, 'get_recovery', { id: webhookId, recovery_id: recoveryId }).then((r) => r.data),
    enabled: recoveryId !== null,
    refetchInterval: (query) => (query.state.data?.state === 'running' ? 1_000 : false),
  });
  const cancel = useMutation({
    mutationFn: () => runOperation(accountId, 'cancel_recovery', { id: webhookId, recovery_id: recoveryId }),
    onSettled: () => progress.refetch(),
  });
  const r = progress.data;
  return (
    <Dialog title="Recover deliveries" open={open} onClose={onClose}>
      {!recoveryId ? (
        <form className="stack" onSubmit={(e) => (e.preventDefault(), start.mutate())}>
          <p className="muted">
            Sends again, oldest first and each once, every delivery created in the window whose status is checked. It never spends the automatic retry
            schedule.
          </p>
          <div className="row">
            <label>
              From <input type="datetime-local" name="since" value={since} onChange={(e) => setSince(e.target.value)} />
            </label>
            <label>
              To <input type="datetime-local" name="until" value={until} onChange={(e) => setUntil(e.target.value)} />{' '}
              <span className="muted">{until ? '' : '(now)'}</span>
            </label>
          </div>
          <fieldset className="row">
            <legend>Statuses</legend>
            {RECOVERABLE.map((s) => (
              <label key={s}>
                <input
                  type="checkbox"
                  name={`status-${s}`}
                  checked={statuses.includes(s)}
                  onChange={(e) => setStatuses(e.target.checked ? [...statuses, s] : statuses.filter((x) => x !== s))}
                />{' '}
                {s}
              </label>
            ))}
          </fieldset>
          <p data-testid="recover-matched">
            {preview.data ? (
              <>
                <strong>{preview.data.matched}</strong> deliveries would be sent again.
              </>
            ) : preview.isFetching ? (
              'Counting…'
            ) : (
              ''
            )}
          </p>
          <ErrorNote error={preview.error ?? start.error} />
          <div className="row">
            <button type="submit" disabled={!valid || start.isPending || !preview.data?.matched}>
              Start recovery
            </button>
          </div>
        </form>
      ) : (
        <div className="stack" data-testid="recovery-progress">
          <ErrorNote error={progress.error ?? cancel.error} />
          {r && (
            <>
              <p>
                <Badge value={r.state === 'done' ? 'delivered' : r.state === 'running' ? 'pending' : 'failed'} label={r.state} /> {r.attempted} of{' '}
                {r.matched} sent · {r.delivered} delivered · {r.failed} failed
              </p>
              <progress max={Math.max(1, r.matched)} value={r.attempted} aria-label="Recovery progress" />
              <p className="muted">
                started <Time at={r.started_at} />
                {r.finished_at && (
                  <>
                    {' '}
                    · finished <Time at={r.finished_at} />
                  </>
                )}
              </p>
              <div className="row">
                <button type="button" className="danger" disabled={r.state !== 'running' || cancel.isPending} onClick={() => cancel.mutate()}>
                  Cancel recovery
                </button>
                <button type="button" className="secondary" onClick={onClose}>
                  Close
                </button>
              </div>
            </>
          )}
        </div>
      )}
    </Dialog>
  );
}

/** A switch of the flow, with what it shows beside it. */
function FlowSwitch(props: { label: string; checked: boolean; disabled: boolean; onChange: (checked: boolean) => void; children: ReactNode }) {
  return (
    <label className="row">
      <input
        type="checkbox"
        role="switch"
        aria-label={props.label}
        checked={props.checked}
        disabled={props.disabled}
        onChange={(e) => props.onChange(e.target.checked)}
      />
      {props.children}
    </label>
  );
}
