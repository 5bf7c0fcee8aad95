// Shipment batches (EXTENSIONS 8): create waybills for up to 1,000 orders in
// one request, then wait for the batch to finish.
//   const batch = await createShipmentBatch(merx, orderIds.map((order_id) => ({ order_id })), { idempotencyKey: `ship-${day}` });
//   const done = await waitForBatch(merx, batch.id, { onProgress: (b) => console.log(b.succeeded, '/', b.total) });
import type { MerxClient, Schemas } from './index.js';

export type ShipmentBatch = Schemas['ShipmentBatch'];
export type ShipmentBatchItem = Schemas['ShipmentBatchItem'];
/** One item: exactly the body of `POST /api/v1/shipments`. */
export type ShipmentBatchItemBody = {
  order_id: string;
  courier?: string;
  delivery_mode?: 'office' | 'home';
  office_id?: string | number;
  weight_g?: number;
  dim_cm?: Record<string, number>;
};

/** An error answer of Merx, thrown: `status` and the `{error}` body. */
export class MerxError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    super(error ? `Merx answered ${status} ${error.code}: ${error.message}` : `Merx answered ${status}`);
    this.name = 'MerxError';
    this.status = status;
    this.body = body;
  }
}

export interface CreateBatchOptions {
  /** EXTENSIONS 2: a retry with the same key answers the same batch instead of creating another. */
  idempotencyKey?: string;
}

/**
 * `POST /api/v1/shipment-batches`: the batch, running (202). A refusal of the
 * whole batch (400 naming the first bad item, 429 with two batches running)
 * is thrown as a MerxError; a key whose writes wait for approval gets the
 * approval thrown too (status 202, body `{data: Approval}`), since no batch exists yet.
 */
export async function createShipmentBatch(
  merx: MerxClient,
  items: ShipmentBatchItemBody[],
  options: CreateBatchOptions = {},
): Promise<ShipmentBatch> {
  const headers: Record<string, string> = {};
  if (options.idempotencyKey) headers['Idempotency-Key'] = options.idempotencyKey;
  const { data, error, response } = await merx.POST('/api/v1/shipment-batches', { body: { items }, headers });
  const batch = (data as { data?: ShipmentBatch } | undefined)?.data;
  if (!batch || !('total' in batch)) throw new MerxError(response.status, error ?? data);
  return batch;
}

export interface WaitOptions {
  /** Between two reads (default 1000 ms). */
  intervalMs?: number;
  /** Give up (throwing) after this long (default 10 minutes). */
  timeoutMs?: number;
  /** Each read of the batch while it runs, for a progress bar. */
  onProgress?: (batch: ShipmentBatch) => void;
  signal?: AbortSignal;
}

/** Reads the batch until it has finished (`finished_at` set: done, or cancelled with nothing in flight); returns it. */
export async function waitForBatch(merx: MerxClient, id: string, options: WaitOptions = {}): Promise<ShipmentBatch> {
  const { intervalMs = 1000, timeoutMs = 600_000, onProgress, signal } = options;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { data, error, response } = await merx.GET('/api/v1/shipment-batches/{id}', { params: { path: { id } }, signal });
    if (!data) throw new MerxError(response.status, error);
    if (data.data.finished_at !== null) return data.data;
    onProgress?.(data.data);
    if (Date.now() + intervalMs > until) throw new Error(`shipment batch ${id} has not finished after ${timeoutMs} ms`);
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, intervalMs);
      signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
    });
  }
}
