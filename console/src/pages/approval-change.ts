// Issue 41: an approval said in words. An update's dry run holds the target as
// it was when the agent asked (`preview.data`) and the fields it changes with
// their new values (`preview.changes`), so the change is a diff of the two; any
// other write is what it was asked with. The inbox rows and the approval
// screen both read it from here.
import type { Approval } from '../api-types';

export interface FieldChange {
  field: string;
  /** The value when the agent asked; undefined for a write that is not an update. */
  before?: unknown;
  after: unknown;
}

type Preview = { data?: Record<string, unknown>; changes?: Record<string, unknown> } | null;

/** The read that shows an update's target as it is now, and what it is called. */
export const TARGETS: Record<string, { read: 'get_order' | 'get_product' | 'get_webhook'; noun: string }> = {
  update_order: { read: 'get_order', noun: 'order' },
  update_product: { read: 'get_product', noun: 'product' },
  update_webhook: { read: 'get_webhook', noun: 'webhook subscription' },
};

/** The order a write is about (an order's update, a waybill for it), when it names one. */
export function orderIdOf(approval: Approval): string | null {
  const args = approval.arguments as Record<string, unknown>;
  if (approval.operation === 'update_order') return String(args.id);
  return typeof args.order_id === 'string' ? args.order_id : null;
}

/** Field by field: before -> after for an update, the arguments given for any other write. */
export function changesOf(approval: Approval): FieldChange[] {
  const preview = approval.preview as Preview;
  if (preview?.changes && preview.data) {
    return Object.entries(preview.changes).map(([field, after]) => ({ field, before: preview.data![field], after }));
  }
  return Object.entries(approval.arguments as Record<string, unknown>)
    .filter(([field]) => field !== 'id')
    .map(([field, after]) => ({ field, after }));
}

/** The fields of the target that differ now from when the agent asked (updated_at and the like left out). */
export function movedSince(asked: Record<string, unknown> | undefined, now: Record<string, unknown> | undefined): string[] {
  if (!asked || !now) return [];
  return Object.keys(now).filter((field) => !/_at$/.test(field) && canonical(asked[field]) !== canonical(now[field]));
}

/** JSON with keys sorted: a stored view and a built one list an object's keys in different orders. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );

export const fieldName = (field: string) => field.replace(/_/g, ' ');

/** A value as a person reads it: text as is, nothing as a dash, lists and objects short. */
export function say(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.every((v) => typeof v !== 'object') ? value.join(', ') : `${value.length} items`;
  return Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${fieldName(k)} ${say(v)}`)
    .join(', ');
}

/** The operation as a verb phrase: update_order -> "Update order". */
export const operationTitle = (operation: string) => operation.charAt(0).toUpperCase() + operation.slice(1).replace(/_/g, ' ');

/** The change in one line, for the inbox: "status confirmed → shipped; courier — → courier_a". */
export function changeInWords(approval: Approval): string {
  const changes = changesOf(approval);
  // A write that is not an update is said by its first effect ("courier_a creates a waybill (cash on delivery 182.87)").
  if (!changes.some((c) => 'before' in c) && approval.effects.length) return approval.effects[0];
  if (changes.length === 0) return operationTitle(approval.operation);
  return changes
    .map((c) => ('before' in c ? `${fieldName(c.field)} ${say(c.before)} → ${say(c.after)}` : `${fieldName(c.field)} ${say(c.after)}`))
    .join('; ');
}
