// What an operation answered, said in words (issue 41: the console showed the
// raw JSON after recording stock, in the shipment preview and after a cancel).
// Each answer's shape is the operation's REST body.
import { useEffect, useState, type ReactNode } from 'react';
import { money } from './ui';

/** A delivery mode with its office: "office 104" or "to the door" (never "office office 104"). */
export function deliveryWords(mode: string | null | undefined, officeId: unknown): string {
  if (mode === 'office') return officeId ? `office ${officeId}` : 'an office';
  if (mode === 'home') return 'to the door';
  return mode ?? '—';
}

/** The same in a sentence: "delivered to office 104", "delivered to the door". */
export const deliveredTo = (mode: string | null | undefined, officeId: unknown) =>
  `delivered ${mode === 'office' ? 'to ' : ''}${deliveryWords(mode, officeId)}`;

export function Said({ children, tone = 'ok' }: { children: ReactNode; tone?: 'ok' | 'preview' }) {
  return (
    <p className={`said ${tone}`} role="status">
      {children}
    </p>
  );
}

interface WaybillPreview {
  courier: string;
  delivery_mode: string;
  office_id?: unknown;
  weight_g?: number | null;
  cod_amount?: number | null;
  content_label?: string | null;
  shipment_terms?: { cod_type?: string; open_before?: string; refusal_payer?: string } | null;
}

/** create_shipment's dry run: the waybill the courier would be asked for. */
export function waybillPreviewWords(p: WaybillPreview): string {
  const parts = [`${p.courier} would create a waybill, ${deliveredTo(p.delivery_mode, p.office_id)}`];
  if (p.weight_g) parts.push(`${p.weight_g} g`);
  parts.push(p.cod_amount ? `cash on delivery ${money(p.cod_amount)}` : 'no cash on delivery');
  if (p.content_label) parts.push(`contents “${p.content_label}”`);
  const terms = p.shipment_terms;
  if (terms?.open_before && terms.open_before !== 'none') parts.push(`the recipient may ${terms.open_before.replace(/_/g, ' ')} before paying`);
  if (terms?.refusal_payer) parts.push(`a refusal is paid by the ${terms.refusal_payer}`);
  return `${parts.join(', ')}. Nothing was sent to the courier.`;
}

/** Seconds since `running` turned true, counted while it stays true. */
export function useElapsed(running: boolean): number {
  const [seconds, setSeconds] = useState(0);
  useEffect(() => {
    if (!running) return;
    setSeconds(0);
    const started = Date.now();
    const timer = setInterval(() => setSeconds(Math.floor((Date.now() - started) / 1000)), 250);
    return () => clearInterval(timer);
  }, [running]);
  return running ? seconds : 0;
}

/**
 * A courier call in progress (issue 41: a call that takes 10 s showed nothing):
 * who is being called, for how long so far, against the 10 s the service waits.
 */
export function CourierProgress({ courier, running, what }: { courier: string; running: boolean; what: string }) {
  const seconds = useElapsed(running);
  if (!running) return null;
  return (
    <div className="progress" role="status" aria-label="Courier call">
      <span className="spinner" aria-hidden="true" />
      <span>
        {what} at {courier}…{' '}
        {seconds > 0 && (
          <span className="muted">
            {seconds} s{seconds >= 3 ? ' (a slow courier: Merx waits for it up to its timeout, 10 s by default)' : ''}
          </span>
        )}
      </span>
      <progress max={10} value={Math.min(seconds, 10)} />
    </div>
  );
}
