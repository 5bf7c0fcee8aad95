// courier_a: a JSON REST API with a bearer token, camelCase fields, kilograms,
// HTTP status codes for failures, string status codes, cancel confirmed by
// the courier, statuses polled in batches.
//   POST /v1/shipments            -> 201 {shipmentNumber, price: {amount}}
//   POST /v1/shipments/{n}/cancel -> 200 {cancelled: true} | 409 {error: {code, message}}
//   GET  /v1/shipments/{n}/label  -> application/pdf
//   POST /v1/tracking {shipmentNumbers} -> {results: [{shipmentNumber, events: [{timestamp, statusCode, description}]}]}
import type { CourierAccount, CourierAdapter, CourierEvent, NormalizedStatus, Waybill, WaybillRequest } from '../adapter.ts';
import { courierError } from '../adapter.ts';
import type { CourierProvider } from '../provider.ts';
import { failureFor, type CourierHttp, type CourierResponse } from '../http.ts';

export const COURIER_A_STATUSES: Record<string, NormalizedStatus> = {
  REGISTERED: 'pending',
  COLLECTED: 'picked_up',
  IN_TRANSIT: 'in_transit',
  OUT_FOR_DELIVERY: 'in_transit',
  DELIVERED: 'delivered',
  CANCELLED: 'cancelled',
  REFUSED: 'refused',
  RETURNED: 'returned',
};

export function createCourierA(http: CourierHttp): CourierAdapter {
  const slug = 'courier_a';
  const call = async (account: CourierAccount, method: string, path: string, body?: unknown): Promise<CourierResponse> => {
    const token = String(account.credentials.api_token ?? '');
    const res = await http.fetch(path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json, application/pdf',
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const failure = failureFor(res.status);
    if (failure) {
      const detail = res.headers.get('content-type')?.includes('json') ? (res.json().error?.message ?? `HTTP ${res.status}`) : `HTTP ${res.status}`;
      throw courierError(slug, failure, String(detail));
    }
    return res;
  };

  return {
    slug,
    capabilities: { cancel: true, statusUpdates: 'poll' },
    trackingUrl: (trackingNumber) => `https://tracking.courier-a.example/${encodeURIComponent(trackingNumber)}`,
    async createWaybill(account, request: WaybillRequest): Promise<Waybill> {
      const res = await call(account, 'POST', '/v1/shipments', {
        reference: request.reference,
        sender: account.senderOrigin ?? { mode: 'address' },
        recipient: {
          fullName: request.recipient.name,
          phoneNumber: request.recipient.phone,
          email: request.recipient.email,
          address: { city: request.recipient.city, line1: request.recipient.address, postcode: request.recipient.zip },
        },
        delivery: request.deliveryMode === 'office' ? { type: 'OFFICE', officeCode: String(request.officeId) } : { type: 'DOOR' },
        parcel: { weightKg: request.weightG / 1000, dimensionsCm: request.dimCm, contents: request.contentLabel },
        cashOnDelivery: request.codAmount > 0 ? { amount: request.codAmount } : null,
        terms: account.shipmentTerms,
      });
      const answer = res.json();
      if (typeof answer.shipmentNumber !== 'string') throw courierError(slug, 'bad_response', 'no shipmentNumber in the answer');
      return { trackingNumber: answer.shipmentNumber, shippingCost: typeof answer.price?.amount === 'number' ? answer.price.amount : null };
    },
    async cancelWaybill(account, trackingNumber) {
      const answer = (await call(account, 'POST', `/v1/shipments/${encodeURIComponent(trackingNumber)}/cancel`, {})).json();
      if (answer.cancelled !== true) throw courierError(slug, 'refused', 'the courier did not confirm the cancellation');
    },
    async fetchLabel(account, trackingNumber) {
      const res = await call(account, 'GET', `/v1/shipments/${encodeURIComponent(trackingNumber)}/label`);
      if (!res.headers.get('content-type')?.includes('application/pdf')) throw courierError(slug, 'bad_response', 'the label is not a PDF');
      return res.body;
    },
    async fetchStatuses(account, trackingNumbers): Promise<CourierEvent[]> {
      const answer = (await call(account, 'POST', '/v1/tracking', { shipmentNumbers: trackingNumbers })).json();
      return (answer.results ?? []).flatMap((r: any) =>
        (r.events ?? []).map((e: any) => ({
          trackingNumber: r.shipmentNumber,
          at: new Date(e.timestamp).toISOString(),
          code: e.statusCode,
          label: e.description ?? null,
          status: COURIER_A_STATUSES[e.statusCode] ?? null,
        })),
      );
    },
  };
}

export const courierA: CourierProvider = {
  slug: 'courier_a',
  urlVariable: 'COURIER_A_URL',
  statuses: Object.entries(COURIER_A_STATUSES),
  createAdapter: createCourierA,
};
