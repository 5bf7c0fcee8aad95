// Small shared pieces: status badges, times, copy buttons, errors, empty states.
import { useState, type ReactNode } from 'react';
import { ApiError } from '../api';

const TONE: Record<string, string> = {
  delivered: 'ok',
  active: 'ok',
  paid: 'ok',
  ok: 'ok',
  pro: 'info',
  business: 'info',
  pending: 'warn',
  new: 'info',
  confirmed: 'info',
  processing: 'info',
  picked_up: 'info',
  in_transit: 'info',
  shipped: 'info',
  failed: 'bad',
  dead: 'bad',
  cancelled: 'muted',
  refused: 'bad',
  returned: 'muted',
  refunded: 'muted',
  archived: 'muted',
  inactive: 'muted',
  paused: 'warn',
  revoked: 'muted',
  free: 'muted',
  down: 'bad',
  refuse: 'warn',
  low: 'bad',
};

export function Badge({ value, label }: { value: string | null | undefined; label?: string }) {
  if (!value) return <span className="badge muted">none</span>;
  return <span className={`badge ${TONE[value] ?? 'muted'}`}>{label ?? value.replace(/_/g, ' ')}</span>;
}

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = (new Date(iso).getTime() - now) / 1000;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') return relative.format(Math.round(seconds / size), unit);
  }
  return iso;
}

/** A time shown relative ("3 minutes ago") with the exact UTC time on hover. */
export function Time({ at, empty = '—' }: { at: string | null | undefined; empty?: string }) {
  if (!at) return <span className="muted">{empty}</span>;
  return (
    <time dateTime={at} title={new Date(at).toISOString().replace('T', ' ').replace('Z', ' UTC')}>
      {relativeTime(at)}
    </time>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard access needs a secure context; select the text as a fallback.
      const range = document.createRange();
      const node = document.querySelector(`[data-copy="${CSS.escape(text)}"]`);
      if (node) {
        range.selectNodeContents(node);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      }
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <button type="button" className="secondary" onClick={() => void copy()} aria-live="polite">
      {copied ? 'Copied' : label}
    </button>
  );
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof ApiError ? `${error.message} (${error.code}, ${error.status})` : String((error as Error).message ?? error);
  const allowed = error instanceof ApiError ? (error.details as { allowed?: string[] } | undefined)?.allowed : undefined;
  return (
    <p className="error" role="alert">
      {message}
      {allowed && <span className="muted"> Allowed: {allowed.join(', ')}</span>}
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export function Json({ value }: { value: unknown }) {
  return <pre className="json">{typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>;
}

export function Field({ label, children, hint }: { label: string; children: ReactNode; hint?: ReactNode }) {
  return (
    <label className="field">
      <span>{label}</span>
      {children}
      {hint && <small className="muted">{hint}</small>}
    </label>
  );
}

export function money(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toFixed(2);
}
