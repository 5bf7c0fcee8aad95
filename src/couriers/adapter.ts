// The CourierAdapter contract: one interface, one adapter per
// courier in the catalog (catalog.ts), each speaking its own wire protocol over
// HTTP. Adapters normalise requests, answers, statuses and failures; nothing
// outside src/couriers knows a protocol.
import { AppError } from '../platform/contract/errors.ts';

/** A registered courier's slug (catalog.ts holds the list). */
export type CourierSlug = string;
export type NormalizedStatus = 'pending' | 'picked_up' | 'in_transit' | 'delivered' | 'cancelled' | 'refused' | 'returned';

export interface CourierAccount {
  /** The merchant's own credentials from the account's courier integration. */
  credentials: Record<string, unknown>;
  senderOrigin: Record<string, unknown> | null;
  shipmentTerms: Record<string, unknown> | null;
  /** Where and how a pushing courier reports statuses for this integration. */
  push: { url: string; token: string } | null;
}

export interface WaybillRequest {
  reference: string;
  recipient: { name: string | null; phone: string | null; email: string | null; city: string | null; address: string | null; zip: string | null };
  deliveryMode: 'office' | 'home';
  officeId: string | number | null;
  weightG: number;
  dimCm: Record<string, unknown> | null;
  codAmount: number;
  contentLabel: string;
}

export interface Waybill {
  trackingNumber: string;
  shippingCost: number | null;
}

/** A raw courier event, normalised; the raw fields ride along into status_events. */
export interface CourierEvent {
  trackingNumber: string;
  at: string;
  code: string | number | null;
  label: string | null;
  status: NormalizedStatus | null;
}

export interface CourierAdapter {
  readonly slug: CourierSlug;
  readonly capabilities: { cancel: boolean; statusUpdates: 'poll' | 'push' };
  /** The public tracking page of a waybill, for the order's tracking_url. */
  trackingUrl(trackingNumber: string): string;
  createWaybill(account: CourierAccount, request: WaybillRequest): Promise<Waybill>;
  /** Only when capabilities.cancel; resolves when the courier confirmed. */
  cancelWaybill(account: CourierAccount, trackingNumber: string): Promise<void>;
  fetchLabel(account: CourierAccount, trackingNumber: string): Promise<Buffer>;
  /** Polling couriers: every event the courier holds for these waybills. */
  fetchStatuses(account: CourierAccount, trackingNumbers: string[]): Promise<CourierEvent[]>;
}

/** `throttled`: the courier answered 429 (too many requests); like `unavailable` (a 5xx), trying again later may help. */
export type CourierFailure = 'timeout' | 'unavailable' | 'throttled' | 'refused' | 'auth' | 'bad_response' | 'not_supported';

/** 502 courier_error with details.reason and details.detail (SPEC Shipments). */
export function courierError(slug: string, reason: CourierFailure, detail: string): AppError {
  const retryable = reason === 'timeout' || reason === 'unavailable' || reason === 'throttled';
  return new AppError('courier_error', `${slug}: ${reasonText[reason]}`, { reason, detail }, { retryable });
}

const reasonText: Record<CourierFailure, string> = {
  timeout: 'the courier did not answer in time',
  unavailable: 'the courier is unavailable',
  throttled: 'the courier is receiving too many requests',
  refused: 'the courier refused the request',
  auth: 'the courier rejected the integration credentials',
  bad_response: 'the courier answered something unexpected',
  not_supported: 'the courier does not support this',
};
