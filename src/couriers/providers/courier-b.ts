// courier_b: API key and client id headers, snake_case fields, grams and COD
// in cents, every answer HTTP 200 with {ok, error} in the body, numeric
// status codes with Unix-second timestamps, cancel confirmed, statuses polled.
//   POST   /api/waybill/create   -> {ok: true, waybill: {awb, price_cents}} | {ok: false, error}
//   DELETE /api/waybill/{awb}    -> {ok: true}
//   GET    /api/waybill/{awb}/pdf -> application/pdf
//   GET    /api/tracking?awb=a,b  -> {ok: true, items: [{awb, history: [{ts, code, text}]}]}
import type { CourierAccount, CourierAdapter, CourierEvent, NormalizedStatus, Waybill } from '../adapter.ts';
import { courierError } from '../adapter.ts';
import type { CourierProvider } from '../provider.ts';
import { failureFor, type CourierHttp, type CourierResponse } from '../http.ts';

export const COURIER_B_STATUSES: Record<number, NormalizedStatus> = {
  10: 'pending',
  20: 'picked_up',
  30: 'in_transit',
  40: 'delivered',
  50: 'refused',
  60: 'returned',
  90: 'cancelled',
};

export function createCourierB(http: CourierHttp): CourierAdapter {
  const slug = 'courier_b';
  const call = async (account: CourierAccount, method: string, path: string, body?: unknown): Promise<CourierResponse> => {
    const res = await http.fetch(path, {
      method,
      headers: {
        'x-api-key': String(account.credentials.api_key ?? ''),
        'x-client-id': String(account.credentials.client_id ?? ''),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const failure = failureFor(res.status);
    if (failure) throw courierError(slug, failure, `HTTP ${res.status}`);
    return res;
  };
  const ok = (res: CourierResponse) => {
    if (res.headers.get('content-type')?.includes('application/pdf')) return null;
    const answer = res.json();
    if (answer.ok !== true) {
      const error = String(answer.error ?? 'unknown error');
      throw courierError(slug, /credential|api key|client/i.test(error) ? 'auth' : 'refused', error);
    }
    return answer;
  };

  return {
    slug,
    capabilities: { cancel: true, statusUpdates: 'poll' },
    trackingUrl: (trackingNumber) => `https://courier-b.example/track?awb=${encodeURIComponent(trackingNumber)}`,
    async createWaybill(account, request): Promise<Waybill> {
      const answer = ok(
        await call(account, 'POST', '/api/waybill/create', {
          client_ref: request.reference,
          receiver_name: request.recipient.name,
          receiver_phone: request.recipient.phone,
          receiver_city: request.recipient.city,
          receiver_street: request.recipient.address,
          receiver_postcode: request.recipient.zip,
          service: request.deliveryMode === 'office' ? 'to_office' : 'to_address',
          office_id: request.deliveryMode === 'office' ? request.officeId : null,
          weight_grams: request.weightG,
          cod_cents: Math.round(request.codAmount * 100),
          description: request.contentLabel,
          pickup: account.senderOrigin,
          options: account.shipmentTerms,
        }),
      );
      const awb = answer?.waybill?.awb;
      if (typeof awb !== 'string') throw courierError(slug, 'bad_response', 'no awb in the answer');
      return { trackingNumber: awb, shippingCost: typeof answer.waybill.price_cents === 'number' ? answer.waybill.price_cents / 100 : null };
    },
    async cancelWaybill(account, trackingNumber) {
      ok(await call(account, 'DELETE', `/api/waybill/${encodeURIComponent(trackingNumber)}`));
    },
    async fetchLabel(account, trackingNumber) {
      const res = await call(account, 'GET', `/api/waybill/${encodeURIComponent(trackingNumber)}/pdf`);
      ok(res);
      return res.body;
    },
    async fetchStatuses(account, trackingNumbers): Promise<CourierEvent[]> {
      const answer = ok(await call(account, 'GET', `/api/tracking?awb=${trackingNumbers.map(encodeURIComponent).join(',')}`));
      return (answer?.items ?? []).flatMap((item: any) =>
        (item.history ?? []).map((h: any) => ({
          trackingNumber: item.awb,
          at: new Date(Number(h.ts) * 1000).toISOString(),
          code: Number(h.code),
          label: h.text ?? null,
          status: COURIER_B_STATUSES[Number(h.code)] ?? null,
        })),
      );
    },
  };
}

export const courierB: CourierProvider = {
  slug: 'courier_b',
  urlVariable: 'COURIER_B_URL',
  statuses: Object.entries(COURIER_B_STATUSES).map(([code, status]) => [Number(code), status] as const),
  createAdapter: createCourierB,
};
