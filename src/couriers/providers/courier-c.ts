// courier_c: HTTP Basic auth, "parcel" vocabulary with barcodes, lower-case
// state words, no cancel API, and statuses pushed to a notify_url given at
// creation with a per-integration token.
//   POST /parcels                    -> 201 {parcel: {barcode, tariff}}  (body carries notify_url, notify_token)
//   GET  /parcels/{barcode}/sticker  -> application/pdf
//   push: POST <notify_url>  Authorization: Token <notify_token>  {barcode, events: [{occurred_at, state, note}]}
import type { CourierAccount, CourierAdapter, CourierEvent, NormalizedStatus, Waybill } from '../adapter.ts';
import { courierError } from '../adapter.ts';
import type { CourierProvider, CourierPush } from '../provider.ts';
import { AppError } from '../../platform/contract/errors.ts';
import { isSupportedInstant } from '../../platform/contract/dates.ts';
import { failureFor, type CourierHttp, type CourierResponse } from '../http.ts';

export const COURIER_C_STATES: Record<string, NormalizedStatus> = {
  accepted: 'pending',
  collected: 'picked_up',
  on_the_way: 'in_transit',
  handed_over: 'delivered',
  declined_by_recipient: 'refused',
  back_to_sender: 'returned',
  voided: 'cancelled',
};

/** Normalises one pushed courier_c event. */
function courierCEvent(barcode: string, e: { occurred_at: string; state: string; note?: string | null }): CourierEvent {
  return {
    trackingNumber: barcode,
    at: new Date(e.occurred_at).toISOString(),
    code: e.state,
    label: e.note ?? null,
    status: COURIER_C_STATES[e.state] ?? null,
  };
}

/** courier_c reports with `Authorization: Token <notify_token>` and {barcode, events: [{occurred_at, state, note}]}. */
const courierCPush: CourierPush = {
  token(headers) {
    const match = /^Token ([A-Za-z0-9]+)$/.exec(String(headers.authorization ?? ''));
    return match ? match[1] : null;
  },
  read(report) {
    const body = report as { barcode?: unknown; events?: unknown } | undefined;
    if (typeof body?.barcode !== 'string' || !Array.isArray(body.events)) {
      throw new AppError('validation_failed', 'expected {barcode, events: [{occurred_at, state, note}]}');
    }
    const events: CourierEvent[] = [];
    for (const e of body.events as Array<Record<string, unknown>>) {
      if (typeof e?.occurred_at !== 'string' || !isSupportedInstant(Date.parse(e.occurred_at)) || typeof e.state !== 'string') {
        throw new AppError('validation_failed', 'each event needs occurred_at (ISO 8601, years 0001-9999) and state');
      }
      events.push(courierCEvent(body.barcode, e as { occurred_at: string; state: string; note?: string }));
    }
    return { trackingNumber: body.barcode, events };
  },
};

export function createCourierC(http: CourierHttp): CourierAdapter {
  const slug = 'courier_c';
  const call = async (account: CourierAccount, method: string, path: string, body?: unknown): Promise<CourierResponse> => {
    const basic = Buffer.from(`${account.credentials.username ?? ''}:${account.credentials.password ?? ''}`).toString('base64');
    const res = await http.fetch(path, {
      method,
      headers: { authorization: `Basic ${basic}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const failure = failureFor(res.status);
    if (failure) {
      const detail = res.headers.get('content-type')?.includes('json') ? (res.json().message ?? `HTTP ${res.status}`) : `HTTP ${res.status}`;
      throw courierError(slug, failure, String(detail));
    }
    return res;
  };

  return {
    slug,
    capabilities: { cancel: false, statusUpdates: 'push' },
    trackingUrl: (trackingNumber) => `https://courier-c.example/parcels/${encodeURIComponent(trackingNumber)}`,
    async createWaybill(account, request): Promise<Waybill> {
      const answer = (
        await call(account, 'POST', '/parcels', {
          sender_ref: request.reference,
          consignee: {
            name: request.recipient.name,
            phone: request.recipient.phone,
            town: request.recipient.city,
            street: request.recipient.address,
            postal_code: request.recipient.zip,
          },
          delivery_point: request.deliveryMode === 'office' ? { kind: 'depot', depot_id: request.officeId } : { kind: 'door' },
          mass_kg: request.weightG / 1000,
          cash_on_delivery: request.codAmount,
          contents: request.contentLabel,
          notify_url: account.push?.url ?? null,
          notify_token: account.push?.token ?? null,
        })
      ).json();
      if (typeof answer.parcel?.barcode !== 'string') throw courierError(slug, 'bad_response', 'no barcode in the answer');
      return { trackingNumber: answer.parcel.barcode, shippingCost: typeof answer.parcel.tariff === 'number' ? answer.parcel.tariff : null };
    },
    async cancelWaybill() {
      throw courierError(slug, 'not_supported', 'courier_c has no cancel API');
    },
    async fetchLabel(account, trackingNumber) {
      const res = await call(account, 'GET', `/parcels/${encodeURIComponent(trackingNumber)}/sticker`);
      if (!res.headers.get('content-type')?.includes('application/pdf')) throw courierError(slug, 'bad_response', 'the sticker is not a PDF');
      return res.body;
    },
    async fetchStatuses() {
      return []; // statuses arrive by push
    },
  };
}

export const courierC: CourierProvider = {
  slug: 'courier_c',
  urlVariable: 'COURIER_C_URL',
  statuses: Object.entries(COURIER_C_STATES),
  createAdapter: createCourierC,
  push: courierCPush,
};
