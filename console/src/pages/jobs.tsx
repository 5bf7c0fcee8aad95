// Scheduled jobs, run on demand: optionally as if the clock read another time.
import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { admin } from '../api';
import type { OperatorAnswer } from '../api-types';
import { useServiceInfo } from '../service-info';
import { ErrorNote, Time } from '../components/ui';

const ABOUT: Record<string, string> = {
  'webhook-deliveries': 'Sends webhook attempts that are due (every minute on its own).',
  'courier-poll': 'Asks courier_a and courier_b for status changes (every 15 minutes).',
  'low-stock': 'Emits inventory.low_stock once per product per UTC day (hourly).',
  retention:
    'Deletes events older than 30 days (the events feed then says cursor_expired to cursors before them), expired idempotency keys and old retired webhook secrets (hourly).',
};

/** A run this page started: what the job answered, when, and the clock it was given. */
type Run = OperatorAnswer<'POST', '/admin/api/jobs/{name}/run'>['data'] & { at: string; now?: string };

export function JobsPage() {
  const info = useServiceInfo();
  const [now, setNow] = useState('');
  const [runs, setRuns] = useState<Run[]>([]);
  const run = useMutation({
    mutationFn: (job: string) =>
      admin('POST', '/admin/api/jobs/{name}/run', { path: { name: job }, body: now ? { now: new Date(now).toISOString() } : {} }),
    onSuccess: (r) => setRuns((list) => [{ ...r.data, at: new Date().toISOString(), now: now || undefined }, ...list].slice(0, 20)),
  });
  return (
    <section className="stack">
      <h1>Jobs</h1>
      <label className="compact">
        Run as if the clock read
        <input type="datetime-local" value={now} onChange={(e) => setNow(e.target.value)} />
        <span className="muted">(empty: now)</span>
      </label>
      <div className="grid three">
        {info.data?.jobs.map((job) => (
          <article key={job} className="card stack">
            <h2>{job}</h2>
            <p className="muted">{ABOUT[job] ?? ''}</p>
            <button type="button" onClick={() => run.mutate(job)} disabled={run.isPending}>
              Run {job} now
            </button>
          </article>
        ))}
      </div>
      <ErrorNote error={run.error} />
      {runs.length > 0 && (
        <ol className="timeline compact" aria-label="Runs">
          {runs.map((r, i) => (
            <li key={i}>
              <Time at={r.at} /> <strong>{r.job}</strong> processed {r.processed}
              {r.now && <span className="muted"> (as of {r.now})</span>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
