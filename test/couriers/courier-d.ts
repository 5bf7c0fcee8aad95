// courier_d: a test-only fourth courier, written the way a real one would be
// (src/couriers/providers/*.ts), to prove that one provider file and one
// registerCourier() line are all a new courier needs. Its "real" endpoint
// is the small HTTP server in courier-d-endpoint.ts that the test runs.
// The protocol: an x-d-key header, JSON, HTTP status codes, grams, state words.
//   POST   /consignments              -> 201 {ref, fee}
//   GET    /consignments/{ref}/label  -> application/pdf
//   DELETE /consignments/{ref}        -> 204 | 409 {problem}
//   GET    /consignments?refs=a,b     -> {items: [{ref, history: [{when, state, text}]}]}
import { courierError, type CourierAccount, type CourierAdapter, type NormalizedStatus } from '../../src/couriers/adapter.ts';
import { failureFor, type CourierHttp } from '../../src/couriers/http.ts';
import type { CourierProvider } from '../../src/couriers/provider.ts';

export const COURIER_D_STATES: Record<string, NormalizedStatus> = {
  booked: 'pending',
  fetched: 'picked_up',
  moving: 'in_transit',
  done: 'delivered',
  void: 'cancelled',
  rejected: 'refused',
  back: 'returned',
};

function createCourierD(http: CourierHttp): CourierAdapter {
  const slug = 'courier_d';
  const call = async (account: CourierAccount, method: string, path: string, body?: unknown) => {
    const res = await http.fetch(path, {
      method,
      headers: { 'x-d-key': String(account.credentials.key ?? ''), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const failure = failureFor(res.status);
    if (failure) throw courierError(slug, failure, `HTTP ${res.status}`);
    return res;
  };
  return {
    slug,
    capabilities: { cancel: true, statusUpdates: 'poll' },
    trackingUrl: (ref) => `https://courier-d.example/t/${encodeURIComponent(ref)}`,
    async createWaybill(account, request) {
      const answer = (
        await call(account, 'POST', '/consignments', {
          reference: request.reference,
          to: { ...request.recipient, office: request.deliveryMode === 'office' ? request.officeId : null },
          grams: request.weightG,
          cod: request.codAmount,
        })
      ).json();
      if (typeof answer.ref !== 'string') throw courierError(slug, 'bad_response', 'no ref in the answer');
      return { trackingNumber: answer.ref, shippingCost: typeof answer.fee === 'number' ? answer.fee : null };
    },
    async cancelWaybill(account, ref) {
      await call(account, 'DELETE', `/consignments/${encodeURIComponent(ref)}`);
    },
    async fetchLabel(account, ref) {
      const res = await call(account, 'GET', `/consignments/${encodeURIComponent(ref)}/label`);
      if (!res.headers.get('content-type')?.includes('application/pdf')) throw courierError(slug, 'bad_response', 'the label is not a PDF');
      return res.body;
    },
    async fetchStatuses(account, refs) {
      const answer = (await call(account, 'GET', `/consignments?refs=${refs.map(encodeURIComponent).join(',')}`)).json();
      return (answer.items ?? []).flatMap((item: any) =>
        (item.history ?? []).map((h: any) => ({
          trackingNumber: item.ref,
          at: new Date(h.when).toISOString(),
          code: h.state,
          label: h.text ?? null,
          status: COURIER_D_STATES[h.state] ?? null,
        })),
      );
    },
  };
}

export const courierD: CourierProvider = {
  slug: 'courier_d',
  urlVariable: 'COURIER_D_URL',
  statuses: Object.entries(COURIER_D_STATES),
  createAdapter: createCourierD,
};
